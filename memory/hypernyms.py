"""Type knowledge for list questions: WordNet's noun hierarchy, offline.

"What activities does Melanie partake in?" asks for instances of a type, and an embedding
does not place an instance near its type (for MiniLM, ``pottery`` is far from
``activities``). WordNet says it outright: one sense of *pottery* is "the craft of making
earthenware", a kind of *craft*, a kind of *activity*. This module reads the package's
compact copy of WordNet's nouns (``memory/data/wordnet_nouns.json.gz``: each noun synset's
hypernyms and lexicographer file, each lemma's synsets in WordNet's sense order, the
irregular plurals), and :class:`TypeIndex` keeps, per memory, the stored concepts under
each of their WordNet types, so that a question's type reaches its instances with one
dictionary look-up (:mod:`~lemmata.memory.kinds` uses it).

The data file is built from WordNet's own database files by
``scripts/build_wordnet_types.py``. WordNet 3.0 is Princeton University's, under the WordNet
licence (permissive: use, copy, modify and distribute, keeping the copyright notice); its
text ships beside the data as ``memory/data/WORDNET_LICENSE``.

Sense ambiguity: a word's senses are weighted by their rank in WordNet's sense order
(``1 / (1 + rank)``, the most frequent first), on both sides: the question's type and the
stored concept.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import threading
import weakref
import zlib
from collections.abc import Iterable
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.errors import DataSourceError
from lemmata.memory.text import stem

if TYPE_CHECKING:
    from lemmata.memory.log import MemoryLog
    from lemmata.memory.types import Namespace

__all__ = [
    "DEFAULT_LEXICON",
    "Lexicon",
    "TypeIndex",
    "file_concepts",
    "lexicon",
    "lexicon_status",
    "load_lexicon",
    "sense_weight",
]

DEFAULT_LEXICON = Path(__file__).resolve().parent / "data" / "wordnet_nouns.json.gz"
FORMAT = 1
_log = logging.getLogger(__name__)


def sense_weight(rank: int) -> float:
    """The weight of a word's sense by its rank in WordNet's sense order (0 = most frequent).

    >>> [round(sense_weight(r), 2) for r in range(3)]
    [1.0, 0.5, 0.33]
    """
    return 1.0 / (1.0 + rank)


class Lexicon:
    """WordNet's nouns: senses of a word, hypernyms of a sense. See the module docstring."""

    def __init__(self, data: dict[str, Any], source: str = "<data>") -> None:
        try:
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
            self.lexnames: list[str] = [str(n) for n in data["lexnames"]]
            synsets = data["synsets"]
            self._lexfile: list[int] = [int(lexfile) for lexfile, _ in synsets]
            self._parents: list[list[int]] = [parents for _, parents in synsets]
            self._lemmas: dict[str, list[int]] = data["lemmas"]
            self._exceptions: dict[str, str] = data["exceptions"]
            self._counts: dict[str, list[int]] = data["counts"]
            if not all(isinstance(x, dict) for x in (self._lemmas, self._exceptions, self._counts)):
                raise ValueError("lemmas, exceptions and counts must be objects")
            n = len(self._parents)
            ids = [*chain.from_iterable(self._parents), *chain.from_iterable(self._lemmas.values())]
            if ids and (min(ids) < 0 or max(ids) >= n):
                raise ValueError("a synset index is out of range")
            if any(not 0 <= f < len(self.lexnames) for f in self._lexfile):
                raise ValueError("a lexicographer file index is out of range")
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise DataSourceError(
                f"the WordNet lexicon {source} is not in the expected form ({e}); "
                "rebuild it with scripts/build_wordnet_types.py"
            ) from e
        self.source = source
        # stored concepts are stemmed (lemmata.memory.text.stem): one-word lemmas by stem
        by_stem: dict[str, list[str]] = {}
        for w in self._lemmas:
            if "_" not in w and "-" not in w:
                by_stem.setdefault(stem(w), []).append(w)
        self._by_stem = {k: tuple(v) for k, v in by_stem.items()}
        self.ancestors = lru_cache(maxsize=65536)(self._ancestors)
        children: list[list[int]] = [[] for _ in self._parents]
        for child, parents in enumerate(self._parents):
            for p in parents:
                children[p].append(child)
        self._children = children
        self.below = lru_cache(maxsize=65536)(self._below)

    def __len__(self) -> int:
        return len(self._parents)

    def lexname(self, synset: int) -> str:
        """The synset's lexicographer file (``noun.act``, ``noun.artifact``...)."""
        return self.lexnames[self._lexfile[synset]]

    def base_forms(self, word: str) -> list[str]:
        """The word's noun lemmas: itself, its irregular singular, its regular singulars.

        >>> lx = Lexicon({"format": 1, "lexnames": ["noun.Tops"], "synsets": [[0, []]],
        ...               "lemmas": {"child": [0], "box": [0]}, "exceptions": {"children": "child"},
        ...               "counts": {}})
        >>> lx.base_forms("Children"), lx.base_forms("boxes")
        (['child'], ['box'])
        """
        w = word.lower().strip(" '\"").replace(" ", "_")
        forms = [w]
        if w in self._exceptions:
            forms.append(self._exceptions[w])
        for suffix, repl in (
            ("ies", "y"),
            ("ses", "s"),
            ("xes", "x"),
            ("zes", "z"),
            ("ches", "ch"),
            ("shes", "sh"),
            ("men", "man"),
            ("s", ""),
        ):
            if w.endswith(suffix) and len(w) > len(suffix) + 1:
                forms.append(w[: -len(suffix)] + repl)
        return [f for f in dict.fromkeys(forms) if f in self._lemmas]

    def senses(self, word: str) -> list[tuple[int, int]]:
        """(synset, rank) of the word's noun senses, most frequent first (the first base form
        WordNet knows; a phrase like ``musical artists`` is looked up as one lemma)."""
        forms = self.base_forms(word)
        return [(s, r) for r, s in enumerate(self._lemmas[forms[0]])] if forms else []

    def sense_probabilities(self, lemma: str) -> list[float]:
        """How likely a use of the word is each of its noun senses, from the sense-tagged
        corpus's counts, with a prior of ``prior * sense_weight(rank)`` per sense (also
        ``prior`` per sense of the word as a verb, adjective or adverb, whose tagged uses
        count against the noun senses): *pottery* is mostly the ware, *start* mostly a verb.

        >>> lx = Lexicon({"format": 1, "lexnames": ["noun.Tops"], "synsets": [[0, []]],
        ...               "lemmas": {"x": [0]}, "exceptions": {}, "counts": {"x": [9, 1, 0]}})
        >>> [round(p, 2) for p in lx.sense_probabilities("x")]
        [0.05]
        """
        ids = self._lemmas.get(lemma, ())
        row = self._counts.get(lemma) or [0, 0, *[0] * len(ids)]
        other, other_senses, counts = row[0], row[1], row[2:]
        prior = 0.5
        mass = [c + prior * sense_weight(r) for r, c in enumerate(counts)]
        total = sum(mass) + other + prior * other_senses
        return [m / total for m in mass] if total > 0 else []

    def concept_senses(self, concept: str) -> list[tuple[int, float]]:
        """(synset, probability) of a stored concept's noun senses: the senses of every
        one-word lemma whose stem is the concept (``camp`` is *camp* and, at most at half
        weight, *camping*; where the concept is a lemma itself, other forms than ``-ing`` ones
        are left out), each with its :meth:`sense_probabilities`; a synset reached twice keeps
        the higher."""
        best: dict[int, float] = {}
        own = concept in self._lemmas
        # "camp" may have been "camping", or "bowl" a bowl: an -ing noun gets half of what
        # the concept's own word leaves to nouns ("start" is mostly a verb, so "starting" too)
        ing = 0.5 * sum(self.sense_probabilities(concept)) if own else 1.0
        for lemma in self._by_stem.get(concept, ()):
            if lemma == concept or not own:
                share = 1.0
            elif lemma.endswith("ing"):
                share = ing
            else:
                continue  # "heart" was not "hearts" (the card game)
            for s, p in zip(self._lemmas[lemma], self.sense_probabilities(lemma), strict=True):
                best[s] = max(share * p, best.get(s, 0.0))
        return sorted(best.items(), key=lambda sp: (-sp[1], sp[0]))

    def _ancestors(self, synset: int) -> frozenset[int]:
        """The synset and every hypernym above it, up to the top."""
        seen = {synset}
        todo = [synset]
        while todo:
            for p in self._parents[todo.pop()]:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return frozenset(seen)

    def _below(self, synset: int) -> int:
        """How many synsets lie under this one (its hyponyms, theirs, and so on)."""
        seen: set[int] = set()
        todo = [synset]
        while todo:
            for c in self._children[todo.pop()]:
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        return len(seen)

    def specificity(self, synset: int) -> float:
        """1 for a leaf, less the more synsets lie under it: ``1 / (1 + ln(1 + below))``.
        A type's instances (*pottery*, *swimming*) sit near the leaves; broad senses
        (*work*, *help*) have large subtrees."""
        return 1.0 / (1.0 + math.log1p(self.below(synset)))


