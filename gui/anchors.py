"""The anchors: each maps (screen, instruction) to a heatmap on the screen's common grid.

An anchor here finds *candidates* (a box, a score in [0, 1] that says how sure it is that the
box is the target, and what it read there) and draws them on the grid: each box filled with its
score, highest at its centre, so that the grid's peak is the middle of the best box. Scores are
absolute, not normalised per screen: a screen with nothing like the target gives a cold map,
which is what lets :mod:`~lemmata.gui.fusion` abstain.

- :class:`TextAnchor`: OCR words and their runs within a line, matched to the instruction's
  phrase by fuzzy string match (rapidfuzz) and by text embedding (our ``Embedder``).
- :class:`IconAnchor`: elements (DOM or connected components) captioned by the icon set
  (:mod:`~lemmata.gui.icons`), the caption matched to the phrase by words and by embedding.
- :class:`~lemmata.gui.attention.AttentionAnchor`: a vision-language model's attention.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from lemmata.gui.boxes import Box, iou, share_inside
from lemmata.gui.instruction import Query, parse_instruction

if TYPE_CHECKING:
    import torch
    from PIL import Image as PILImage

    from lemmata.embeddings import Embedder
    from lemmata.gui.icons import Element, IconSet
    from lemmata.gui.ocr import OcrEngine, OcrResult

__all__ = [
    "Anchor",
    "Candidate",
    "IconAnchor",
    "Screen",
    "TextAnchor",
    "draw_candidates",
    "names_an_icon",
    "normalise_text",
]


@dataclass(frozen=True)
class Candidate:
    """A box an anchor proposes, with its score in [0, 1] and what it saw there."""

    box: Box
    score: float
    label: str
    anchor: str
    kind: str  # text | icon | attention

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)


@dataclass
class Screen:
    """A screenshot and what is computed once per screenshot (OCR, elements, crops).

    ``stride`` is the grid's cell size in pixels (4 up to 2000 px wide, 8 above), so a 4K
    screenshot's maps are 480 x 270 floats each.
    """

    image: PILImage.Image
    elements: list[Element] | None = None  # from the DOM, when we rendered the screen
    stride: int = 0
    cache: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.stride:
            self.stride = 4 if self.image.width <= 2000 else 8

    @property
    def grid(self) -> tuple[int, int]:
        return (-(-self.image.height // self.stride), -(-self.image.width // self.stride))

    def cells(self, box: Box) -> tuple[int, int, int, int]:
        """The grid cells a box covers, as (x1, y1, x2, y2) slice bounds clipped to the grid
        (at least one cell wide unless the box lies outside it)."""
        s, (h, w) = self.stride, self.grid
        x1, y1 = int(box[0] // s), int(box[1] // s)
        x2, y2 = max(x1 + 1, int(-(-box[2] // s))), max(y1 + 1, int(-(-box[3] // s)))
        return max(0, x1), max(0, y1), min(w, x2), min(h, y2)

    def ocr(self, engine: OcrEngine) -> OcrResult:
        if "ocr" not in self.cache:
            self.cache["ocr"] = engine.read(self.image)
        result: OcrResult = self.cache["ocr"]
        return result


@runtime_checkable
class Anchor(Protocol):
    """``heatmap(image, instruction)`` on the screen's grid, values in [0, 1]."""

    name: str

    def heatmap(self, image: Screen | PILImage.Image, instruction: str | Query) -> torch.Tensor: ...


def draw_candidates(screen: Screen, candidates: list[Candidate]) -> torch.Tensor:
    """Candidates on the grid: each box filled with its score, 1.0 x in the cell nearest its
    centre falling to 0.7 x at the edges; where boxes overlap the larger value wins. (The
    nearest cell, not the exact centre: a 14 px icon on a 4K screen spans two 8 px cells, and
    neither may fall short of the candidate's score.)"""
    import torch

    h, w = screen.grid
    out = torch.zeros((h, w), dtype=torch.float32)
    for c in candidates:
        x1, y1, x2, y2 = screen.cells(c.box)
        if x2 <= x1 or y2 <= y1:
            continue
        ys = torch.linspace(-1, 1, y2 - y1) if y2 - y1 > 1 else torch.zeros(1)
        xs = torch.linspace(-1, 1, x2 - x1) if x2 - x1 > 1 else torch.zeros(1)
        r = torch.sqrt(ys[:, None] ** 2 + xs[None, :] ** 2) / (2**0.5)
        r = (r - r.min()) / max(1.0 - float(r.min()), 1e-6)
        patch = c.score * (1.0 - 0.3 * r)
        out[y1:y2, x1:x2] = torch.maximum(out[y1:y2, x1:x2], patch)
    return out


