"""OCR of screenshots with tesseract: words and lines with boxes and confidence.

The image is read in grey levels, never binarised by us (tesseract's own thresholding sees the
anti-aliased text), upscaled so that UI text (11-14 px) is read at the height tesseract is good
at, and cut into overlapping tiles read in parallel: a 4K screenshot is never one huge page.
Words seen twice in an overlap are kept once. A second pass reads a contrast map (each pixel's
distance from its neighbourhood's median, dark on white whatever the polarity: light text on
dark or coloured buttons), and where both passes read a word the surer reading is kept. Results are cached per image content, in memory
and, given ``cache_dir``, on disk, so the second instruction on a screenshot costs no OCR.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.deps import require_extra, require_tool
from lemmata.gui.boxes import Box, overlap_of_smaller, share_inside
from lemmata.gui.image import image_key

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["OcrEngine", "OcrResult", "Word", "button_boxes", "trim_glued_icons"]

# characters that are icons misread, not text, when they open or close a word
_EDGE = "©®@&|[](){}<>«»*#%$^~`'\"_=+\\/—–-:;,.!?"
_Raw = tuple[str, Box, float, tuple[int, int, int]]  # text, box, confidence, tesseract line
_VERSION = 5  # of the reading procedure: part of the cache key, so old readings are not reused


@dataclass(frozen=True)
class Word:
    """One word (``line`` numbers the line it belongs to); ``box`` is x1, y1, x2, y2 in image
    pixels, ``conf`` tesseract's confidence in [0, 1]."""

    text: str
    box: Box
    conf: float
    line: int


@dataclass
class OcrResult:
    words: list[Word]
    _lines: list[list[Word]] | None = field(default=None, init=False, repr=False, compare=False)

    def lines(self) -> list[list[Word]]:
        """The words grouped by line, left to right. Two of the reader's lines that sit on one
        row and meet or interleave there are one line: a label split between passes or blocks
        ("View" and "SQL" read in one, "and edit" in the other) is read whole."""
        if self._lines is not None:
            return [list(line) for line in self._lines]
        by: dict[int, list[Word]] = {}
        for w in self.words:
            by.setdefault(w.line, []).append(w)
        groups = [sorted(ws, key=lambda w: w.box[0]) for _, ws in sorted(by.items())]
        merged = True
        while merged:
            merged = False
            for i in range(len(groups)):
                for j in range(i + 1, len(groups)):
                    if _one_line(groups[i], groups[j]):
                        groups[i] = sorted(groups[i] + groups[j], key=lambda w: w.box[0])
                        del groups[j]
                        merged = True
                        break
                if merged:
                    break
        self._lines = groups
        return [list(line) for line in groups]


def _one_line(a: list[Word], b: list[Word]) -> bool:
    """Whether two lines of words are parts of one: on the same row (their heights alike and
    overlapping by most of the smaller), and meeting within a word space (three quarters of the
    height) or interleaving."""
    ay1, ay2 = min(w.box[1] for w in a), max(w.box[3] for w in a)
    by1, by2 = min(w.box[1] for w in b), max(w.box[3] for w in b)
    ha, hb = ay2 - ay1, by2 - by1
    if min(ha, hb) <= 0 or max(ha, hb) > 1.5 * min(ha, hb):
        return False
    if min(ay2, by2) - max(ay1, by1) < 0.6 * min(ha, hb):
        return False
    ax1, ax2 = min(w.box[0] for w in a), max(w.box[2] for w in a)
    bx1, bx2 = min(w.box[0] for w in b), max(w.box[2] for w in b)
    gap = max(ax1, bx1) - min(ax2, bx2)
    return gap <= 0.75 * min(ha, hb)


