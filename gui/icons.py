"""Icons: element detection on a screenshot, and captions from a named icon set.

Offline, an element is captioned by matching its shape against the glyphs of Font Awesome Free
(the ``fontawesomefree`` package ships the fonts and ``icons.json``: 2,050 glyphs, each with a
label, aliases and search terms, e.g. ``gear``: "cog, configuration, settings, ..."). Each glyph
is rendered with PIL, cut to its ink, padded square and reduced to a 24 x 24 descriptor; an
element's crop gets the same descriptor (ink = pixels far from the crop's border colour, in
either polarity), and one matrix product scores it against every glyph. A captioning model,
when one is configured, replaces the glyph match (:class:`IconCaptioner`).

Elements come from the DOM when we rendered the screen, else from connected components of the
screenshot's edges (merged over a few pixels so that a glyph of several strokes is one element),
sized like icons and not covered by OCR text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from lemmata.errors import MissingDependency
from lemmata.gui.boxes import Box, share_inside

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = [
    "DESCRIPTOR",
    "Element",
    "Glyph",
    "ink_square_of",
    "IconCaptioner",
    "IconSet",
    "ModelCaptioner",
    "describe",
    "detect_elements",
    "ink_of",
]

DESCRIPTOR = 24


@dataclass(frozen=True)
class Glyph:
    name: str
    style: str  # solid, regular, brands
    codepoint: int
    label: str
    terms: tuple[str, ...]  # search terms
    aliases: tuple[str, ...] = ()

    @property
    def caption(self) -> str:
        words = [self.label, *self.aliases, *self.terms]
        return ", ".join(dict.fromkeys(w.lower() for w in words))


@dataclass(frozen=True)
class Element:
    """A candidate UI element: its box (x1, y1, x2, y2) and where it came from."""

    box: Box
    source: str = "components"  # components | dom


class IconCaptioner(Protocol):
    """Captions an element crop with words (a captioning model, when configured)."""

    def caption(self, crop: PILImage.Image) -> str: ...


class ModelCaptioner:
    """Captions with a vision-capable chat model (any ``ChatModel``; through litellm, any
    provider or an OpenAI-compatible server): the crop goes as a PNG data URL, the reply must
    be a short name (1-6 words), else the element gets no caption. Captions are cached per crop
    content, so a screen's elements are asked about once."""

    PROMPT = (
        "This is a cropped element of a computer screen, usually an icon. Name what it is or "
        "does in one to four words (for example: settings, search, close, download). "
        "Reply with the words only."
    )

    def __init__(self, model: Any, *, scale: int = 4) -> None:
        self.model, self.scale = model, scale
        self._cache: dict[str, str] = {}
        self.rejected = 0  # replies that were not a short name

    def caption(self, crop: PILImage.Image) -> str:
        import base64
        import hashlib
        import io

        from PIL import Image

        key = hashlib.blake2b(crop.tobytes() + repr(crop.size).encode(), digest_size=12).hexdigest()
        if key in self._cache:
            return self._cache[key]
        big = crop.resize(
            (crop.width * self.scale, crop.height * self.scale), Image.Resampling.LANCZOS
        )
        buf = io.BytesIO()
        big.save(buf, "PNG")
        url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
        reply = self.model.chat(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": self.PROMPT},
                        {"type": "image_url", "image_url": {"url": url}},
                    ],
                }
            ],
            temperature=0.0,
            max_tokens=16,
        )
        text = " ".join(str(reply.content or "").strip().strip(".\"'").split()).lower()
        if not text or len(text.split()) > 6 or len(text) > 60:
            self.rejected += 1
            text = ""
        self._cache[key] = text
        return text


def _package_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("fontawesomefree")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependency("offline icon captions", "pip install 'lemmata[gui]'")
    return Path(next(iter(spec.submodule_search_locations))) / "static" / "fontawesomefree"


_FONTS = {
    "solid": "fa-solid-900.ttf",
    "regular": "fa-regular-400.ttf",
    "brands": "fa-brands-400.ttf",
}


def _glyph(entry: dict[str, Any], name: str, style: str) -> Glyph:
    return Glyph(
        name,
        style,
        int(entry["unicode"], 16),
        entry.get("label", name),
        tuple(entry.get("search", {}).get("terms", [])),
        tuple(entry.get("aliases", {}).get("names", [])),
    )