_PUNCT = re.compile(r"[^\w\s]+")


def normalise_text(text: str) -> str:
    """Lower case, punctuation out, spaces collapsed: what fuzzy matching compares."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def _as_query(instruction: str | Query) -> Query:
    return instruction if isinstance(instruction, Query) else parse_instruction(instruction)


def _as_screen(image: Any) -> Screen:
    from lemmata.gui.image import load_image

    return image if isinstance(image, Screen) else Screen(load_image(image))


class _CandidateAnchor:
    name = "anchor"

    def candidates(self, screen: Screen, query: Query) -> list[Candidate]:
        raise NotImplementedError

    def heatmap(self, image: Screen | PILImage.Image, instruction: str | Query) -> torch.Tensor:
        screen = _as_screen(image)
        return draw_candidates(screen, self.candidates(screen, _as_query(instruction)))


def _cosine(embedder: Embedder, a: list[str], b: list[str]) -> np.ndarray:
    va, vb = embedder.embed(a), embedder.embed(b)
    va = va / np.maximum(np.linalg.norm(va, axis=1, keepdims=True), 1e-9)
    vb = vb / np.maximum(np.linalg.norm(vb, axis=1, keepdims=True), 1e-9)
    out: np.ndarray = va @ vb.T
    return out


def _semantic(cos: float, floor: float = 0.55, cap: float = 0.85) -> float:
    """An embedding cosine as a score: nothing below ``floor``, at most ``cap`` (a paraphrase
    is never as sure as the same words)."""
    return max(0.0, min(1.0, (cos - floor) / (0.95 - floor))) * cap


SUBJECT = 0.8  # a label matching the object of an action, against one matching the words
# and further, when the action's verb is the name of an icon's concept ("reload", "undo")
DRAWN_ACTION = 0.7


def names_an_icon(verb: str) -> bool:
    """Whether an action's verb is the name of an icon concept (``data/icon_concepts.json``):
    "reload" (a refresh arrow), "undo", "delete", "zoom in"; not "create", "open" or "go to",
    which no one glyph draws."""
    if not verb:
        return False
    names = _icon_names()
    v = " ".join(verb.lower().split())
    return v in names or v.replace(" ", "-") in names


@functools.lru_cache(maxsize=1)
def _icon_names() -> frozenset[str]:
    from lemmata.gui.icon_library import concepts

    return frozenset(concepts().by_name)


def _rescored(c: Candidate, score: float) -> Candidate:
    return Candidate(c.box, score, c.label, c.anchor, c.kind)


class TextAnchor(_CandidateAnchor):
    """OCR text matched to the instruction's phrase.

    Each run of up to ``len(phrase) + 2`` consecutive words in a line is a candidate, scored by
    rapidfuzz's ratio against the phrase (with and without spaces, 0.5 mapped to 0 and 1 to 1), or, for lines and words, by embedding cosine when that
    is higher (a paraphrase: "log in" for "Sign in"), or by the words it shares with the whole
    instruction when that is higher ("Filter runs (regex)" for "filter the runs by name", see
    :func:`_word_overlap`), or by a menu convention ("Find..." for "search for a node", see
    :data:`_CONVENTIONS`); OCR confidence shades the score.
    """

    name = "ocr"

    def __init__(self, ocr: OcrEngine, embedder: Embedder | None = None) -> None:
        self.ocr, self.embedder = ocr, embedder

    def spans(self, screen: Screen, max_words: int = 8) -> list[tuple[str, Box, float]]:
        key = f"spans{max_words}"
        if key not in screen.cache:
            spans = []
            tails = []
            for line in screen.ocr(self.ocr).lines():
                words = [w for w in line if normalise_text(w.text)]
                # a run stays within one visual phrase: no wide gaps between words
                ends = [
                    k
                    for k in range(1, len(words))
                    if words[k].box[0] - words[k - 1].box[2]
                    > 2.5 * (words[k].box[3] - words[k].box[1])
                ] + [len(words)]
                for i in range(len(words)):
                    end = next(k for k in ends if k > i)
                    for j in range(i + 1, min(end, i + max_words) + 1):
                        run = words[i:j]
                        # what follows the run in its phrase ("as SVG" after "Export")
                        tails.append(normalise_text(" ".join(w.text for w in words[j:end])))
                        text = normalise_text(" ".join(w.text for w in run))
                        box = (
                            min(w.box[0] for w in run),
                            min(w.box[1] for w in run),
                            max(w.box[2] for w in run),
                            max(w.box[3] for w in run),
                        )
                        conf = min(w.conf for w in run)
                        spans.append((text, box, conf))
            screen.cache[key] = spans
            screen.cache["tails" + key] = tails
        result: list[tuple[str, Box, float]] = screen.cache[key]
        return result

    def vocabulary(self, screen: Screen) -> set[str]:
        """The words the screen says (lower case, letters only)."""
        if "vocabulary" not in screen.cache:
            screen.cache["vocabulary"] = {
                t
                for w in screen.ocr(self.ocr).words
                for t in _TOKEN.findall(w.text.lower())
                if len(t) >= 2
            }
        result: set[str] = screen.cache["vocabulary"]
        return result

    def tails(self, screen: Screen, max_words: int = 8) -> list[str]:
        """For each of :meth:`spans`, the words that follow it in its visual phrase."""
        self.spans(screen, max_words)
        result: list[str] = screen.cache[f"tailsspans{max_words}"]
        return result

    def candidates(self, screen: Screen, query: Query) -> list[Candidate]:
        out = self._matches(screen, query.phrase, query)
        if query.concerns:
            # "get help with TensorBoard": a label that says only the name the action concerns
            # is what it is about (the app's title), not where to click
            concerned = _words(query.concerns)
            out = [
                _rescored(c, c.score * SUBJECT) if _words(c.label) <= concerned else c for c in out
            ]
            out.sort(key=lambda c: -c.score)
        if query.subject and normalise_text(query.subject) != normalise_text(query.phrase):
            # "create a new text file" for a card labelled "Text File": the label names the
            # object of the action; weaker than the words themselves, so an icon that means
            # the whole action (a bin for "delete the file") can still win, and weaker still
            # when the action is itself the name of an icon ("reload the runs": a reload
            # button, not the "Runs" header, which is what it acts on)
            factor = SUBJECT * (DRAWN_ACTION if names_an_icon(query.verb) else 1.0)
            out += [_rescored(c, c.score * factor) for c in self._matches(screen, query.subject)]
            out.sort(key=lambda c: -c.score)
            out = _suppress(out, containment=True)[:50]
        return out

    def _matches(self, screen: Screen, text: str, query: Query | None = None) -> list[Candidate]:
        """Spans matching ``text``; given ``query``, also by the words they share with the
        whole instruction (see :func:`_word_overlap`)."""
        from rapidfuzz import fuzz

        phrase = normalise_text(text)
        if not phrase:
            return []
        n = len(phrase.split())
        kept = [i for i, s in enumerate(self.spans(screen)) if len(s[0].split()) <= n + 2]
        spans = [self.spans(screen)[i] for i in kept]
        if not spans:
            return []
        squeezed = phrase.replace(" ", "")
        ratios = np.array(
            [
                max(fuzz.ratio(phrase, t), fuzz.ratio(squeezed, t.replace(" ", ""))) / 100.0
                for t, _, _ in spans
            ],
            dtype=np.float32,
        )
        # ratio 0.5 (half the letters shared: "redo" in "shared") is no match; 1.0 is the same
        scores = np.clip((ratios - 0.5) / 0.5, 0.0, 1.0)
        # a phrase inside a longer label ("Save" in "Save as...") is a weaker match
        partial = np.array(
            [0.8 if (f" {phrase} " in f" {t} " and t != phrase) else 0.0 for t, _, _ in spans],
            dtype=np.float32,
        )
        scores = np.maximum(scores, partial)
        if query is not None and query.relation is None and query.kind != "text":
            texts = [t for t, _, _ in spans]
            tails = [self.tails(screen)[i] for i in kept]
            scores = np.maximum(scores, _overlaps(query, texts, self.vocabulary(screen), tails))
            scores = np.maximum(scores, _conventions(query.instruction, texts, tails))
        if self.embedder is not None and len(phrase) > 2:
            texts = list(dict.fromkeys(t for t, _, _ in spans))
            cos = _cosine(self.embedder, [phrase], texts)[0]
            sem = {t: _semantic(float(c)) for t, c in zip(texts, cos, strict=True)}
            scores = np.maximum(scores, np.array([sem[t] for t, _, _ in spans], dtype=np.float32))
        out = []
        for (text, box, conf), s in zip(spans, scores, strict=True):
            s = float(s)
            if s < 0.95 and len(text) > len(phrase):
                # the phrase glued to a misread icon or a stray mark ("grefresh" for Refresh):
                # the matched letters, with the box cut to them
                al = fuzz.partial_ratio_alignment(phrase, text)
                # only a leading glue (icons sit before their labels); a trailing one is
                # another word ("shared" is not "Share")
                if (
                    al is not None
                    and al.score >= 90
                    and al.dest_start <= 2
                    and al.dest_end == len(text)
                ):
                    per_char = (box[2] - box[0]) / len(text)
                    box = (
                        box[0] + al.dest_start * per_char,
                        box[1],
                        box[0] + al.dest_end * per_char,
                        box[3],
                    )
                    s = max(s, 0.95 * (al.score / 100.0 - 0.5) / 0.5)
            s *= 0.8 + 0.2 * conf
            if s >= 0.35:
                out.append(Candidate(box, s, text, self.name, "text"))
        out.sort(key=lambda c: -c.score)
        return _suppress(out, containment=True)[:50]


# words an instruction uses around what it names, never a label's substance
_FILLER = {
    "the", "a", "an", "to", "of", "and", "or", "for", "in", "on", "with", "my", "this", "that",
    "which", "is", "are", "it", "its", "be", "by", "as", "at", "from", "into", "only", "new",
    "some", "all", "any", "me", "i", "want", "please", "so", "can", "there", "here", "out",
    "click", "tap", "press", "select", "choose", "pick", "use", "go", "up",
}  # fmt: skip
_ARTICLE = {"the", "a", "an", "this", "my", "that"}
# what ends the object of an action ("filter the runs by name", "read the text that ...")
_OBJECT_END = {
    "to", "into", "as", "by", "with", "from", "onto", "in", "on", "off", "for", "of", "that",
    "which", "who", "is", "are", "at",
}  # fmt: skip
_LOOKING = frozenset({"read", "look", "see", "inspect", "examine", "watch", "study"})
# going to a thing is done by clicking its name: no glyph draws it
_GOING = frozenset({"open", "browse", "visit", "view", "display"})
_TOKEN = re.compile(r"[^\W\d_]+")


def _stem(w: str) -> str:
    for end in ("ing", "es", "ed", "s"):
        if len(w) > len(end) + 2 and w.endswith(end):
            return w[: -len(end)]
    return w


def _same_word(a: str, b: str) -> bool:
    """Two words that name the same thing on a screen: equal up to a plural or -ing, one an
    abbreviation of the other ("norm" for "normalisation", "pool" for "pooling"; not "view"
    for "viewer"), or one read
    with an OCR slip ("Flter" for "Filter")."""
    from rapidfuzz import fuzz

    sa, sb = _stem(a), _stem(b)
    if sa == sb:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 4 and len(long_) - len(short) >= 3 and long_.startswith(short):
        return True
    return min(len(a), len(b)) >= 5 and fuzz.ratio(a, b) >= 85


def _instruction_keywords(instruction: str) -> dict[str, float]:
    """The words of an instruction that a label could share, each with its weight: the object
    of the action (the words after its first article, up to a preposition or a relative: "the
    text" in "read the text that the runs logged") weighs 2, but its last word, the kind of
    thing it is, 1 when other words come before it ("the crime novels"); the other words weigh
    1; filler words (articles, prepositions, clicking verbs) are left out."""
    words = _TOKEN.findall(instruction.lower())
    out: dict[str, float] = {}
    in_object = False
    seen_article = False
    head: list[str] = []  # the object's words, in order
    for w in words:
        if w in _ARTICLE and not seen_article:
            seen_article = in_object = True
            continue
        if w in _OBJECT_END:
            in_object = False
        if w in _FILLER or len(w) < 2:
            continue
        out[w] = max(out.get(w, 0.0), 2.0 if in_object else 1.0)
        if in_object:
            head.append(w)
    if len(head) >= 2 and head.count(head[-1]) == 1:
        # the object's last word is its kind ("the crime novels", "the members table"); a
        # label names the thing by the words before it ("Crime", "members")
        out[head[-1]] = 1.0
    return out


ABSENT = 0.5  # the weight of an instruction word that no text on the screen says
VERB_LABEL = 0.62  # a label opening with the instruction's verb (an action's own button)


def _word_overlap(
    keywords: dict[str, float],
    label: str,
    verb: frozenset[str] = frozenset(),
    absent: frozenset[str] = frozenset(),
    action: frozenset[str] = frozenset(),
    *,
    whole: bool = True,
) -> float:
    """How well a label matches an instruction by the words they share, in [0, 0.9]: the share
    of the label's words found in the instruction times 0.25 + 0.65 x the (weighted) share of
    the instruction's words found in the label, plus 0.03 for each word in common past the
    first; one word in common that is not the action's ``verb`` counts 0.8 x. "Filter runs" for
    "filter the runs by name" scores 0.77, "batch_norm" for "inspect the batch normalisation
    layer" 0.65, "Changes" for "store the changes" 0.55, "Runs" for "delete the selected run"
    0.41: wording a label's words as an action finds it, one word of a longer request does
    not. Words of the instruction in ``absent`` (said by no text on the screen: "novels" in
    "show only the crime novels" where a facet says "Crime") weigh :data:`ABSENT` times as
    much: a label cannot hold what the screen does not say, and users describe what they
    click in words of their own; but a label that says only the ``action`` ("Open..." for
    "open the preferences") where the screen says nothing else of the instruction counts
    :data:`SUBJECT` x. A short ``whole`` label (one or two words, its visual phrase not going
    on), as buttons are labelled, that opens with the action's ``verb`` scores at least
    :data:`VERB_LABEL` ("Run SQL" for "run the overdue query"; not "Filter" of "Filter runs
    (regex)", nor that whole longer label)."""
    tokens = [t for t in _TOKEN.findall(label.lower()) if len(t) >= 2 and t not in _FILLER]
    if absent:
        keywords = {k: w * (ABSENT if k in absent else 1.0) for k, w in keywords.items()}
    total = sum(keywords.values())
    if not tokens or not total:
        return 0.0
    found: set[str] = set()
    hits = 0
    for t in tokens:
        match = [k for k in keywords if _same_word(t, k)]
        if match:
            hits += 1
            found.update(match)
    covered = sum(keywords[k] for k in found) / total
    # at equal shares, more words in common is the surer match ("Filter tags" over "chart")
    score = min(0.9, (hits / len(tokens)) * (0.25 + 0.65 * covered) + 0.03 * (hits - 1))
    if verb and hits == 1 and not found & verb:
        # one word of the object, the action not named ("Changes" for "store the changes"): a
        # label for the object alone, as weak as a subject match (an icon may draw the action)
        score *= SUBJECT
    elif found and found <= action and all(k in absent for k in keywords if k not in action):
        score *= SUBJECT
    if whole and len(tokens) <= 2 and verb and any(_same_word(tokens[0], v) for v in verb):
        # a label that opens with the action's verb is the control that does it, as buttons
        # are labelled ("Run SQL" for "run the overdue query", "hide" for "hide the SQL editor");
        # each further word of the instruction it says adds ("Filter tags" over "Filter runs"
        # for "filter the charts by tag")
        score = max(score, VERB_LABEL + 0.05 * (hits - 1))
    return score


# What an instruction calls a thing that labels call otherwise, by convention: each pattern
# of the instruction (lower case) lends the label word its key ("a vector image" is what an
# "SVG" is, "report a bug" is "Report Issue", "left to right" is "Horizontal").
_ALIASES: dict[str, re.Pattern[str]] = {
    "svg": re.compile(r"\bvector (?:image|graphic|drawing)s?\b"),
    "png": re.compile(r"\b(?:bitmap|raster) (?:image|picture)s?\b"),
    "issue": re.compile(r"\b(?:bug|problem)s?\b"),
    "bug": re.compile(r"\bissues?\b"),
    "horizontal": re.compile(r"\b(?:left to right|right to left|sideways)\b"),
    "vertical": re.compile(r"\b(?:top to bottom|bottom to top)\b"),
}

# Menu and command conventions: an instruction worded by what the user wants (its pattern) is
# served by a command that applications name alike (the label's pattern, matched whole): "search
# for a node" -> "Find...", "load a model file" -> "Open...", "which version is this" -> "About
# <application>", "save the graph as a PNG" -> "Export as ...", "draw new random noise" ->
# "Resample noise". The label may go on with words of the instruction ("Resample noise").
_CONVENTIONS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(when), re.compile(label))
    for when, label in (
        (r"\b(?:search|look (?:for|up)|seek)\b", r"find|search|find in \w+"),
        (r"\bload\b|\bopen\b.*\bfile\b", r"open(?: file)?|load(?: file)?|browse"),
        (r"\bversion\b", r"about(?: \w+)?|version"),
        (
            r"\b(?:preferences|settings|options|configure|configuration|customi[sz]e)\b",
            r"settings|preferences|options",
        ),
        (r"\b(?:save|download|export)\b.*\bas\b|\bexport\b", r"export(?: as)?|save as"),
        (r"\b(?:bugs?|issues?|problems?)\b", r"report(?: an?)? (?:issue|bug|problem)s?"),
        (r"\b(?:left to right|right to left|sideways)\b", r"(?:show )?horizontal(?:ly)?"),
        (r"\b(?:top to bottom|bottom to top)\b", r"(?:show )?vertical(?:ly)?"),
        (
            r"\b(?:new random|draw (?:a )?new|another random|re-?roll)\b",
            r"resample|regenerate|randomi[sz]e|shuffle|reroll|new sample",
        ),
        (r"\b(?:quit|exit)\b|\bclose the (?:app|application|program)\b", r"quit|exit"),
        (r"\b(?:documentation|docs|manual|get help|need help)\b", r"help|documentation|docs"),
        (r"\b(?:revert|take back)\b", r"undo"),
    )
)
CONVENTION = 0.7  # a label named by convention; each further word of the instruction adds 0.05


