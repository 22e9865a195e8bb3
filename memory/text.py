"""Text helpers shared by extraction, indexing and retrieval: tokens, terms, sentences, entities.

Everything here is deterministic and dependency-free, so the offline path gives the same
memory on every machine.

>>> count_tokens("Caroline went to a support group.")
7
>>> terms("Caroline went to the LGBTQ support groups")
['caroline', 'went', 'lgbtq', 'support', 'group']
>>> split_sentences("I went there. It was great! Was it? Yes.")
['I went there.', 'It was great!', 'Was it?', 'Yes.']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "STOPWORDS",
    "count_tokens",
    "entities",
    "fts_query",
    "fts_words",
    "normalise",
    "split_sentences",
    "stem",
    "terms",
]

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren't",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "can't",
        "cannot",
        "could",
        "couldn't",
        "did",
        "didn't",
        "do",
        "does",
        "doesn't",
        "doing",
        "don't",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "hadn't",
        "has",
        "hasn't",
        "have",
        "haven't",
        "having",
        "he",
        "he'd",
        "he'll",
        "he's",
        "her",
        "here",
        "here's",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "how's",
        "i",
        "i'd",
        "i'll",
        "i'm",
        "i've",
        "if",
        "in",
        "into",
        "is",
        "isn't",
        "it",
        "it's",
        "its",
        "itself",
        "let's",
        "me",
        "more",
        "most",
        "mustn't",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shan't",
        "she",
        "she'd",
        "she'll",
        "she's",
        "should",
        "shouldn't",
        "so",
        "some",
        "such",
        "than",
        "that",
        "that's",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "there's",
        "these",
        "they",
        "they'd",
        "they'll",
        "they're",
        "they've",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "wasn't",
        "we",
        "we'd",
        "we'll",
        "we're",
        "we've",
        "were",
        "weren't",
        "what",
        "what's",
        "when",
        "when's",
        "where",
        "where's",
        "which",
        "while",
        "who",
        "who's",
        "whom",
        "why",
        "why's",
        "with",
        "won't",
        "would",
        "wouldn't",
        "you",
        "you'd",
        "you'll",
        "you're",
        "you've",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "just",
        "really",
        "so",
        "yeah",
        "yes",
        "oh",
        "hey",
        "hi",
        "hello",
        "wow",
        "thanks",
        "thank",
        "okay",
        "ok",
        "like",
        "get",
        "got",
        "much",
        "many",
        "lot",
        "lots",
        "well",
        "sure",
        "still",
        "even",
        "will",
    ]
)


def count_tokens(text: str) -> int:
    """Tokens of context as this package counts them: words and punctuation marks.

    One rule for every retriever compared (ours and the baselines); it tracks subword tokenizer
    counts for English prose within a few per cent, without loading a tokenizer.
    """
    return len(_TOKEN.findall(text))


def stem(word: str) -> str:
    """A light, predictable stemmer: plural and verb endings only (``groups`` -> ``group``)."""
    w = word.lower().strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 5 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def terms(text: str) -> list[str]:
    """Content terms of ``text``: lowercased, stemmed, stopwords dropped, in order, unique."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text):
        low = word.lower()
        if low in STOPWORDS or len(low) < 2:
            continue
        seen.setdefault(stem(low), None)
    return list(seen)


def normalise(text: str) -> str:
    """The comparison form of a statement: lowercase words only, single spaces."""
    return " ".join(w.lower() for w in _WORD.findall(text))


_ABBREV = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e)\.$", re.I)
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences at ``.``, ``!`` and ``?`` before a capital, keeping
    abbreviations (``Dr. Smith``) together."""
    text = " ".join(text.split())
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        piece = text[start : m.start()].strip()
        if _ABBREV.search(piece):
            continue
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


_CAP = re.compile(r"\b[A-Z][a-zA-Z0-9'\-]*(?:\s+(?:of\s+|the\s+)?[A-Z][a-zA-Z0-9'\-]*)*")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_NOT_NAMES = frozenset(
    [
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "the",
        "a",
        "an",
        "it",
        "this",
        "that",
        "these",
        "those",
        "my",
        "your",
        "our",
        "his",
        "her",
        "their",
        "we",
        "you",
        "he",
        "she",
        "they",
        "what",
        "when",
        "where",
        "why",
        "how",
        "who",
        "which",
        "wow",
        "hey",
        "hi",
        "hello",
        "oh",
        "yes",
        "yeah",
        "no",
        "thanks",
        "thank",
        "sure",
        "ok",
        "okay",
        "congrats",
        "congratulations",
        "awesome",
        "great",
        "cool",
        "nice",
        "good",
        "amazing",
    ]
)


def entities(text: str) -> list[str]:
    """Named things in ``text``: capitalised word runs (``Pride Parade``) and numbers.

    Lowercased and unique. A capitalised first word counts only when it is not a common
    sentence opener (``The``, ``I``, ``Wow``...).
    """
    found: dict[str, None] = {}
    for m in _CAP.finditer(text):
        words = m.group(0).split()
        while words and words[0].lower().strip("'") in _NOT_NAMES:
            words = words[1:]
        if not words:
            continue
        name = " ".join(words).strip("'-").lower()
        name = re.sub(r"'s$", "", name)
        if len(name) > 1 and name not in STOPWORDS:
            found.setdefault(name, None)
    for m in _NUMBER.finditer(text):
        found.setdefault(m.group(0), None)
    return list(found)


def fts_words(text: str, *, max_terms: int = 24) -> list[str]:
    """The words of free text that a full-text query uses: lowercased, no stopwords, each once.

    >>> fts_words("Where does Caroline's sister live?")
    ["caroline's", 'sister', 'live']
    """
    words: dict[str, None] = {}
    for word in _WORD.findall(text):
        low = word.lower().strip("'-")
        if low in STOPWORDS or len(low) < 2:
            continue
        words.setdefault(low.replace('"', ""), None)
    return list(words)[:max_terms]


def fts_query(text: str | Sequence[str], *, max_terms: int = 24) -> str | None:
    """An FTS5 ``MATCH`` expression (terms joined by OR, each quoted) for free text, or for
    words already chosen.

    Quoting makes any user text safe: FTS5 syntax in a query is matched literally. The index
    uses the Porter stemmer, so ``groups`` in a query finds ``group``.
    """
    words = fts_words(text, max_terms=max_terms) if isinstance(text, str) else list(text)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)