def load_lexicon(path: Path | str | None = None) -> Lexicon:
    """Read the lexicon file (the package's by default); a missing or unreadable file raises
    :class:`~lemmata.errors.DataSourceError` naming it and the script that rebuilds it."""
    p = Path(path) if path is not None else DEFAULT_LEXICON
    try:
        with gzip.open(p, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError as e:
        raise DataSourceError(
            f"the WordNet lexicon {p} is missing; rebuild it with scripts/build_wordnet_types.py"
        ) from e
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataSourceError(
            f"the WordNet lexicon {p} cannot be read ({e}); "
            "rebuild it with scripts/build_wordnet_types.py"
        ) from e
    if not isinstance(data, dict):
        raise DataSourceError(
            f"the WordNet lexicon {p} is not in the expected form (not an object); "
            "rebuild it with scripts/build_wordnet_types.py"
        )
    return Lexicon(data, str(p))


_LOCK = threading.Lock()
_LOADED: dict[Path, Lexicon | DataSourceError] = {}


def lexicon(path: Path | str | None = None) -> Lexicon | None:
    """The lexicon, loaded once per process, or None when its file is missing or corrupt (a
    warning says so once, and :func:`lexicon_status` says why)."""
    p = Path(path) if path is not None else DEFAULT_LEXICON
    with _LOCK:
        got = _LOADED.get(p)
        if got is None:
            try:
                got = load_lexicon(p)
            except DataSourceError as e:
                got = e
                _log.warning("the kinds channel's type knowledge is inactive: %s", e)
            _LOADED[p] = got
    return got if isinstance(got, Lexicon) else None


def lexicon_status(path: Path | str | None = None) -> str:
    """One line: whether the type knowledge is active, and why not.

    >>> lexicon_status("/nonexistent/wordnet.json.gz").startswith("inactive: ")
    True
    """
    p = Path(path) if path is not None else DEFAULT_LEXICON
    lx = lexicon(p)
    if lx is not None:
        return f"active: {len(lx)} WordNet noun synsets from {lx.source}"
    return f"inactive: {_LOADED[p]}"


class TypeIndex:
    """Per memory and (user, agent) pair: WordNet type -> the stored concepts under it.

    Concepts are read from the log's graph nodes in rowid order, those stored since the last
    look, at most ``max_new`` per call (like the concept vectors of
    :mod:`~lemmata.memory.kinds`), so a question's type costs a dictionary look-up, not a scan.
    Each concept is filed under every ancestor of each of its senses, with the weight of its
    likeliest sense under that ancestor (the sense's probability times its
    :meth:`~Lexicon.specificity`); a type keeps its ``keep`` best concepts.
    """

    def __init__(self, max_new: int = 20000, keep: int = 256) -> None:
        if max_new < 1 or keep < 1:
            raise ValueError(f"max_new and keep must be at least 1, not {max_new} and {keep}")
        self.max_new = max_new
        self.keep = keep
        self._lock = threading.Lock()
        self._state: weakref.WeakKeyDictionary[
            object, dict[tuple[str, str], tuple[int, dict[int, dict[str, float]]]]
        ] = weakref.WeakKeyDictionary()

    def sync(self, log: MemoryLog, ns: Namespace, lx: Lexicon) -> dict[int, dict[str, float]]:
        """The pair's type -> {concept: weight} map, brought up to date."""
        key = (ns.user, ns.agent)
        with self._lock:
            per = self._state.setdefault(log, {})
            last, by_type = per.get(key, (0, {}))
            new = log.concepts_since(ns, last, self.max_new)
            if new:
                file_concepts(by_type, (name for _, name in new), lx, self.keep)
                last = max(rowid for rowid, _ in new)
            per[key] = (last, by_type)
            return by_type

    def drop(self, space: tuple[str, str]) -> None:
        """Forget what was filed for the (user, agent) pair, in every memory (after a forget,
        so no forgotten concept stays filed; the next question files what is stored)."""
        with self._lock:
            for per in self._state.values():
                per.pop(space, None)


def file_concepts(
    by_type: dict[int, dict[str, float]], concepts: Iterable[str], lx: Lexicon, keep: int = 256
) -> None:
    """File each concept under every ancestor of its senses (best sense weight kept); a type
    keeps its ``keep`` best-weighted concepts (pruned when it holds twice as many), so a broad
    type (*event*, *entity*) costs no more to read than a narrow one."""
    for c in concepts:
        for synset, p in lx.concept_senses(c):
            w = p * lx.specificity(synset)
            if w <= 0.0:
                continue
            for a in lx.ancestors(synset):
                slot = by_type.setdefault(a, {})
                if w > slot.get(c, 0.0):
                    slot[c] = w
                    if len(slot) > 2 * keep:
                        top = sorted(slot.items(), key=lambda cw: (-cw[1], cw[0]))[:keep]
                        by_type[a] = dict(top)