# a keyboard shortcut beside a menu command ("Ctrl+Shift+E"): not part of its label
_SHORTCUT = re.compile(
    r"ctrl|shift|alt|cmd|command|option|meta|super|enter|return|backspace|delete|del|esc|tab|"
    r"up|down|left|right|home|end|space|f\d{1,2}|\w"
)


def _conventions(instruction: str, texts: list[str], tails: list[str] | None = None) -> np.ndarray:
    """Scores of labels that name the instruction's request by a menu convention (see
    :data:`_CONVENTIONS`): :data:`CONVENTION` for the command alone, 0.05 more for each further
    label word the instruction says (by itself or by an alias), at most 0.85; 0 for the rest,
    and for a label that its phrase goes on from with words the instruction does not say
    (``tails``: "Export" in "Export as SVG" for "save it as a PNG"; a shortcut does not count)."""
    said = instruction.lower()
    rules = [label for when, label in _CONVENTIONS if when.search(said)]
    out = np.zeros(len(texts), dtype=np.float32)
    if not rules:
        return out
    keywords = set(_instruction_keywords(instruction))
    keywords |= {alias for alias, p in _ALIASES.items() if p.search(said)}
    cache: dict[tuple[str, str], float] = {}
    for i, (t, tail) in enumerate(zip(texts, tails or [""] * len(texts), strict=True)):
        if (t, tail) not in cache:
            cache[t, tail] = 0.0
            words = t.split()
            more = [w for w in tail.split() if not _SHORTCUT.fullmatch(w) and w not in _FILLER]
            if any(not any(_same_word(w, kw) for kw in keywords) for w in more):
                continue
            for label in rules:
                # the longest head of the label that is the command, the rest said by the user
                for k in range(len(words), 0, -1):
                    rest = [w for w in words[k:] if w not in _FILLER]
                    if label.fullmatch(" ".join(words[:k])) and all(
                        any(_same_word(w, kw) for kw in keywords) for w in rest
                    ):
                        cache[t, tail] = max(
                            cache[t, tail], min(0.85, CONVENTION + 0.05 * len(rest))
                        )
                        break
        out[i] = cache[t, tail]
    return out