class OcrEngine:
    """Tesseract through pytesseract (``--psm 11``: sparse text, as on screens).

    ``scale`` fixes the upscaling (None: chosen per image, see ``_run``); ``tile`` the tile
    side in upscaled pixels; ``second_pass`` adds the contrast-map reading.
    """

    def __init__(
        self,
        *,
        lang: str = "eng",
        scale: float | None = None,
        tile: int = 1600,
        overlap: int = 96,
        workers: int = 2,
        min_conf: float = 0.1,
        second_pass: bool = True,
        cache_dir: str | Path | None = None,
        cache_size: int = 32,
    ) -> None:
        require_extra("gui", "OCR for GUI grounding")
        self.tesseract = require_tool("tesseract")
        # One OpenMP thread per tesseract process: the tile pool already runs ``workers``.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        self.lang, self.scale, self.tile, self.overlap = lang, scale, tile, overlap
        self.workers, self.min_conf, self.second_pass = workers, min_conf, second_pass
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._cache: OrderedDict[str, OcrResult] = OrderedDict()
        self._cache_size = cache_size
        self.calls = 0  # OCR runs actually made (cache misses)

    def read(self, image: PILImage.Image) -> OcrResult:
        """The words of ``image``, from the cache when this content was read before."""
        key = (
            f"{image_key(image)}-{self.lang}-s{self.scale}-t{self.tile}-o{self.overlap}"
            f"-c{self.min_conf}-p{int(self.second_pass)}-v{_VERSION}"
        )
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        result = self._load(key)
        if result is None:
            result = self._run(image)
            self._store(key, result)
        result = trim_glued_icons(image, result)  # on every reading: the disk keeps tesseract's
        result = self._reread_buttons(image, result)
        self._cache[key] = result
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return result

    def _reread_buttons(self, image: PILImage.Image, result: OcrResult) -> OcrResult:
        """``result`` with the label of each button read unsurely (a word under 0.8) or not at
        all read again as one line of text (``--psm 7`` at 2x), which reads short labels on
        plates and in outlines ("Run SQL", "Format SQL", "Apply") that the sparse reading of
        the whole screen loses or misreads; the new words replace the old where they are all
        surer than every old one."""
        import pytesseract
        from PIL import Image

        inside = [
            (b, [w for w in result.words if share_inside(w.box, b) > 0.6])
            for b in button_boxes(image)
        ]
        plates = [b for b, ws in inside if not ws or any(w.conf < 0.8 for w in ws)][:_MAX_REREAD]
        if not plates:
            return result
        pytesseract.pytesseract.tesseract_cmd = self.tesseract
        grey = image.convert("L")
        words = list(result.words)
        line = max((w.line for w in words), default=0) + 1
        for b in plates:
            crop = grey.crop((round(b[0]), round(b[1]), round(b[2]), round(b[3])))
            crop = crop.resize((crop.width * 2, crop.height * 2), Image.Resampling.LANCZOS)
            data = pytesseract.image_to_data(
                crop, lang=self.lang, config="--psm 7", output_type=pytesseract.Output.DICT
            )
            new = []
            for i, text in enumerate(data["text"]):
                core = text.strip().strip(_EDGE)
                conf = float(data["conf"][i]) / 100.0
                if not core or conf < self.min_conf:
                    continue
                x, y = b[0] + data["left"][i] / 2, b[1] + data["top"][i] / 2
                box = (x, y, x + data["width"][i] / 2, y + data["height"][i] / 2)
                new.append(Word(core, box, conf, line))
            old = [w for w in words if share_inside(w.box, b) > 0.6]
            if not new or min(w.conf for w in new) <= max((w.conf for w in old), default=0.0):
                continue
            words = [w for w in words if w not in old] + new
            line += 1
        return OcrResult(words)

    def _load(self, key: str) -> OcrResult | None:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / f"ocr-{key}.json"
        try:
            rows = json.loads(path.read_text())
            return OcrResult([Word(r["text"], tuple(r["box"]), r["conf"], r["line"]) for r in rows])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _store(self, key: str, result: OcrResult) -> None:
        if self.cache_dir is None:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.cache_dir / f"ocr-{key}.json.part"
        tmp.write_text(json.dumps([asdict(w) for w in result.words]))
        tmp.replace(self.cache_dir / f"ocr-{key}.json")

    def _run(self, image: PILImage.Image) -> OcrResult:
        import statistics

        self.calls += 1
        if self.scale is not None:
            return _merge(self._read(image, self.scale))
        # Screens up to 2000 px wide draw UI text at 11-14 px: read at 2x. Wider ones may be
        # 4K at 200 % (text 24-30 px, which tesseract reads worse when doubled again) or at
        # 100 % (text as small as ever): read at 1x, and at 2x too when the text came out small.
        if image.width <= 2000:
            return _merge(self._read(image, 2.0))
        parts = self._read(image, 1.0)
        heights = [b[3] - b[1] for part in parts for _, b, conf, _ in part if conf > 0.8]
        if not heights or statistics.median(heights) < 16:
            parts += self._read(image, 2.0)
        return _merge(parts)

    def _read(self, image: PILImage.Image, scale: float) -> list[list[_Raw]]:
        """The words of every tile and pass at ``scale``, boxes in image pixels."""
        from PIL import Image

        grey = image.convert("L")
        if scale != 1.0:
            grey = grey.resize(
                (round(image.width * scale), round(image.height * scale)), Image.Resampling.LANCZOS
            )
        tiles = []
        step = self.tile - self.overlap
        for y in range(0, max(1, grey.height - self.overlap), step):
            for x in range(0, max(1, grey.width - self.overlap), step):
                tiles.append(
                    (x, y, min(grey.width, x + self.tile), min(grey.height, y + self.tile))
                )
        # a second pass over the contrast map reads light text on dark or coloured buttons,
        # which tesseract's own thresholding often loses; per word the surer reading wins
        images = [grey, _contrast_map(grey)] if self.second_pass else [grey]
        jobs = [(im, t) for im in images for t in tiles]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            parts = list(pool.map(lambda job: self._tile(*job), jobs))
        return [
            [
                (t, (b[0] / scale, b[1] / scale, b[2] / scale, b[3] / scale), c, ln)
                for t, b, c, ln in part
            ]
            for part in parts
        ]

    def _tile(self, grey: PILImage.Image, box: tuple[int, int, int, int]) -> list[_Raw]:
        import pytesseract

        crop = grey.crop(box)
        pytesseract.pytesseract.tesseract_cmd = self.tesseract
        data = pytesseract.image_to_data(
            crop, lang=self.lang, config="--psm 11", output_type=pytesseract.Output.DICT
        )
        out = []
        for i, text in enumerate(data["text"]):
            text = text.strip()
            conf = float(data["conf"][i]) / 100.0
            if not text or conf < self.min_conf:
                continue
            x, y = data["left"][i] + box[0], data["top"][i] + box[1]
            w = data["width"][i]
            # an icon read as a symbol glued to a word ("©Refresh"): cut it off, box and all
            core = text.strip(_EDGE)
            if not core:
                continue
            lead = len(text) - len(text.lstrip(_EDGE))
            trail = len(text) - len(text.rstrip(_EDGE))
            per_char = w / len(text)
            b = (
                float(x + lead * per_char),
                float(y),
                float(x + w - trail * per_char),
                float(y + data["height"][i]),
            )
            text = core
            out.append(
                (text, b, conf, (data["block_num"][i], data["par_num"][i], data["line_num"][i]))
            )
        return out


