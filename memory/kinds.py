"""Type-aware expansion: the ``kinds`` retrieval channel, for list questions over instances.

"What activities does Melanie partake in?" asks for instances of a type (pottery, camping,
swimming), and the question's words do not meet the instances' words, so neither BM25 nor
the query's embedding (which the whole sentence dominates) reaches them. This channel reads
the question's *head noun* (:func:`head_phrase`: ``activities``, ``LGBTQ+ events``,
``musical artists/bands``) and matches it to the memory's own concepts, the stemmed content
words and names its facts are tagged with (the entity graph's nodes, see
:mod:`~lemmata.memory.graph`), by their embeddings: the concepts nearest the head noun are
the type's likely instances (``instruments`` -> violin, piano, clarinet), and the facts
tagged with them are ranked by how near their nearest such concept is.

Indexed throughout: the concepts' vectors live in the memory's vector index, in a space of
their own beside the items' (:func:`concept_space`), so a question costs one nearest-neighbour
query there and one capped posting-list read per concept (``item_terms`` by term), at any
memory size. New concepts are embedded the first time a retrieval sees them
(:class:`ConceptVectors`: the entities stored since the last look, by rowid, at most
``max_new`` per retrieval), so the write path is unchanged; a memory written before this
channel existed catches up over its first few list questions.

Type knowledge (:func:`typed_instances`): an embedding does not place an instance near its
type (for MiniLM, ``pottery`` is the 228th concept nearest ``activities`` among 1271), so the
channel also asks WordNet (:mod:`~lemmata.memory.hypernyms`): the stored concepts that
WordNet files under the head noun's senses (*pottery*, the craft, is a kind of *activity*),
weighted by how likely each sense is. With ``RetrievalConfig.kinds_source="both"`` the
retriever fuses the two lists by reciprocal rank (the default is the embeddings alone, which
the tuning on LoCoMo's development split preferred). Where the lexicon file is missing or corrupt, a warning
says so once, :func:`~lemmata.memory.hypernyms.lexicon_status` says why, and the channel
goes on with the embeddings alone (with ``"wordnet"``, it returns nothing).
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from lemmata.errors import ConfigError
from lemmata.memory.hypernyms import Lexicon, TypeIndex, lexicon, sense_weight

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.memory.index import VectorIndex
    from lemmata.memory.log import MemoryLog
    from lemmata.memory.types import Namespace

__all__ = [
    "ConceptVectors",
    "aggregate_question",
    "concept_space",
    "drop_concepts",
    "head_phrase",
    "instances",
    "joined_people",
    "question_focus",
    "rank_items",
    "type_senses",
    "typed_instances",
]

_AUX = (
    "has|have|had|does|do|did|is|are|was|were|can|could|would|will|should|might|may|made|make|makes"
)
# "What [kind(s)|type(s)|sort(s) of] <up to four words> <auxiliary>": the words are the type
_WHAT_NOUN = re.compile(
    rf"^\s*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?"
    rf"((?:[\w+'/&-]+\s+){{1,4}}?)(?:{_AUX})\b",
    re.IGNORECASE,
)
# "What are <Name>'s <words>?": the words after the possessive
_WHAT_ARE = re.compile(
    r"^\s*(?:what|which)\s+(?:are|were)\s+[\w-]+'s?\s+([\w+'/&-]+)",
    re.IGNORECASE,
)
# head nouns that name no type whose instances a memory holds
_NOT_TYPES = frozenset(
    [
        "time",
        "times",
        "day",
        "days",
        "year",
        "years",
        "month",
        "months",
        "date",
        "week",
        "weeks",
        "way",
        "ways",
        "thing",
        "things",
        "kind",
        "kinds",
        "type",
        "types",
        "sort",
        "sorts",
        "one",
        "ones",
        "reason",
        "reasons",
        "something",
        "anything",
    ]
)
_DETERMINERS = frozenset(["a", "an", "the", "some", "any", "other", "all"])


def head_phrase(question: str) -> str | None:
    """The type a list question asks for (its head noun and the words before it), or None.

    >>> head_phrase("What activities does Melanie partake in?")
    'activities'
    >>> head_phrase("What LGBTQ+ events has Caroline participated in?")
    'LGBTQ+ events'
    >>> head_phrase("What are Melanie's pets' names?")
    "pets'"
    >>> head_phrase("What did Caroline research?") is None
    True
    """
    m = _WHAT_NOUN.match(question)
    words: list[str] = m.group(1).split() if m else []
    if not words:
        m2 = _WHAT_ARE.match(question)
        if m2:
            words = m2.group(1).split()[:1]
    words = [w for w in words if w.lower() not in _DETERMINERS]
    if not words or words[-1].lower().strip("'") in _NOT_TYPES or words[-1][:1].isupper():
        return None
    if re.fullmatch(_AUX, words[0], re.IGNORECASE):
        return None
    return " ".join(words)


# words of a question's frame, not of what it asks about
# fmt: off
_FRAME = frozenset([
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "does", "do", "did",
    "has", "have", "had", "is", "are", "was", "were", "can", "could", "would", "will", "should",
    "might", "may", "the", "a", "an", "of", "her", "his", "their", "its", "both", "and", "s",
])
# fmt: on


def question_focus(question: str, people: Sequence[str] = ()) -> str:
    """What a question about ``people`` asks about: its words without the people's names and
    the question's frame ("What activities has Melanie done with her family?" ->
    "activities done with family").

    >>> question_focus("What is Caroline's relationship status?", ["Caroline"])
    'relationship status'
    """
    drop = {p.lower() for p in people}
    words = re.findall(r"[\w+&-]+", question)
    return " ".join(w for w in words if w.lower() not in drop and w.lower() not in _FRAME)


# words that ask for several things or a count rather than one fact
_AGGREGATE = re.compile(
    r"\b(?:how\s+many|how\s+often|(?:kinds?|types?|sorts?)\s+of|some|things|ways|activities|"
    r"items|ever|both|all|any)\b",
    re.IGNORECASE,
)


def aggregate_question(question: str) -> bool:
    """Whether ``question`` asks for several things or a count ("What activities ...",
    "How many times ...", "What has X ever ...", "What do X and Y both ..."), so that no one
    stored turn answers it: a plural head noun (:func:`head_phrase`) or a word of number.

    >>> aggregate_question("What books has John read?")
    True
    >>> aggregate_question("What did Audrey do with her pups over the weekend?")
    False
    """
    head = head_phrase(question)
    if head is not None and head.split()[-1].lower().rstrip("'").endswith("s"):
        return True
    return _AGGREGATE.search(question) is not None


def joined_people(question: str, people: Sequence[str]) -> list[str]:
    """Of ``people`` (names the question holds), those it joins by "and" or "&" as one
    subject ("What do Jon and Gina both like?", "Tim and John's favourite player"): each one's
    own turns answer it. Empty unless two are joined.

    >>> joined_people("What do Jon and Gina both like?", ["Jon", "Gina"])
    ['Jon', 'Gina']
    >>> joined_people("What did Jon tell Gina?", ["Jon", "Gina"])
    []
    """
    for a in people:
        for b in people:
            if a != b and re.search(
                rf"\b{re.escape(a)}\s+(?:and|&)\s+{re.escape(b)}\b", question, re.IGNORECASE
            ):
                return [a, b]
    return []


def concept_space(space: tuple[str, str]) -> tuple[str, str]:
    """The vector index's space for a (user, agent) pair's concepts (an agent name holds no
    ``\\x1e``, so no pair's items share it)."""
    return (space[0], f"{space[1]}\x1econcepts")


class ConceptVectors:
    """Keeps a memory's concept vectors in its vector index, embedding new concepts when a
    retrieval first needs them.

    What has been embedded is remembered per index object and space as the highest
    ``entities`` rowid seen; a new process checks once whether the index holds as many
    concepts as the log, and embeds them all again (the embedder's cache makes this cheap)
    when not. At most ``max_new`` concepts are embedded per call, so no one retrieval waits
    for a large backlog.
    """

    def __init__(self, max_new: int = 1024) -> None:
        if max_new < 1:
            raise ValueError(f"max_new must be at least 1, not {max_new}")
        self.max_new = max_new
        self._lock = threading.Lock()
        self._seen: weakref.WeakKeyDictionary[object, dict[tuple[str, str], int]] = (
            weakref.WeakKeyDictionary()
        )

    def sync(self, log: MemoryLog, index: VectorIndex, embedder: Embedder, ns: Namespace) -> None:
        space = concept_space((ns.user, ns.agent))
        with self._lock:
            seen = self._seen.setdefault(index, {})
            last = seen.get(space)
            if last is None:
                stored = log.concept_count(ns)
                try:
                    held = index.count(space)
                except ConfigError:
                    # built with another embedder (the items' index was rebuilt since):
                    # the concepts' vectors are derived data, so they are rebuilt too
                    index.drop(space)
                    held = 0
                last = log.last_concept_rowid(ns) if held >= stored else 0
            new = log.concepts_since(ns, last, self.max_new)
            if new:
                names = [name for _, name in new]
                index.add(space, names, embedder.embed(names), [{"c": 1} for _ in names])
                last = max(rowid for rowid, _ in new)
            seen[space] = last

    def drop(self, index: VectorIndex, space: tuple[str, str]) -> None:
        """Remove the (user, agent) pair's concept vectors from ``index`` and forget what was
        embedded, so the next retrieval that needs them embeds the concepts still stored."""
        cspace = concept_space(space)
        with self._lock:
            index.drop(cspace)
            self._seen.setdefault(index, {}).pop(cspace, None)


_VECTORS = ConceptVectors()
_TYPES = TypeIndex()


def drop_concepts(index: VectorIndex, space: tuple[str, str]) -> None:
    """Drop a (user, agent) pair's concept vectors (their ids are the concepts' own words):
    after a forget, so no word only forgotten facts held stays on disk, and after a reindex,
    whose embedder may differ; and the concepts filed under their WordNet types. They are
    derived data, rebuilt when a list question next needs them."""
    _VECTORS.drop(index, space)
    _TYPES.drop(space)


def instances(
    log: MemoryLog,
    index: VectorIndex,
    embedder: Embedder,
    ns: Namespace,
    question: str,
    *,
    concepts: int,
    min_similarity: float,
    limit: int,
    max_df: int,
    max_postings: int = 1000,
    vectors: ConceptVectors | None = None,
    speaker: str | None = None,
) -> list[str]:
    """Item ids tagged with the stored concepts nearest the question's head noun, best first
    (empty for a question that asks for no type). See the module docstring. ``speaker``:
    only what that person said (the question's subject, where it names one speaker)."""
    head = head_phrase(question)
    if head is None:
        return []
    (vectors or _VECTORS).sync(log, index, embedder, ns)
    vec = np.asarray(embedder.embed([head.replace("/", " or ")])[0], np.float32)
    near = index.query(concept_space((ns.user, ns.agent)), vec[None, :], concepts)[0]
    scored = [(c, 1.0 - d) for c, d in near if 1.0 - d >= min_similarity]
    pairs = log.items_of_terms(ns, [c for c, _ in scored], max_df=max_df, max_postings=max_postings)
    if speaker is not None:
        said = log.speakers_of(ns, list(dict.fromkeys(i for i, _ in pairs)))
        who = speaker.lower()
        pairs = [(i, t) for i, t in pairs if who in {s.lower() for s in said.get(i, ())}]
    return rank_items(pairs, dict(scored), limit)


def rank_items(
    pairs: Sequence[tuple[str, str]], similarity: dict[str, float], limit: int
) -> list[str]:
    """Items ordered by their nearest concept's similarity, then by how many concepts they
    carry (ties by first appearance).

    >>> rank_items([("a", "x"), ("b", "y"), ("b", "x")], {"x": 0.5, "y": 0.7}, 5)
    ['b', 'a']
    """
    best: dict[str, tuple[float, int]] = {}
    for item, term in pairs:
        s = similarity.get(term, 0.0)
        top, n = best.get(item, (0.0, 0))
        best[item] = (max(top, s), n + 1)
    return sorted(best, key=lambda i: (-best[i][0], -best[i][1]))[:limit]


def type_senses(head: str, lx: Lexicon) -> dict[int, float]:
    """WordNet synset -> weight for a head phrase's type: each ``/`` alternative looked up as
    one lemma (``musical artists`` -> *musical_artist*), else by its last word, each sense
    weighted by its rank (:func:`~lemmata.memory.hypernyms.sense_weight`).

    >>> from lemmata.memory.hypernyms import lexicon
    >>> lx = lexicon()
    >>> lx is not None and len(type_senses("musical artists/bands", lx)) > 1
    True
    """
    out: dict[int, float] = {}
    for alt in head.split("/"):
        words = [w.strip("'") for w in re.findall(r"[\w'-]+", alt)]
        words = [w for w in words if w]
        if not words:
            continue
        senses = lx.senses(" ".join(words)) if len(words) > 1 else []
        senses = senses or lx.senses(words[-1])
        for synset, rank in senses:
            out[synset] = max(out.get(synset, 0.0), sense_weight(rank))
    return out


def typed_instances(
    log: MemoryLog,
    ns: Namespace,
    question: str,
    *,
    limit: int,
    max_df: int,
    max_concepts: int = 64,
    max_postings: int = 1000,
    speaker: str | None = None,
    lx: Lexicon | None = None,
    types: TypeIndex | None = None,
) -> list[str]:
    """Item ids tagged with stored concepts that WordNet files under the question's type
    (``activities`` -> pottery, camping, hiking), best first: a concept scores the weight of
    the type's sense times that of its own sense under it, and at most ``max_concepts``
    concepts are read. Empty for a question that asks for no type, and while the lexicon is
    inactive (see :func:`~lemmata.memory.hypernyms.lexicon_status`). ``speaker``: only what
    that person said."""
    head = head_phrase(question)
    if head is None:
        return []
    lx = lx if lx is not None else lexicon()
    if lx is None:
        return []
    wanted = type_senses(head, lx)
    if not wanted:
        return []
    by_type = (types or _TYPES).sync(log, ns, lx)
    score: dict[str, float] = {}
    for synset, tw in wanted.items():
        for concept, cw in by_type.get(synset, {}).items():
            if tw * cw > score.get(concept, 0.0):
                score[concept] = tw * cw
    best = sorted(score, key=lambda c: (-score[c], c))[:max_concepts]
    pairs = log.items_of_terms(ns, best, max_df=max_df, max_postings=max_postings)
    if speaker is not None:
        said = log.speakers_of(ns, list(dict.fromkeys(i for i, _ in pairs)))
        who = speaker.lower()
        pairs = [(i, t) for i, t in pairs if who in {s.lower() for s in said.get(i, ())}]
    return rank_items(pairs, score, limit)