def _overlaps(
    query: Query,
    texts: list[str],
    shown: set[str] | None = None,
    tails: list[str] | None = None,
) -> np.ndarray:
    """:func:`_word_overlap` of each text; ``shown``: the words the screen says (none given:
    every word of the instruction counts as said); ``tails``: what follows each text in its
    visual phrase (a text that its phrase goes on from is no whole label)."""
    keywords = _instruction_keywords(query.instruction)
    # looking at a thing, or going to it, names no control ("look at the final linear layer",
    # "open the members table"): only an action that an icon could draw lets a label of its
    # object alone lose to that icon
    action = frozenset(_TOKEN.findall(query.verb.lower())) & set(keywords)
    verb = action - _LOOKING - _GOING
    absent: frozenset[str] = frozenset()
    if shown is not None:
        absent = frozenset(
            k
            for k in keywords
            if k not in verb and k not in shown and not any(_same_word(k, w) for w in shown)
        )
    cache: dict[tuple[str, bool], float] = {}
    wholes = [not tail for tail in tails] if tails is not None else [True] * len(texts)
    for t, whole in zip(texts, wholes, strict=True):
        if (t, whole) not in cache:
            cache[t, whole] = _word_overlap(keywords, t, verb, absent, action, whole=whole)
    return np.array([cache[t, w] for t, w in zip(texts, wholes, strict=True)], dtype=np.float32)