_MAX_REREAD = 24  # buttons read again per screen, at most


def button_boxes(image: PILImage.Image) -> list[Box]:
    """Boxes of the screen's buttons and fields: rectangles (outlines or plates) 16-64 px high,
    1.3 to 16 times as wide as high, found as the outer contours of its edges."""
    import cv2
    import numpy as np

    grey = np.asarray(image.convert("L"))
    edges = cv2.Canny(grey, 30, 90)
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out: list[Box] = []
    for c in contours:
        x, y, w, h = cv2.boundingRect(c)
        if not (16 <= h <= 64 and 1.3 * h <= w <= 16 * h):
            continue
        # a rectangle: its contour runs along the bounding box's sides
        if cv2.arcLength(c, True) < 1.6 * (w + h):
            continue
        out.append((float(x), float(y), float(x + w), float(y + h)))
    return out


def trim_glued_icons(image: PILImage.Image, result: OcrResult) -> OcrResult:
    """``result`` with each word's box cut back to its text where tesseract stretched it over an
    icon beside the word (a star before "Publish", a tick before "Checkout") without reading it
    as a symbol: at either end of the box, ink separated from the rest by a gap of at least half
    the box's height (letters of a word sit closer), at most 2.2 heights wide, beside at least a
    height of the rest. Such a box would hide the icon from the icon anchor and put it inside
    the label's box ("the icon left of Publish")."""
    import numpy as np

    grey = np.asarray(image.convert("L"), dtype=np.int16)
    out = []
    for w in result.words:
        x1, y1 = max(0, int(round(w.box[0]))), max(0, int(round(w.box[1])))
        x2, y2 = min(grey.shape[1], int(round(w.box[2]))), min(grey.shape[0], int(round(w.box[3])))
        h = y2 - y1
        crop = grey[y1:y2, x1:x2]
        if h < 4 or x2 - x1 < 2 * h:
            out.append(w)
            continue
        edge = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
        diff = np.abs(crop - np.median(edge))
        cols = (diff >= max(24.0, 0.4 * float(diff.max()))).any(axis=0)
        lo, hi = _text_columns(cols, gap=max(3.0, 0.5 * h), most=2.2 * h, least=float(h))
        if (lo, hi) == (0, len(cols)):
            out.append(w)
        else:
            out.append(
                Word(w.text, (float(x1 + lo), w.box[1], float(x1 + hi), w.box[3]), w.conf, w.line)
            )
    return OcrResult(out)


