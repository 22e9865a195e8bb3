"""Lemma retrieval for a reference the verifier does not know: ask Coq's ``Search`` for names
sharing its parts, and rank them by BM25 against the missing name and the goal.

A draft (a model's, a user's) often names a lemma that does not exist in this version of the
library (``Rmult_le_compat_l2``, ``Nat.add_comm'``); the nearest real names usually share most
of its parts.

>>> unknown_name("The reference Rmult_le_compat_l2 was not found in the current environment.")
'Rmult_le_compat_l2'
>>> search_command("Rmult_le_compat_l2")
'Search "Rmult" "le" "compat".'
>>> rank(["Rplus_le_compat_l", "Rmult_le_compat_r", "Rmult_le_compat_l"], "Rmult_le_compat_l2", "")[0]
'Rmult_le_compat_l'
"""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = [
    "goal_pattern",
    "shape_words",
    "parse_names",
    "rank",
    "search_command",
    "tokens",
    "unknown_name",
    "uses",
]

_UNKNOWN = re.compile(
    r"(?:reference|variable|identifier|constant)\s+`?([A-Za-z_][\w.']*)`?\s+(?:was )?not found"
    r"|[Uu]nknown (?:identifier|constant) '?`?([A-Za-z_][\w.']*)"
)
_NAME_LINE = re.compile(r"^([A-Za-z_][\w.']*)\s*:", re.M)


def unknown_name(message: str) -> str | None:
    """The name an "unknown reference" message is about."""
    m = _UNKNOWN.search(message)
    return (m.group(1) or m.group(2)) if m else None


def tokens(name: str) -> list[str]:
    """``Nat.add_le_mono_l`` -> ``["nat", "add", "le", "mono", "l"]``; camel case split too."""
    parts = re.split(r"[._']+|(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=\d)", name)
    return [p.lower() for p in parts if p]


def search_command(name: str) -> str:
    """A ``Search`` for names containing the name's three longest parts (Coq matches each
    string as a substring of the name)."""
    parts = [p for p in re.split(r"[._']+", name) if len(p) >= 2 and not p.isdigit()]
    chosen = sorted(dict.fromkeys(parts), key=lambda p: -len(p))[:3]
    keep = [p for p in parts if p in chosen][:3] or [name]
    return "Search " + " ".join(f'"{p}"' for p in dict.fromkeys(keep)) + "."


def parse_names(output: str) -> list[str]:
    """The lemma names in what ``Search`` printed, in order."""
    return list(dict.fromkeys(_NAME_LINE.findall(output)))


def rank(names: list[str], unknown: str, goal: str, k: int = 5) -> list[str]:
    """The ``k`` names nearest the unknown one (its parts weigh double) and the goal's words,
    by BM25 over name parts; ties keep Coq's order."""
    if not names:
        return []
    docs = [tokens(n.split(".")[-1]) + tokens(n) for n in names]
    query = Counter(tokens(unknown) * 2 + [w.lower() for w in re.findall(r"[A-Za-z_]\w*", goal)])
    n = len(docs)
    df: Counter[str] = Counter(t for d in docs for t in set(d))
    avg = sum(len(d) for d in docs) / n
    scores = []
    for i, d in enumerate(docs):
        tf = Counter(d)
        s = 0.0
        for term, q in query.items():
            if term not in tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            s += q * idf * tf[term] * 2.2 / (tf[term] + 1.2 * (0.25 + 0.75 * len(d) / avg))
        scores.append((-s, i))
    return [names[i] for _, i in sorted(scores)[:k] if names[i] != unknown]


# -- a goal that automation leaves: lemmas whose conclusion has its shape ----------------------

_NUMERAL = re.compile(r"(?<![\w.'])\d+(?:%\w+)?(?![\w.'])")


def goal_pattern(conclusion: str, local: tuple[str, ...]) -> str | None:
    """A ``SearchPattern`` for a stuck goal's conclusion: local names and numerals become
    ``_``. ``None`` when nothing but relations and arithmetic is left (such a pattern matches
    thousands of lemmas and names none usefully).

    >>> goal_pattern("a ^ 2 mod 3 = 0", ("a",))
    'SearchPattern (_ ^ _ mod _ = _).'
    >>> goal_pattern("x * y <= 1", ("x", "y")) is None
    True
    """
    text = " ".join(conclusion.split())
    if not text or any(w in text for w in ("forall", "exists", "fun ", "let ", "match ")):
        return None
    names = set(local)
    text = _NUMERAL.sub("_", text)
    text = re.sub(
        r"(?<![\w.'])([A-Za-z_][\w']*)(?![\w.'])",
        lambda m: "_" if m.group(1) in names else m.group(1),
        text,
    )
    text = re.sub(r"%\w+", "", text)
    if not re.search(r"[A-Za-z]", text.replace("_", " ")):
        return None
    return f"SearchPattern ({text})."


_OPERATORS = {"*": "mul", "+": "add", "-": "sub", "/": "div", "^": "pow", "<=": "le", "<": "lt"}


def shape_words(conclusion: str) -> str:
    """The conclusion with the names library lemmas give its operators added (``*`` is
    ``mul``, ``<=`` is ``le``), so that ranking by words can match ``Nat.gcd_mul_diag_l``.

    >>> shape_words("Nat.gcd a (a * b) = a")
    'Nat.gcd a (a * b) = a mul'
    """
    ops = re.findall(r"<=|[*+\-/^<]", conclusion)
    return " ".join([conclusion, *dict.fromkeys(_OPERATORS[o] for o in ops)])


def uses(names: list[str], head: str) -> list[tuple[str, float]]:
    """Tactics that use each retrieved lemma on the goal, with a prior falling with its rank:
    ``apply`` (the lemma's side conditions become goals of their own), and ``rewrite`` for an
    equation.

    >>> uses(["Z.mod_small"], "=")
    [('apply Z.mod_small', 0.6), ('rewrite Z.mod_small', 0.4)]
    """
    out: list[tuple[str, float]] = []
    for i, name in enumerate(names):
        decay = 0.85**i
        out.append((f"apply {name}", round(0.6 * decay, 4)))
        if head == "=":
            out.append((f"rewrite {name}", round(0.4 * decay, 4)))
    return out