def ink_square_of(ink: np.ndarray) -> np.ndarray | None:
    """An ink map cut to its ink and padded square (ink centred); None when there is no ink."""
    ys, xs = np.nonzero(ink > 0.2)
    if len(xs) < 4:
        return None
    cut = ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    h, w = cut.shape
    side = max(h, w)
    square = np.zeros((side, side), dtype=np.float32)
    square[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = cut
    return square


def describe(ink: np.ndarray) -> np.ndarray | None:
    """The descriptor of an ink map (H x W floats in [0, 1]): cut to the ink, padded square,
    reduced to ``DESCRIPTOR`` squared, centred and normalised; None when there is no ink."""
    from PIL import Image

    square = ink_square_of(ink)
    if square is None:
        return None
    small = Image.fromarray((square * 255).astype(np.uint8)).resize(
        (DESCRIPTOR, DESCRIPTOR), Image.Resampling.BOX
    )
    v = np.asarray(small, dtype=np.float32).ravel() / 255.0
    v = v - v.mean()
    norm = float(np.linalg.norm(v))
    if norm < 1e-6:
        return None
    out: np.ndarray = v / norm
    return out


def ink_of(crop: PILImage.Image) -> np.ndarray:
    """Ink of a crop: distance of each pixel's grey level from the border's median, in [0, 1]
    (dark-on-light and light-on-dark alike)."""
    g = np.asarray(crop.convert("L"), dtype=np.float32)
    border = np.concatenate([g[0], g[-1], g[:, 0], g[:, -1]])
    bg = float(np.median(border))
    d = np.abs(g - bg)
    peak = float(d.max())
    if peak < 40:
        return np.zeros_like(g)
    out: np.ndarray = np.clip(d / peak, 0.0, 1.0)
    return out


class IconSet:
    """The named glyphs and their descriptors.

    ``matrix`` is (sizes, glyphs, DESCRIPTOR**2): each glyph rendered at several pixel sizes,
    since a 13 px glyph on a screen is blurred by anti-aliasing the way a 13 px rendering is,
    not the way a 64 px one is; a match takes the best size.
    """

    SIZES = (13, 18, 24, 64)

    def __init__(self, glyphs: list[Glyph], matrix: np.ndarray, aspects: np.ndarray) -> None:
        self.glyphs, self.matrix, self.aspects = glyphs, matrix, aspects

    @classmethod
    @lru_cache(maxsize=4)
    def fontawesome(cls, cache_dir: str | Path | None = None) -> IconSet:
        """Font Awesome Free from the ``fontawesomefree`` package, built once per process; with
        ``cache_dir`` the descriptors are also kept on disk (keyed by the package's version and
        the descriptor's settings), which saves the 3 s of rendering in every new process."""
        from importlib.metadata import version

        from PIL import Image, ImageDraw, ImageFont

        base = _package_dir()
        meta = json.loads((base / "metadata" / "icons.json").read_text())
        key = f"fa-{version('fontawesomefree')}-d{DESCRIPTOR}-s{'_'.join(map(str, cls.SIZES))}-v1"
        cached = Path(cache_dir) / f"{key}.npz" if cache_dir else None
        if cached is not None and cached.is_file():
            try:
                with np.load(cached) as data:
                    keys = [tuple(k.split("\t")) for k in data["keys"]]
                    matrix, aspects = data["matrix"], data["aspects"]
                return cls([_glyph(meta[n], n, st) for n, st in keys], matrix, aspects)
            except (OSError, ValueError, KeyError):
                pass  # a damaged cache is rebuilt below
        fonts = {
            (s, px): ImageFont.truetype(str(base / "webfonts" / f), px)
            for s, f in _FONTS.items()
            for px in cls.SIZES
        }
        glyphs, rows, aspects = [], [], []
        for name, entry in sorted(meta.items()):
            char = chr(int(entry["unicode"], 16))
            for style in entry.get("free", []):
                if style not in _FONTS:
                    continue
                per_size = []
                aspect = 1.0
                for px in cls.SIZES:
                    side = px * 2 + 8
                    canvas = Image.new("L", (side, side), 0)
                    ImageDraw.Draw(canvas).text((4, 4), char, fill=255, font=fonts[(style, px)])
                    ink = np.asarray(canvas, dtype=np.float32) / 255.0
                    d = describe(ink)
                    if d is None:
                        break
                    per_size.append(d)
                    if px == cls.SIZES[-1]:
                        ys, xs = np.nonzero(ink > 0.2)
                        aspect = (xs.max() - xs.min() + 1) / (ys.max() - ys.min() + 1)
                if len(per_size) != len(cls.SIZES):
                    continue
                aspects.append(aspect)
                glyphs.append(_glyph(entry, name, style))
                rows.append(np.stack(per_size))
        matrix = np.stack(rows).transpose(1, 0, 2).copy()  # sizes, glyphs, features
        out = cls(glyphs, matrix, np.asarray(aspects, dtype=np.float32))
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            part = cached.with_suffix(".part.npz")
            np.savez(
                part,
                keys=np.array([f"{g.name}\t{g.style}" for g in glyphs]),
                matrix=matrix,
                aspects=out.aspects,
            )
            part.replace(cached)
        return out

    @staticmethod
    def descriptors(crops: list[PILImage.Image]) -> tuple[np.ndarray, np.ndarray]:
        """(descriptors, aspect ratios) of crops; a crop without ink gets a zero row."""
        descs = np.zeros((len(crops), DESCRIPTOR * DESCRIPTOR), dtype=np.float32)
        ars = np.ones(len(crops), dtype=np.float32)
        for i, crop in enumerate(crops):
            ink = ink_of(crop)
            d = describe(ink)
            if d is None:
                continue
            ys, xs = np.nonzero(ink > 0.2)
            descs[i] = d
            ars[i] = (xs.max() - xs.min() + 1) / (ys.max() - ys.min() + 1)
        return descs, ars

    def similarity(
        self, descs: np.ndarray, aspects: np.ndarray, glyphs: np.ndarray | None = None
    ) -> np.ndarray:
        """(crops x glyphs) shape similarity in [0, 1]: the best size's cosine, lowered when
        the aspect ratios differ; ``glyphs`` (indices) restricts the columns."""
        mat = self.matrix if glyphs is None else self.matrix[:, glyphs]
        ga = self.aspects if glyphs is None else self.aspects[glyphs]
        sims = np.einsum("md,sgd->msg", descs, mat).max(axis=1)
        ratio = np.abs(np.log(np.maximum(aspects[:, None], 1e-3) / ga[None, :]))
        out: np.ndarray = np.clip(sims, 0, 1) * np.exp(-ratio)
        return out

    def match(self, crops: list[PILImage.Image], top: int = 3) -> list[list[tuple[Glyph, float]]]:
        """For each crop, its ``top`` glyphs by shape similarity (empty when it has no ink)."""
        descs, ars = self.descriptors(crops)
        if not crops:
            return []
        sims = self.similarity(descs, ars)
        best = np.argsort(-sims, axis=1)[:, :top]
        return [
            [(self.glyphs[j], float(sims[i, j])) for j in best[i]] if descs[i].any() else []
            for i in range(len(crops))
        ]


def detect_elements(
    image: PILImage.Image,
    *,
    text_boxes: list[Box] = (),  # type: ignore[assignment]
    min_side: int = 8,
    max_side: int = 96,
    max_elements: int = 600,
) -> list[Element]:
    """Icon-sized connected components of the edges of ``image`` not covered by text."""
    import cv2

    grey = np.asarray(image.convert("L"))
    edges = cv2.Canny(grey, 40, 120)
    lo, hi = min_side, max_side
    out: list[Element] = []
    seen: set[tuple[int, int, int, int]] = set()
    # two merge distances: strokes 2 px apart (most glyphs), and 6 px (bars, dots, grids)
    for iterations in (1, 3):
        merged = cv2.dilate(edges, np.ones((3, 3), np.uint8), iterations=iterations)
        n, _, stats, _ = cv2.connectedComponentsWithStats(merged, connectivity=8)
        for x, y, w, h, _area in stats[1:n]:
            if not (lo <= w <= hi and lo <= h <= hi) or max(w, h) > 3.5 * min(w, h):
                continue
            # dilation grew the box: give back all but one pixel of it
            g = iterations - 1
            x, y, w, h = x + g, y + g, max(1, w - 2 * g), max(1, h - 2 * g)
            key = (int(x) // 3, int(y) // 3, int(w) // 3, int(h) // 3)
            if key in seen:
                continue
            seen.add(key)
            box = (float(x), float(y), float(x + w), float(y + h))
            if any(share_inside(box, t) > 0.5 for t in text_boxes):
                continue
            out.append(Element(box))
    out.sort(key=lambda e: (e.box[2] - e.box[0]) * (e.box[3] - e.box[1]))
    return out[:max_elements]
