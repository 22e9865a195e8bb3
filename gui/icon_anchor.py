"""The icon anchor for icons of any set: each element's crop through the icon encoder
(:mod:`~lemmata.gui.icon_model`), scored against the instruction's meaning in the text space.

Two steps, image to concept and concept to instruction. The encoder gives each element a
distribution over the functional concepts of ``data/icon_concepts.json``: a softmax of its
similarity to each concept's text in the shared space, at the encoder's learned temperature,
mixed half and half with a softmax of its similarity to each concept's prototype (the mean
embedding of that concept's glyphs in the training sets, shipped with the weights); where the
prototypes name a concept added to the table after the encoder was trained (its text never
learned: ``text_concepts`` in the weights lists those that were), they speak alone. MiniLM
compares the instruction with each concept's text (name, gloss, other names), mapping the
cosine from ``MATCH_LOW`` (no match) to ``MATCH_HIGH`` (sure), and giving the concepts the
instruction comes nearest at least ``RELATIVE`` (:func:`concept_match`), unless the instruction
names a label to read ("click the Export button": :func:`names_a_label`), which the text anchor
finds or, when absent, nothing should. The element's score is
``INFERRED x`` the expected match under its distribution: high only when the element looks like
a concept the instruction asks for, so "the rocket icon" finds nothing on a screen without one.
(Scoring the instruction's vector against the image directly was measured weaker on the
development screens: the image side places the concept first far more often than it places a
free-form instruction first.)

With ``glyphs`` (the Font Awesome set) the old shape match is kept beside it: the better of the
two scores wins, so screens drawn with Font Awesome keep their exact-shape matches.

When the encoder cannot be loaded the anchor says so (:attr:`inactive`) and contributes only the
glyph match, or nothing; grounding goes on with the other anchors.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from lemmata.gui.anchors import INFERRED, Candidate, IconAnchor, Screen, _crop, _suppress
from lemmata.gui.instruction import CONCERNS_NAME, Query

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.gui.icon_model import IconEncoder
    from lemmata.gui.icons import IconSet
    from lemmata.gui.ocr import OcrEngine

__all__ = ["EncodedIconAnchor", "concept_match", "names_a_label", "query_texts"]

MATCH_LOW, MATCH_HIGH = 0.35, 0.65  # MiniLM cosine of instruction and concept text: none, sure
# the concepts an instruction comes nearest: functional wordings sit at low cosines from every
# concept text ("see the time" ~ clock 0.38), so nearness counts beside the cosine itself
RELATIVE, RELATIVE_MARGIN, RELATIVE_FLOOR = 0.75, 0.03, 0.25
SHARPEN = 3.0  # the learned temperature spreads a crop over near concepts; a screen needs one
# share of the prototype reading (nearest mean embedding of the seen sets' glyphs of a concept)
# in a crop's distribution over concepts, the rest from the concept texts: 0.5 was best of
# 0.3 / 0.5 / 0.7 classifying each seen set's glyphs with prototypes from the other seen sets
PROTOTYPE_WEIGHT = 0.5
# "any icon" ("the icon left of Save"): the cosine of a crop to its nearest prototype (or concept
# text) below which it is no icon and above which surely one; on development screens the
# icons' prototype cosines lie at 0.76-0.95 (5th to 90th percentile)
ANY_ICON = {"prototypes": (0.6, 0.8), "texts": (0.35, 0.55)}


class EncodedIconAnchor(IconAnchor):
    """Icons of any set matched by meaning (see the module docstring)."""

    name = "icons"

    def __init__(
        self,
        encoder: IconEncoder | None,
        embedder: Embedder,
        *,
        ocr: OcrEngine | None = None,
        glyphs: IconSet | None = None,
        inactive: str | None = None,
    ) -> None:
        super().__init__(glyphs, embedder, ocr=ocr)  # type: ignore[arg-type]
        self.encoder = encoder
        self.inactive = inactive if encoder is None else None
        if encoder is None and self.inactive is None:
            self.inactive = "no icon encoder given"
        self._queries: dict[str, np.ndarray] = {}
        self._concepts: tuple[list[str], np.ndarray, np.ndarray] | None = None
        self._protos: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def load(
        cls,
        embedder: Embedder,
        *,
        weights: Any = None,
        ocr: OcrEngine | None = None,
        glyphs: IconSet | None = None,
    ) -> EncodedIconAnchor:
        """The anchor with the shipped (or ``weights``) encoder; inactive, with the reason, when
        the weights cannot be read."""
        from lemmata.gui.icon_model import IconModelError, load_encoder

        try:
            return cls(load_encoder(weights), embedder, ocr=ocr, glyphs=glyphs)
        except IconModelError as exc:
            return cls(None, embedder, ocr=ocr, glyphs=glyphs, inactive=str(exc))

    # -- text side -----------------------------------------------------------------------------

    def _query_vector(self, text: str) -> np.ndarray:
        if text not in self._queries:
            assert self.encoder is not None and self.embedder is not None
            raw = np.asarray(self.embedder.embed([text]), dtype=np.float32)
            self._queries[text] = np.concatenate([raw, self.encoder.texts(raw)])
            if len(self._queries) > 256:
                self._queries.pop(next(iter(self._queries)))
        return self._queries[text]

    def _concept_vectors(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The functional concepts: names, raw MiniLM vectors, vectors in the shared space."""
        if self._concepts is None:
            from lemmata.gui.icon_library import concepts, icon_text

            assert self.encoder is not None and self.embedder is not None
            table = concepts()
            names = sorted(table.gloss)
            raw = np.asarray(
                self.embedder.embed([icon_text(c, table.names[c], table=table) for c in names]),
                dtype=np.float32,
            )
            raw = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-9)
            self._concepts = (names, raw, self.encoder.texts(raw))
        return self._concepts

    def _prototypes(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The encoder's prototypes in the order of the functional concepts, and which exist."""
        if self._protos is None:
            assert self.encoder is not None
            if self.encoder.prototypes is None or not len(self.encoder.prototypes[0]):
                self._protos = (np.zeros(0), np.zeros(0, bool))
            else:
                names = self._concept_vectors()[0]
                at = {c: i for i, c in enumerate(self.encoder.prototypes[0])}
                vecs = np.zeros((len(names), self.encoder.prototypes[1].shape[1]), np.float32)
                has = np.array([c in at for c in names])
                for i, c in enumerate(names):
                    if c in at:
                        vecs[i] = self.encoder.prototypes[1][at[c]]
                self._protos = (vecs, has)
        return self._protos if self._protos[1].any() else None

    def _untrained_text(self) -> np.ndarray:
        """Per functional concept: whether the encoder was trained without its text (a concept
        added to the table later, read by its prototype alone; ``text_concepts`` in the
        weights' metadata lists those it trained on; without it, all count as trained)."""
        assert self.encoder is not None
        names = self._concept_vectors()[0]
        trained = self.encoder.meta.get("text_concepts")
        if not trained:
            return np.zeros(len(names), bool)
        known = set(trained)
        return np.array([c not in known for c in names])

    # -- image side ----------------------------------------------------------------------------

    def _encoded(self, screen: Screen) -> tuple[list[Any], np.ndarray, np.ndarray]:
        if "icon_enc" not in screen.cache:
            from lemmata.gui.icon_model import prepare_crops

            assert self.encoder is not None
            elements = self.elements(screen)
            squares, ok = prepare_crops([_crop(screen.image, e.box, pad=2) for e in elements])
            emb = np.zeros((len(elements), self.encoder.net.head.out_features), np.float32)
            if ok.any():
                emb[ok] = self.encoder.images(squares[ok])
            screen.cache["icon_enc"] = (elements, emb, ok)
        result: tuple[list[Any], np.ndarray, np.ndarray] = screen.cache["icon_enc"]
        return result

    def scores(
        self, screen: Screen, texts: list[str], relative: frozenset[str] = frozenset()
    ) -> tuple[list[Any], np.ndarray]:
        """(elements, scores): each element's best score over ``texts`` (the wordings of one
        instruction), as the module docstring says; the concepts nearest a text in ``relative``
        count as asked for (see :func:`concept_match`)."""
        elements, emb, ok = self._encoded(screen)
        if not ok.any() or not texts:
            return elements, np.zeros(len(elements), np.float32)
        _, raw_c, shared_c = self._concept_vectors()
        assert self.encoder is not None
        scale = SHARPEN * float(self.encoder.net.logit_scale.detach().exp().clamp(max=100))
        probs = _softmax(scale * (emb @ shared_c.T))  # elements x concepts
        protos = self._prototypes()
        if protos is not None:
            by_proto = _softmax(np.where(protos[1], scale * (emb @ protos[0].T), -np.inf))
            # a concept added to the table after training has a prototype but a text the
            # encoder never learned to read: where the prototypes name one, they speak alone
            weight = np.where(
                self._untrained_text()[by_proto.argmax(axis=1)], 1.0, PROTOTYPE_WEIGHT
            )[:, None]
            probs = (1 - weight) * probs + weight * by_proto
        best = np.zeros(len(elements), np.float32)
        for text in texts:
            raw_q = self._query_vector(text)[0]
            raw_q = raw_q / max(float(np.linalg.norm(raw_q)), 1e-9)
            match = concept_match(raw_c @ raw_q, relative=text in relative)
            best = np.maximum(best, (INFERRED * (probs @ match)).astype(np.float32))
        best[~ok] = 0.0
        return elements, best

    def any_icon(self, screen: Screen) -> list[Candidate]:
        """Every element by how much it looks like an icon of some concept: its cosine to the
        nearest concept prototype (or, without prototypes, concept text) mapped from
        ``ANY_ICON`` (none) to sure, times the 0.6 the glyph match gives "any icon"."""
        elements, emb, ok = self._encoded(screen)
        if not ok.any():
            return []
        protos = self._prototypes()
        if protos is not None:
            near = (emb @ protos[0][protos[1]].T).max(axis=1)
            low, high = ANY_ICON["prototypes"]
        else:
            near = (emb @ self._concept_vectors()[2].T).max(axis=1)
            low, high = ANY_ICON["texts"]
        conf = np.clip((near - low) / (high - low), 0.0, 1.0)
        return [
            Candidate(e.box, 0.6 * float(c), "icon", self.name, "icon")
            for e, c, k in zip(elements, conf, ok, strict=True)
            if k and c > 0
        ]

    def candidates(self, screen: Screen, query: Query) -> list[Candidate]:
        glyph = super().candidates(screen, query) if self.icons is not None else []
        if self.encoder is None:
            return glyph
        texts = query_texts(query)
        if not texts:  # "the icon left of Save": any icon-like element, as the glyph match does
            return _suppress(sorted(glyph + self.any_icon(screen), key=lambda c: -c.score))[:50]
        # nearness counts for every wording, unless the instruction names a label to read
        # ("click the Export button": a text target that may be absent, not a concept)
        # the bare action counts by its cosine alone: a lone verb ("open") comes nearest some
        # concept at a low cosine, which nearness would turn into a match
        bare = {getattr(query, "verb", ""), getattr(query, "verb_phrase", "")}
        relative = frozenset() if names_a_label(query) else frozenset(texts) - bare
        elements, scores = self.scores(screen, texts, relative)
        out = list(glyph)
        for e, s in zip(elements, scores, strict=True):
            if s >= 0.3:
                out.append(Candidate(e.box, float(s), texts[0], self.name, "icon"))
        out.sort(key=lambda c: -c.score)
        return _suppress(out)[:50]


def concept_match(cos: np.ndarray, *, relative: bool = True) -> np.ndarray:
    """How surely an instruction asks for each concept, from the MiniLM cosines of the
    instruction with each concept's text: the cosine mapped from ``MATCH_LOW`` to
    ``MATCH_HIGH``, or ``RELATIVE`` for the concepts the instruction comes closest to (within
    ``RELATIVE_MARGIN`` of the best, and above ``RELATIVE_FLOOR``): "like this post" is nearest
    the concept "like" at a cosine of only 0.29."""
    absolute = np.clip((cos - MATCH_LOW) / (MATCH_HIGH - MATCH_LOW), 0.0, 1.0)
    if not relative or not len(cos):
        return absolute
    near = (cos >= cos.max() - RELATIVE_MARGIN) & (cos >= RELATIVE_FLOOR)
    out: np.ndarray = np.maximum(absolute, np.where(near, RELATIVE, 0.0))
    return out


def names_a_label(query: Query) -> bool:
    """Whether the instruction names a text label the user expects to read on the screen (the
    OCR anchor's target), so that an icon should match it by its cosine alone: a quoted phrase,
    or a phrase with a capitalised word ("click the Export button", "click Publish", "open
    Settings"), the first word of the instruction counting only when every word of the phrase
    is capitalised ("Export" alone, not "Close this panel"), and a name after "with", "about",
    "for", "of" or "from" not counting: it says what the action concerns ("get help with
    TensorBoard"). An instruction that says it wants an icon ("click the Settings icon") names a
    concept, not a label."""
    if query.kind == "icon":
        return False
    if query.kind == "text":  # only a quoted phrase makes the kind "text"
        return True
    words = [w for w in query.phrase.split() if w[:1].isalpha()]
    words = [w for w in words if w != "I" and not w.startswith(("I'", "I’"))]  # "that I like"
    if not words:
        return False
    capital = [w[:1].isupper() for w in words]
    # a name after "with", "about", "for", "of", "from" is what the action concerns, not a
    # label to click ("get help with TensorBoard", "learn more about Bokeh")
    concerns = [i > 0 and words[i - 1].lower() in _CONCERNING for i in range(len(words))]
    first = query.instruction.split()[0] if query.instruction.split() else ""
    starts = bool(first) and first.strip("\"'“”‘’,;:") == words[0]
    counted = [c and not k for c, k in zip(capital, concerns, strict=True)]
    return all(capital) or any(counted[1:] if starts else counted)


_CONCERNING = frozenset({"with", "about", "for", "of", "from"})


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax; -inf entries get zero."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return out


def query_texts(query: Query) -> list[str]:
    """The wordings of an instruction the icon encoder reads: the phrase, the action the user
    asked for ("delete the selection") when it says more than the phrase, the action alone
    without its object ("reload the runs" -> "reload": an icon draws the action, while the
    object is what it acts on, often named nowhere near it), and the whole instruction as
    written ("open the main menu": the phrase loses "menu" as a role word), without an owner
    named in a possessive ("open the eval loss chart's overflow menu" -> "open the overflow
    menu") or a closing name the action concerns ("get help with TensorBoard" -> "get help")."""
    out = [query.phrase.strip()] if query.phrase.strip() else []
    action = getattr(query, "action_text", "")
    if action and action not in out:
        out.append(action)
    for bare in (getattr(query, "verb", ""), getattr(query, "verb_phrase", "")):
        if bare and bare not in out:
            out.append(bare)
    if query.relation is None and query.kind != "text":
        whole = " ".join(query.instruction.split())
        for text in (whole, _POSSESSIVE.sub(r"\1 ", whole), CONCERNS_NAME.sub("", whole)):
            text = " ".join(text.split())
            if text and text not in out:
                out.append(text)
    return out


# "the eval loss chart's ": a determiner, up to three words and a possessive, kept as the
# determiner
_POSSESSIVE = re.compile(r"\b(the|a|an|my|this|its|your)\s+(?:[\w-]+\s+){0,3}?[\w-]+['’]s\s+", re.I)