def _text_columns(cols: Any, *, gap: float, most: float, least: float) -> tuple[int, int]:
    """(start, end) of the columns to keep: ``cols`` (ink per column) less a run of ink at
    either end that a gap of at least ``gap`` columns separates from the rest, when that run is
    at most ``most`` wide and the rest at least ``least`` and at least as wide as the run."""
    import numpy as np

    ink = np.flatnonzero(cols)
    if len(ink) < 2:
        return 0, len(cols)
    # ink[g] ends a run and ink[g + 1] starts the next
    gaps = np.flatnonzero(np.diff(ink) - 1 >= gap)
    lo, hi = 0, len(cols)
    if len(gaps):
        first, last = int(gaps[0]), int(gaps[-1])
        run, rest = ink[first] + 1 - ink[0], ink[-1] + 1 - ink[first + 1]
        if run <= most and rest >= max(least, run):
            lo = int(ink[first + 1])
        run, rest = ink[-1] + 1 - ink[last + 1], ink[last] + 1 - max(ink[0], lo)
        if run <= most and rest >= max(least, run):
            hi = int(ink[last]) + 1
    return lo, hi


def _contrast_map(grey: PILImage.Image, window: int = 31) -> PILImage.Image:
    """Distance of each pixel from the median of its ``window`` (the local background), as
    dark ink on white: text of either polarity on any background reads the same. Continuous,
    not a threshold."""
    import cv2
    import numpy as np
    from PIL import Image

    g = np.asarray(grey, dtype=np.uint8)
    background = cv2.medianBlur(g, window)
    ink = np.abs(g.astype(np.int16) - background.astype(np.int16))
    return Image.fromarray(255 - np.clip(ink * 2, 0, 255).astype(np.uint8))


def _merge(parts: list[list[_Raw]]) -> OcrResult:
    """One reading from several (tiles, passes, scales): where two words overlap, the surer."""
    words: list[Word] = []
    line_base = 0
    for part in parts:
        ids: dict[tuple[int, int, int], int] = {}
        for text, box, conf, line in part:
            clash = [i for i, w in enumerate(words) if overlap_of_smaller(w.box, box) > 0.5]
            if clash and all(words[i].conf >= conf for i in clash):
                continue  # read before, as surely (an overlap, another pass or scale)
            for i in sorted(clash, reverse=True):
                del words[i]
            ids.setdefault(line, line_base + len(ids))
            words.append(Word(text, box, conf, ids[line]))
        line_base += len(ids) + 1
    return OcrResult(words)