# An icon's name is inferred (its glyph looks like one that is called so), a label is read: at
# equal match, a visible label wins ("click Save" with both a Save button and a floppy disk).
INFERRED = 0.9

_STOP = {"the", "a", "an", "to", "of", "and", "or", "for", "in", "on", "with", "my", "this"}


def _words(text: str) -> set[str]:
    out = set()
    for w in normalise_text(text.replace("-", " ")).split():
        if w in _STOP:
            continue
        out.add(w)
        if len(w) > 3 and w.endswith("s"):
            out.add(w[:-1])
    return out


class IconAnchor(_CandidateAnchor):
    """Elements captioned by the icon set, the captions matched to the phrase.

    A candidate's score is 0.9 x (shape confidence) x (caption match): shape confidence maps the
    glyph similarity 0.65..0.9 to 0..1; the caption match is 1.0 when the phrase is the glyph's
    name, label or an alias, 0.85 when it is one of its search terms, 0.75 when all the phrase's
    words are among those, and the embedding score of phrase against caption otherwise. A captioner (a model) replaces the
    glyph match when given.
    """

    name = "icons"

    def __init__(
        self,
        icons: IconSet,
        embedder: Embedder | None = None,
        *,
        ocr: OcrEngine | None = None,
        captioner: Any = None,
    ) -> None:
        self.icons, self.embedder, self.ocr, self.captioner = icons, embedder, ocr, captioner
        self._caption_vectors: np.ndarray | None = None
        self._vocabulary: list[tuple[set[str], set[str], set[str]]] | None = None

    def elements(self, screen: Screen) -> list[Element]:
        from lemmata.gui.icons import detect_elements

        if "elements" not in screen.cache:
            if screen.elements is not None:
                screen.cache["elements"] = list(screen.elements)
            else:
                # words read cleanly are text, not icons; a glyph read as "©Refresh" is kept, and
                # so is one read as a word in a box about as wide as it is tall (a house read
                # as "fat"): three letters or more do not fit there. Numbers of two digits or
                # more read surely are text too (a table's ids, counts), whatever their width.
                text = (
                    [
                        w.box
                        for w in screen.ocr(self.ocr).words
                        if w.conf > 0.8
                        and (
                            (
                                len(w.text) >= 3
                                and w.text.isalpha()
                                and w.box[2] - w.box[0] > 1.2 * (w.box[3] - w.box[1])
                            )
                            or (len(w.text) >= 2 and w.text.isdigit())
                        )
                    ]
                    if self.ocr is not None
                    else []
                )
                screen.cache["elements"] = detect_elements(screen.image, text_boxes=text)
        result: list[Element] = screen.cache["elements"]
        return result

    def _described(self, screen: Screen) -> tuple[list[Element], np.ndarray, np.ndarray]:
        """The screen's elements with their shape descriptors (computed once per screen)."""
        if "icon_desc" not in screen.cache:
            elements = self.elements(screen)
            crops = [_crop(screen.image, e.box, pad=2) for e in elements]
            descs, ars = self.icons.descriptors(crops)
            screen.cache["icon_desc"] = (elements, descs, ars)
        result: tuple[list[Element], np.ndarray, np.ndarray] = screen.cache["icon_desc"]
        return result

    def _vocab(self) -> list[tuple[set[str], set[str], set[str]]]:
        """Per glyph: its names (name, label, aliases), its search terms, and all their words."""
        if self._vocabulary is None:
            self._vocabulary = []
            for g in self.icons.glyphs:
                names = {normalise_text(t.replace("-", " ")) for t in (g.name, g.label, *g.aliases)}
                terms = {normalise_text(t.replace("-", " ")) for t in g.terms} - names
                words = set().union(*(_words(t) for t in names | terms))
                self._vocabulary.append((names, terms, words))
        return self._vocabulary

    def _glyph_match(self, phrase: str) -> np.ndarray:
        """The phrase's caption match against every glyph (one value per glyph)."""
        words = _words(phrase)
        joined = normalise_text(phrase.replace("-", " "))
        out = np.zeros(len(self.icons.glyphs), dtype=np.float32)
        for i, (names, terms, vocab) in enumerate(self._vocab()):
            if joined in names:
                out[i] = 1.0
            elif joined in terms:
                out[i] = 0.85
            elif words and words <= vocab:
                out[i] = 0.75
        if self.embedder is not None:
            if self._caption_vectors is None:
                vecs = self.embedder.embed([g.caption for g in self.icons.glyphs])
                self._caption_vectors = vecs / np.maximum(
                    np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9
                )
            q = self.embedder.embed([phrase])[0]
            cos = self._caption_vectors @ (q / max(float(np.linalg.norm(q)), 1e-9))
            sem = np.clip((cos - 0.55) / 0.4, 0, 1) * 0.8
            out = np.maximum(out, sem.astype(np.float32))
        return out

    def candidates(self, screen: Screen, query: Query) -> list[Candidate]:
        phrase = query.phrase.strip()
        out = []
        if self.captioner is not None:
            return self._captioned(screen, phrase)
        elements, descs, ars = self._described(screen)
        valid = np.nonzero(descs.any(axis=1))[0]
        if len(valid) == 0:
            return []
        if not phrase:  # "the icon left of Save": any icon, by how much it looks like one
            sims = self.icons.similarity(descs[valid], ars[valid])
            best = sims.argmax(axis=1)
            for row, e_i in enumerate(valid):
                conf = float(_shape(sims[row, best[row]]))
                if conf > 0:
                    g = self.icons.glyphs[int(best[row])]
                    out.append(Candidate(elements[e_i].box, 0.6 * conf, g.name, self.name, "icon"))
            return out
        match = self._glyph_match(phrase)
        wanted = np.nonzero(match >= 0.3)[0]
        if len(wanted) == 0:
            return []
        shape = _shape(self.icons.similarity(descs[valid], ars[valid], wanted))
        combined = shape * match[wanted][None, :] * INFERRED
        best = combined.argmax(axis=1)
        for row, e_i in enumerate(valid):
            score = float(combined[row, best[row]])
            if score >= 0.3:
                g = self.icons.glyphs[int(wanted[best[row]])]
                out.append(Candidate(elements[e_i].box, score, g.name, self.name, "icon"))
        out.sort(key=lambda c: -c.score)
        return _suppress(out)[:50]

    def _captioned(self, screen: Screen, phrase: str) -> list[Candidate]:
        """Candidates from a captioning model's words for each element."""
        if "captions" not in screen.cache:
            elements = self.elements(screen)
            screen.cache["captions"] = [
                (e, self.captioner.caption(_crop(screen.image, e.box, pad=2))) for e in elements
            ]
        rows: list[tuple[Element, str]] = [r for r in screen.cache["captions"] if r[1]]
        if not rows:
            return []
        if not phrase:
            return [Candidate(e.box, 0.6, cap, self.name, "icon") for e, cap in rows]
        if self.embedder is None:
            raise ValueError("an icon captioner needs an embedder to match its captions")
        cos = _cosine(self.embedder, [phrase], [cap for _, cap in rows])[0]
        out = [
            Candidate(e.box, _semantic(float(c), cap=1.0), cap, self.name, "icon")
            for (e, cap), c in zip(rows, cos, strict=True)
        ]
        out = [c for c in out if c.score >= 0.3]
        out.sort(key=lambda c: -c.score)
        return _suppress(out)[:50]


def _shape(sim: Any) -> Any:
    """Glyph similarity as confidence (a number or an array): 0.65 or less is no likeness,
    0.9 or more is sure."""
    return np.clip((sim - 0.65) / 0.25, 0.0, 1.0)


def _crop(image: PILImage.Image, box: Box, pad: int = 0) -> PILImage.Image:
    x1, y1 = max(0, int(box[0]) - pad), max(0, int(box[1]) - pad)
    x2, y2 = (
        min(image.width, int(-(-box[2] // 1)) + pad),
        min(image.height, int(-(-box[3] // 1)) + pad),
    )
    return image.crop((x1, y1, max(x2, x1 + 1), max(y2, y1 + 1)))


def _suppress(
    cands: list[Candidate], max_iou: float = 0.5, *, containment: bool = False
) -> list[Candidate]:
    """Non-maximum suppression over score-sorted candidates; with ``containment`` a box that
    holds a better one (a longer run of words around the matched ones) goes too."""
    kept: list[Candidate] = []
    for c in cands:
        if all(
            iou(c.box, k.box) < max_iou and not (containment and share_inside(k.box, c.box) > 0.8)
            for k in kept
        ):
            kept.append(c)
    return kept
