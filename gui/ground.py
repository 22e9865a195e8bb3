"""``ground(image, instruction) -> Grounding``: the anchors, fusion, zoom and abstention.

1. The instruction is parsed (:mod:`~lemmata.gui.instruction`); a relation ("the icon left of
   Save") grounds its reference first and keeps the target's candidates on that side of it,
   nearest first. An action done in a titled card ("pin the eval loss chart to the top")
   prefers the icons on that title's row, right of it, over the same icon in other cards.
2. Each anchor draws its map on the screen's grid; :func:`~lemmata.gui.fusion.consensus_single_peak`
   fuses them. The point is the centre of the best candidate box under the fused peak (or the
   peak cell itself when no box is there, as with attention alone).
3. Crop and zoom: when the best text target is small or its score is near the threshold, the
   region around it is read again by OCR at 3x and the candidates there re-scored.
4. Abstention: when the fused score is below ``threshold`` the grounding says
   ``abstained: true`` and gives no point. The default threshold was calibrated on generated
   screens (``benchmarks/grounding.py --calibrate``, which prints the sweep).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lemmata.gui.anchors import (
    Candidate,
    IconAnchor,
    Screen,
    TextAnchor,
    _crop,
    _instruction_keywords,
    _same_word,
    _suppress,
    draw_candidates,
    normalise_text,
)
from lemmata.gui.boxes import Box, iou, overlap_of_smaller
from lemmata.gui.fusion import FusionConfig, consensus_single_peak
from lemmata.gui.image import ImageInput, image_key, load_image
from lemmata.gui.instruction import Query, parse_instruction

if TYPE_CHECKING:
    import torch

    from lemmata.gui.icons import Element
    from lemmata.settings import Settings

__all__ = ["DEFAULT_THRESHOLD", "Grounder", "Grounding", "ground"]

# benchmarks/grounding.py --calibrate, seed 1, 24 screens each of Font Awesome and the seen
# icon sets: 0.60 and 0.55 tie (mean 0.914 / 0.913); 0.55 keeps off the cliff at 0.65
DEFAULT_THRESHOLD = 0.55
OFF_KIND = 0.7  # the score factor of a text candidate for "the ... icon", and vice versa
CARD_TITLE = 0.5  # how surely a card's title must be read for its controls to be preferred
# one glyph drawn several times: icon candidates within REPEAT_TIE of the best are instances
# of it, and the one nearest a word of the instruction is chosen when the next is at least
# 1 / REPEAT_CLEAR times as far
REPEAT_TIE, REPEAT_CLEAR = 0.02, 0.8


@dataclass
class Grounding:
    """Where the instruction points, in image pixels; ``anchors`` says what each anchor saw
    (its best score and box), ``heatmap`` is the fused map on the grid (``stride`` px a cell)."""

    instruction: str
    point: tuple[float, float] | None
    bbox: Box | None
    score: float
    abstained: bool
    anchors: dict[str, dict[str, Any]]
    size: tuple[int, int]
    stride: int = 4
    heatmap: torch.Tensor | None = field(default=None, repr=False)
    maps: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)
    zoomed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "point": [round(v, 1) for v in self.point] if self.point else None,
            "bbox": [round(v, 1) for v in self.bbox] if self.bbox else None,
            "score": round(self.score, 4),
            "abstained": self.abstained,
            "anchors": self.anchors,
            "zoomed": self.zoomed,
            "size": list(self.size),
        }


class Grounder:
    """The anchors and their caches; reuse one grounder across instructions on a screen.

    ``anchors`` defaults to the offline pair (OCR text and icons); add an
    :class:`~lemmata.gui.attention.AttentionAnchor` when a vision-language model is at hand.
    Screens are cached by content (``cache_size`` of them), so OCR and element captions are
    computed once per screenshot.
    """

    def __init__(
        self,
        anchors: list[Any] | None = None,
        *,
        settings: Settings | None = None,
        weights: dict[str, float] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        fusion: FusionConfig | None = None,
        zoom: bool = True,
        cache_size: int = 8,
    ) -> None:
        if anchors is None:
            anchors = self.offline_anchors(settings)
        if not anchors:
            raise ValueError("a grounder needs at least one anchor")
        self.anchors = anchors
        self.weights = weights or {}
        self.threshold, self.fusion, self.zoom = threshold, fusion or FusionConfig(), zoom
        self._screens: OrderedDict[str, Screen] = OrderedDict()
        self._cache_size = cache_size

    @staticmethod
    def offline_anchors(
        settings: Settings | None = None,
        *,
        caption_model: Any = None,
        icons: str = "encoder",
        weights: Any = None,
    ) -> list[Any]:
        """OCR text and icon anchors with our embedder (all local, no model).

        ``icons="encoder"`` (the default) matches icons of any set by meaning with the shipped
        icon encoder (``weights`` to use others), keeping the Font Awesome shape match beside
        it; ``icons="glyphs"`` is the shape match alone. With ``caption_model`` (a
        vision-capable ``ChatModel``) icons are captioned by it instead."""
        from lemmata.embeddings import get_embedder
        from lemmata.errors import UsageError
        from lemmata.gui.icon_anchor import EncodedIconAnchor
        from lemmata.gui.icons import IconSet, ModelCaptioner
        from lemmata.gui.ocr import OcrEngine
        from lemmata.settings import Settings

        if icons not in ("encoder", "glyphs"):
            raise UsageError(f"icons must be 'encoder' or 'glyphs', not {icons!r}")
        settings = settings or Settings.load()
        embedder = get_embedder(settings)
        ocr = OcrEngine(cache_dir=settings.data_dir / "ocr-cache")
        icon_set = IconSet.fontawesome(settings.data_dir / "icon-cache")
        anchor: IconAnchor
        if caption_model is not None:
            anchor = IconAnchor(
                icon_set, embedder, ocr=ocr, captioner=ModelCaptioner(caption_model)
            )
        elif icons == "glyphs":
            anchor = IconAnchor(icon_set, embedder, ocr=ocr)
        else:
            anchor = EncodedIconAnchor.load(embedder, weights=weights, ocr=ocr, glyphs=icon_set)
        return [TextAnchor(ocr, embedder), anchor]

    def screen(self, image: ImageInput, elements: list[Element] | None = None) -> Screen:
        img = load_image(image)
        key = image_key(img) + ("-dom" if elements is not None else "")
        if key in self._screens:
            self._screens.move_to_end(key)
            return self._screens[key]
        screen = Screen(img, elements=elements)
        self._screens[key] = screen
        if len(self._screens) > self._cache_size:
            self._screens.popitem(last=False)
        return screen

    def _text_anchor(self) -> TextAnchor | None:
        return next((a for a in self.anchors if isinstance(a, TextAnchor)), None)

    def _candidates(self, screen: Screen, query: Query) -> dict[str, list[Candidate]]:
        out = {}
        for a in self.anchors:
            if hasattr(a, "candidates"):
                out[a.name] = a.candidates(screen, query)
        return out

    def ground(
        self,
        image: ImageInput | Screen,
        instruction: str,
        *,
        elements: list[Element] | None = None,
        threshold: float | None = None,
    ) -> Grounding:
        """Ground ``instruction`` on ``image`` (see the module docstring)."""

        query = parse_instruction(instruction)
        screen = image if isinstance(image, Screen) else self.screen(image, elements)
        threshold = self.threshold if threshold is None else threshold
        cands = self._candidates(screen, query)
        if query.kind is not None:  # "the ... icon", or a quoted label: the other kind yields
            cands = {
                name: [
                    c if c.kind in (query.kind, "attention") else _rescored(c, c.score * OFF_KIND)
                    for c in cs
                ]
                for name, cs in cands.items()
            }
        if query.relation is not None:
            cands = self._relate(screen, query, cands)
        else:
            if query.card and query.kind != "text":
                cands = self._in_card(screen, query, cands)
            cands = self._repeated(screen, query, cands)
        maps: dict[str, torch.Tensor] = {}
        for a in self.anchors:
            if a.name in cands:
                maps[a.name] = draw_candidates(screen, cands[a.name])
            else:
                maps[a.name] = a.heatmap(screen, query)
        fused = consensus_single_peak(maps, self.weights, self.fusion)
        best = self._best(screen, fused.fused, cands)
        zoomed = False
        if self.zoom and best is not None and best.kind == "text" and query.relation is None:
            small = best.box[3] - best.box[1] < 10
            # near the configured threshold, not a per-call one: the calibration sweep grounds
            # with threshold 0 and must see the zoom the default grounder does
            near = abs(best.score - self.threshold) < 0.2
            if small or near:
                better = self._zoom(screen, query, best)
                if better is not None and better.score > best.score:
                    best, zoomed = better, True
        score = best.score if best is not None else fused.score
        if best is None and fused.score > 0:
            r, c = fused.argmax()
            s = screen.stride
            point: tuple[float, float] | None = ((c + 0.5) * s, (r + 0.5) * s)
            bbox: Box | None = None
        elif best is not None:
            point, bbox = best.centre, best.box
        else:
            point, bbox = None, None
        abstained = score < threshold or point is None
        summary = {}
        for a in self.anchors:
            top = max(cands.get(a.name, []), key=lambda c: c.score, default=None)
            summary[a.name] = {
                "score": round(float(maps[a.name].max()) if maps[a.name].numel() else 0.0, 4),
                "best": [round(v, 1) for v in top.box] if top else None,
                "label": top.label if top else None,
                "single_peak": a.name in fused.single_peaks,
            }
        return Grounding(
            instruction=instruction,
            point=None if abstained else point,
            bbox=None if abstained else bbox,
            score=float(score),
            abstained=abstained,
            anchors=summary,
            size=screen.image.size,
            stride=screen.stride,
            heatmap=fused.fused,
            maps=maps,
            zoomed=zoomed,
        )

    def _best(
        self, screen: Screen, fused: torch.Tensor, cands: dict[str, list[Candidate]]
    ) -> Candidate | None:
        """The candidate whose box holds the highest fused value, scored by that value."""
        best: Candidate | None = None
        best_v = 0.0
        for cs in cands.values():
            for c in cs:
                x1, y1, x2, y2 = screen.cells(c.box)
                region = fused[y1:y2, x1:x2]
                if region.numel() == 0:
                    continue
                v = float(region.max())
                if v > best_v + 1e-6:
                    best, best_v = c, v
        if best is None:
            return None
        return Candidate(best.box, best_v, best.label, best.anchor, best.kind)

    def _relate(
        self, screen: Screen, query: Query, cands: dict[str, list[Candidate]]
    ) -> dict[str, list[Candidate]]:
        """Keep the target candidates on the relation's side of the best reference; the nearest
        keeps its score, farther ones lose in proportion to their proximity weight."""
        assert query.relation is not None
        direction, ref_phrase = query.relation
        ref_query = parse_instruction(ref_phrase)
        refs = [c for cs in self._candidates(screen, ref_query).values() for c in cs]
        if not refs:
            return {k: [] for k in cands}
        ref = max(refs, key=lambda c: c.score)
        scored: dict[str, list[tuple[Candidate, float]]] = {}
        for name, cs in cands.items():
            scored[name] = []
            for c in cs:
                if query.kind == "icon" and c.kind != "icon":
                    continue
                factor = _relation_factor(c.box, ref.box, direction)
                if factor > 0 and overlap_of_smaller(c.box, ref.box) < 0.3:
                    scored[name].append((c, factor))
        nearest = max((f for rows in scored.values() for _, f in rows), default=1.0)
        out: dict[str, list[Candidate]] = {}
        for name, rows in scored.items():
            kept = [
                Candidate(
                    c.box,
                    (min(c.score, ref.score) if query.phrase else ref.score) * f / nearest,
                    c.label,
                    c.anchor,
                    c.kind,
                )
                for c, f in rows
            ]
            out[name] = _suppress(sorted(kept, key=lambda c: -c.score))
        return out

    def _in_card(
        self, screen: Screen, query: Query, cands: dict[str, list[Candidate]]
    ) -> dict[str, list[Candidate]]:
        """An action done in a titled card ("pin the eval loss chart to the top"): the icons on
        its title's row right of the title, up to the row's next words (where a card keeps its
        controls), keep their scores, the nearest a little more, and other icons and the title
        itself yield (:data:`OFF_KIND`). Unchanged
        when the title is not on the screen or no icon there is sure enough to be clicked."""
        text = self._text_anchor()
        if text is None:
            return cands
        titles = text._matches(screen, query.card)
        if not titles or titles[0].score < CARD_TITLE:
            return cands
        title = titles[0].box
        # the card ends where the row's next words begin (the next card's title)
        end = min(
            (
                w.box[0]
                for w in screen.ocr(text.ocr).words
                if w.box[0] > title[2] + 4
                and min(w.box[3], title[3]) - max(w.box[1], title[1]) > 0
                and len(normalise_text(w.text)) >= 3
            ),
            default=float(screen.image.width),
        )
        near = {
            id(c): _relation_factor(c.box, title, "right") if c.box[2] <= end else 0.0
            for cs in cands.values()
            for c in cs
            if c.kind == "icon"
        }
        inside = [c for cs in cands.values() for c in cs if near.get(id(c), 0.0) > 0]
        if not any(c.score >= self.threshold for c in inside):
            return cands
        nearest = max(near[id(c)] for c in inside)
        out: dict[str, list[Candidate]] = {}
        for name, cs in cands.items():
            kept = []
            for c in cs:
                if near.get(id(c), 0.0) > 0:
                    kept.append(_rescored(c, c.score * (0.9 + 0.1 * near[id(c)] / nearest)))
                elif c.kind == "icon" or overlap_of_smaller(c.box, title) > 0.5:
                    kept.append(_rescored(c, c.score * OFF_KIND))
                else:
                    kept.append(c)
            out[name] = sorted(kept, key=lambda c: -c.score)
        return out

    def _repeated(
        self, screen: Screen, query: Query, cands: dict[str, list[Candidate]]
    ) -> dict[str, list[Candidate]]:
        """One glyph drawn several times (a reset arrow beside each slider, a help mark in the
        header and beside each option): the instance nearest a word of the instruction on the
        screen ("restore the image brightness": the arrow under "Brightness"; "get help with
        TensorBoard": the mark in TensorBoard's header row) keeps its score and the others
        yield (:data:`OFF_KIND`), so that it stands as a single peak. Unchanged when no word
        of the instruction is on the screen or no instance is clearly nearest (within
        :data:`REPEAT_CLEAR` of the next)."""
        text = self._text_anchor()
        icons = [c for cs in cands.values() for c in cs if c.kind == "icon"]
        if text is None or len(icons) < 2:
            return cands
        top = max(c.score for c in icons)
        tied: list[Candidate] = []
        for c in sorted(icons, key=lambda c: -c.score):
            # the same element found twice (nested boxes, the glyph match) is one instance
            if c.score >= top - REPEAT_TIE and all(iou(c.box, t.box) < 0.3 for t in tied):
                tied.append(c)
        if len(tied) < 2:
            return cands
        # a label saying the action itself ("Filter tags" for "filter the charts by tag") is a
        # control named by its text, not the title of one
        words = _labels_named(
            screen.ocr(text.ocr).lines(),
            set(_instruction_keywords(query.instruction)),
            set(normalise_text(query.verb).split()),
        )
        if not words:
            return cands
        dist = {id(c): min(_row_distance(c.box, w) for w in words) for c in tied}
        ranked = sorted(tied, key=lambda c: dist[id(c)])
        if dist[id(ranked[0])] > REPEAT_CLEAR * dist[id(ranked[1])]:
            return cands
        chosen = ranked[0].box
        return {
            name: [
                _rescored(c, c.score * OFF_KIND)
                if c.kind == "icon" and c.score >= top - REPEAT_TIE and iou(c.box, chosen) < 0.3
                else c
                for c in cs
            ]
            for name, cs in cands.items()
        }

    def _zoom(self, screen: Screen, query: Query, best: Candidate) -> Candidate | None:
        """Read the region around ``best`` again at 3x and re-score its text."""
        text = self._text_anchor()
        if text is None:
            return None
        w, h = best.box[2] - best.box[0], best.box[3] - best.box[1]
        cx, cy = best.centre
        half_w, half_h = max(160.0, 3 * w), max(60.0, 4 * h)
        region = (
            max(0.0, cx - half_w),
            max(0.0, cy - half_h),
            min(float(screen.image.width), cx + half_w),
            min(float(screen.image.height), cy + half_h),
        )
        crop = _crop(screen.image, region)
        from PIL import Image

        big = crop.resize((crop.width * 3, crop.height * 3), Image.Resampling.LANCZOS)
        sub = Screen(big)
        x0, y0 = int(region[0]), int(region[1])
        # the label found, read again: a neighbour read better at 3x ("Export as SVG" below
        # "Export as ...") is no reason to move, since the first reading chose between them;
        # one that holds more of the instruction's words is ("Export as PNG" for "... a PNG
        # picture" where 1x read only "Export")
        found = [
            Candidate(
                (x0 + c.box[0] / 3, y0 + c.box[1] / 3, x0 + c.box[2] / 3, y0 + c.box[3] / 3),
                c.score,
                c.label,
                c.anchor,
                c.kind,
            )
            for c in text.candidates(sub, query)
        ]
        if not found:
            return None
        keys = set(_instruction_keywords(query.instruction))

        def shared(c: Candidate) -> int:
            return len(keys & set(normalise_text(c.label).split()))

        same = [c for c in found if overlap_of_smaller(c.box, best.box) >= 0.5]
        kept = same[0] if same else None
        if shared(found[0]) > (shared(kept) if kept else shared(best)):
            return found[0]
        return kept


def _rescored(c: Candidate, score: float) -> Candidate:
    return Candidate(c.box, score, c.label, c.anchor, c.kind)


def _labels_named(lines: list[list[Any]], keys: set[str], verb: set[str]) -> list[Box]:
    """The boxes of the visual phrases (words of a line without a wide gap) that the
    instruction's words name: at least half of their words of three letters or more are
    instruction words ("Brightness", "Card Width"; not "Ignore outliers in chart scaling" for
    "filter the charts by tag", which only mentions charts), and none is the action's verb."""
    out: list[Box] = []
    for line in lines:
        phrase: list[Any] = []
        for w in [*line, None]:
            if w is not None and phrase:
                h = w.box[3] - w.box[1]
                if w.box[0] - phrase[-1].box[2] <= 2.5 * h:
                    phrase.append(w)
                    continue
            content = [normalise_text(p.text) for p in phrase]
            content = [t for t in content if len(t) >= 3]
            named = [t for t in content if any(_same_word(t, key) for key in keys)]
            acting = any(_same_word(t, v) for t in content for v in verb)
            if content and 2 * len(named) >= len(content) and not acting:
                out.append(
                    (
                        min(p.box[0] for p in phrase),
                        min(p.box[1] for p in phrase),
                        max(p.box[2] for p in phrase),
                        max(p.box[3] for p in phrase),
                    )
                )
            phrase = [w] if w is not None else []
    return out


def _row_distance(box: Box, word: Box) -> float:
    """How far ``box`` is from ``word``, a gap across rows counting four times a gap along one,
    and eight times when ``box`` is above ``word``: controls sit on their label's row or just
    below it (a slider's reset arrow under "Brightness", not the one above "Contrast")."""
    dx = max(0.0, word[0] - box[2], box[0] - word[2])
    return dx + 4 * max(0.0, box[1] - word[3]) + 8 * max(0.0, word[1] - box[3])


def _relation_factor(box: Box, ref: Box, direction: str) -> float:
    """How well ``box`` sits in ``direction`` of ``ref``: 0 when not at all, else a proximity
    weight in (0, 1] that halves every 240 px (or eight reference heights) of distance."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    rx, ry = (ref[0] + ref[2]) / 2, (ref[1] + ref[3]) / 2
    size = max(ref[3] - ref[1], 12.0)
    v_overlap = min(box[3], ref[3]) - max(box[1], ref[1]) > -0.5 * size
    h_overlap = min(box[2], ref[2]) - max(box[0], ref[0]) > -2 * size
    if direction == "left" and cx < ref[0] and v_overlap:
        dist = ref[0] - box[2]
    elif direction == "right" and cx > ref[2] and v_overlap:
        dist = box[0] - ref[2]
    elif direction == "above" and cy < ref[1] and h_overlap:
        dist = ref[1] - box[3]
    elif direction == "below" and cy > ref[3] and h_overlap:
        dist = box[1] - ref[3]
    elif direction == "near":
        dist = math.hypot(cx - rx, cy - ry) - size
    else:
        return 0.0
    return float(0.5 ** (max(0.0, dist) / max(8 * size, 240.0)))


_DEFAULT: Grounder | None = None


def ground(image: ImageInput, instruction: str, **kwargs: Any) -> Grounding:
    """Ground ``instruction`` on ``image`` with the offline grounder (built on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Grounder()
    return _DEFAULT.ground(image, instruction, **kwargs)
