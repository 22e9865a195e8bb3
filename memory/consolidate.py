"""Duplicates and contradictions: deterministic rules first, a model only for ambiguous pairs.

A new fact is compared with a bounded set of candidates: facts with the same normalised text,
facts making a claim about the same subject and attribute (an indexed key), its nearest
neighbours in the vector index, and the facts of the same batch. Never the whole memory.

Rules, in order:

1. same normalised text: a **duplicate**; the stored fact gains the new source episode (its
   text is derived from both) and keeps the higher credibility;
2. same subject and a single-valued attribute (lives in, works at, is married to, someone's
   favourite or age...) with a different value, or the same claim with the opposite polarity
   ("likes X" / "no longer likes X"): a **contradiction**; the older fact is closed
   (``valid_to`` = the newer one's ``valid_from``) and linked to it (``superseded_by``), never
   deleted;
3. cosine similarity >= ``ambiguous_at`` with shared entities and no rule deciding: asked of the
   model when one is configured (duplicate / contradiction / compatible); without one both are
   kept, and the pair is counted as ambiguous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from lemmata.memory.text import normalise

__all__ = ["Claim", "Relation", "RelationVerdict", "parse_claim", "relate_by_rules"]

Relation = Literal["duplicate", "contradiction", "compatible", "unknown"]

_SINGLE_VALUED = {
    "lives in": "lives in",
    "moved to": "lives in",
    "relocated to": "lives in",
    "works at": "works at",
    "works for": "works at",
    "works as": "works as",
    "is married to": "is married to",
    "is dating": "is dating",
    "is engaged to": "is engaged to",
}
_ATTRIBUTE = re.compile(
    r"^(?P<subj>.+?(?:'s)? (?:favou?rite \w+|name|age|job|address|phone number|email|birthday|"
    r"hometown))\s+is\s+(?P<obj>.+)$",
    re.I,
)
_PREDICATES = "|".join(sorted(map(re.escape, _SINGLE_VALUED), key=len, reverse=True))
_CLAIM = re.compile(
    rf"^(?P<subj>[A-Z][\w'\-]*(?: [A-Z][\w'\-]*)?)\s+"
    r"(?P<neg>(?:no longer|does not|doesn't|did not|didn't|is not|isn't|never|not)\s+)?"
    rf"(?P<pred>{_PREDICATES}|likes?|loves?|enjoys?|hates?|owns?|has|plays?|is)\s+(?P<obj>.+)$"
)
_AGE = re.compile(r"^(?P<subj>[A-Z][\w'\-]*) is (?P<obj>\d+)(?: years old)?$")


@dataclass(frozen=True)
class Claim:
    """What a fact asserts, when a rule can read it: subject, attribute, value, polarity."""

    subject: str
    predicate: str
    value: str
    positive: bool
    single_valued: bool

    @property
    def key(self) -> str:
        return f"claim:{self.subject}|{self.predicate}"


def _clean(s: str) -> str:
    return normalise(re.sub(r"\s*\([^)]*\)", "", s)).strip()


# What follows a single value ("lives in Boston with her dogs", "works at Acme since May") is
# circumstance, not part of the value.
_VALUE_END = re.compile(
    r"\s+(?:with|for|since|because|and|but|near|after|before|when|where|while|to|on|at|from|"
    r"until|during|last|this|next|now)\b|[,;]",
    re.I,
)


def _head(value: str) -> str:
    return _VALUE_END.split(value, maxsplit=1)[0]


def parse_claim(statement: str) -> Claim | None:
    """The claim a fact makes, or None when no rule reads it.

    >>> parse_claim("Caroline moved to Boston.").key
    'claim:caroline|lives in'
    >>> parse_claim("Mel no longer likes pottery.").positive
    False
    """
    text = statement.strip().rstrip(".!")
    if re.match(r"^[\w' ]+ (said|asked): ", text):
        text = text.split(":", 1)[1].strip()
    m = _AGE.match(text)
    if m:
        return Claim(m["subj"].lower(), "age", m["obj"], True, True)
    m = _ATTRIBUTE.match(text)
    if m:
        return Claim(_clean(m["subj"]), "is", _clean(m["obj"]), True, True)
    m = _CLAIM.match(text)
    if not m:
        return None
    pred = m["pred"].lower()
    base = _SINGLE_VALUED.get(pred)
    if base is None:
        base = re.sub(r"(?<=[a-z])s$", "", pred) if pred not in ("is", "has") else pred
    single = pred in _SINGLE_VALUED
    if pred == "is" and not m["neg"]:
        return None  # "X is happy" and "X is tired" are both true: no rule for plain "is"
    value = _head(m["obj"]) if single else m["obj"]
    return Claim(m["subj"].lower(), base, _clean(value), m["neg"] is None, single)


def relate_by_rules(new: str, old: str) -> Relation:
    """How two statements relate by the deterministic rules (``unknown`` if none applies).

    >>> relate_by_rules("Caroline lives in Boston.", "Caroline moved to Denver.")
    'contradiction'
    >>> relate_by_rules("Caroline likes hiking.", "Caroline likes painting.")
    'compatible'
    >>> relate_by_rules("Caroline lives in Boston.", "Caroline lives in Boston with two dogs.")
    'duplicate'
    """
    if normalise(new) == normalise(old):
        return "duplicate"
    a, b = parse_claim(new), parse_claim(old)
    if a is None or b is None or a.key != b.key:
        return "unknown"
    if a.value == b.value:
        return "duplicate" if a.positive == b.positive else "contradiction"
    if a.single_valued and a.positive and b.positive:
        return "contradiction"
    return "compatible"


class RelationVerdict(BaseModel):
    """The model's answer for one ambiguous pair."""

    relation: Literal["duplicate", "contradiction", "compatible"]
