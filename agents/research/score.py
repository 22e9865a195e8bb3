"""Score a run's insights against a checklist.

The deterministic scorer matches an insight to a checklist item when the kind is the same, the
table is the same, the item's columns and entities are among the insight's (names compared
without case or table prefixes, numbers by value), the directions agree where the item has
one, and the values agree within the item's tolerance. Each insight matches one item at most.
A difference between the two levels of a two-level column may be told from either level:
"lower where sex = M" matches an item "higher where sex = F" (and the item's value is then
compared with the other level's mean), for every source alike (generated and real data).
Free-text items (DDR-Bench) match when the answer's words appear in an insight's statement,
or by the verdict of an optional LLM judge (:func:`judge`).

>>> from lemmata.agents.research.types import ChecklistItem, Insight
>>> item = ChecklistItem(id="a", kind="share", table="orders", columns=["payment"],
...                      entities=["payment=card"], value=0.6, tolerance=0.05, absolute=True)
>>> ins = Insight(statement="61% pay by card", kind="share", table="orders",
...               columns=["payment"], entities=["payment = card"], value=0.61,
...               evidence_sql="SELECT 0.61")
>>> score([ins], [item]).recall
1.0
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from lemmata.agents.research.types import KINDS, ChecklistItem, Insight

if TYPE_CHECKING:
    from lemmata.environments.database import Database
    from lemmata.llm.base import ChatModel

__all__ = ["Score", "is_true", "judge", "matches", "score"]


def _name(column: str) -> str:
    return column.strip().strip('"').split(".")[-1].lower()


def _entity(text: str) -> tuple[str, str]:
    column, _, value = text.partition("=")
    value = value.strip().strip("'\"").lower()
    try:
        f = float(value)
        value = repr(int(f)) if f.is_integer() else repr(f)
    except ValueError:
        pass
    return _name(column), value


def _close(value: float | None, item: ChecklistItem) -> bool:
    if item.value is None:
        return True
    if value is None or not math.isfinite(value):
        return False
    if item.absolute:
        return abs(value - item.value) <= item.tolerance
    return abs(value - item.value) <= item.tolerance * max(abs(item.value), 1e-9)


_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def _text_match(statement: str, answer: str, threshold: float = 0.6) -> bool:
    words = set(_WORD.findall(answer.lower()))
    if not words:
        return False
    said = set(_WORD.findall(statement.lower()))
    return len(words & said) / len(words) >= threshold


def matches(insight: Insight, item: ChecklistItem) -> bool:
    """Whether ``insight`` states what ``item`` asks for (see the module docstring)."""
    if item.answer is not None and item.kind == "other" and not item.columns:
        return _text_match(insight.statement, item.answer)
    if insight.kind != item.kind:
        return False
    if item.table and insight.table.lower() != item.table.lower():
        return False
    have = {_name(c) for c in insight.columns}
    if not {_name(c) for c in item.columns} <= have:
        return False
    wanted = {_entity(e) for e in item.entities}
    if wanted <= {_entity(e) for e in insight.entities}:
        if item.direction is not None and insight.direction != item.direction:
            return False
        return _close(insight.value, item)
    return _mirrored(insight, item, wanted)


_OPPOSITE = {"higher": "lower", "lower": "higher"}


def _mirrored(insight: Insight, item: ChecklistItem, wanted: set[tuple[str, str]]) -> bool:
    """Whether a difference between the two levels of a column, told from one level, states
    the item told from the other: "lower where sex = M" is "higher where sex = F", with the
    other level's mean (the rest's) as its value. The check records the other level as
    ``support["other_level"]`` when the column has exactly two. A share by group may be
    told from the other level of a two-level answer too (``support["other_answer"]``: "the
    share answering yes is higher in the north" is "the share answering no is lower there",
    with one less the share as its value)."""
    if insight.direction not in _OPPOSITE:
        return False
    told = {_entity(e) for e in insight.entities}
    rest = insight.support.get("rest_mean", insight.support.get("rest_share"))
    flips = [
        (str(insight.support[k]), k == "other_answer")
        for k in ("other_level", "other_answer")
        if insight.support.get(k)
    ]
    for chosen in range(1, 2 ** len(flips)):
        swapped = set(told)
        value: float | None = insight.value
        direction: str = insight.direction
        for bit, (other, complement) in enumerate(flips):
            if not chosen >> bit & 1:
                continue
            column = _entity(other)[0]
            swapped = {e for e in swapped if e[0] != column} | {_entity(other)}
            direction = _OPPOSITE[direction]
            if complement:
                value = None if value is None else 1 - value
            else:
                value = float(rest) if isinstance(rest, int | float) else None
        if not wanted <= swapped:
            continue
        if item.direction is not None and direction != item.direction:
            continue
        if _close(value, item):
            return True
    return False


@dataclass
class Score:
    """Recall overall and by kind; ``matched`` maps item ids to the insight index."""

    recall: float
    by_kind: dict[str, float]
    items_by_kind: dict[str, int]
    matched: dict[str, int] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)
    unmatched_insights: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "recall": self.recall,
            "by_kind": self.by_kind,
            "items_by_kind": self.items_by_kind,
            "matched": self.matched,
            "missed": self.missed,
        }


def score(
    insights: Sequence[Insight],
    checklist: Sequence[ChecklistItem],
    *,
    verdicts: dict[tuple[int, str], bool] | None = None,
) -> Score:
    """Match insights to items (greedy, one each); ``verdicts`` from :func:`judge` may add
    matches the rules miss."""
    used: set[int] = set()
    matched: dict[str, int] = {}
    for item in checklist:
        for i, ins in enumerate(insights):
            if i in used:
                continue
            if matches(ins, item) or (verdicts or {}).get((i, item.id), False):
                used.add(i)
                matched[item.id] = i
                break
    by_kind: dict[str, float] = {}
    counts: dict[str, int] = {}
    for kind in KINDS:
        items = [it for it in checklist if it.kind == kind]
        if items:
            counts[kind] = len(items)
            by_kind[kind] = sum(it.id in matched for it in items) / len(items)
    return Score(
        recall=len(matched) / len(checklist) if checklist else 0.0,
        by_kind=by_kind,
        items_by_kind=counts,
        matched=matched,
        missed=[it.id for it in checklist if it.id not in matched],
        unmatched_insights=[i for i in range(len(insights)) if i not in used],
    )


def is_true(insight: Insight, db: Database, tolerance: float = 1e-6) -> bool:
    """Whether the insight's evidence SQL reproduces its value on ``db`` (for a value-less
    insight: whether the query returns a row)."""
    result = db.query(insight.evidence_sql, max_rows=1)
    if not result.ok or not result.rows:
        return False
    if insight.value is None:
        return True
    try:
        got = float(result.rows[0][0])
    except (TypeError, ValueError):
        return False
    return abs(got - insight.value) <= tolerance * max(1.0, abs(insight.value))


def judge(
    model: ChatModel, insights: Sequence[Insight], checklist: Sequence[ChecklistItem]
) -> dict[tuple[int, str], bool]:
    """Ask ``model`` whether each unmatched item is stated by some insight.

    One call per item, with the insights listed; the reply is a schema-validated
    ``{"match": bool, "index": int}``. Returns ``{(insight index, item id): True}`` for the
    matches the model confirms.
    """

    class _Pick(BaseModel):
        match: bool
        index: int = -1
        reason: str = ""

    listing = "\n".join(f"[{i}] {ins.statement}" for i, ins in enumerate(insights))
    verdicts: dict[tuple[int, str], bool] = {}
    for item in checklist:
        if any(matches(ins, item) for ins in insights):
            continue
        target = item.answer or item.statement
        question = (
            f"Question: {item.question}\nExpected answer: {target}"
            if item.question
            else (f"Expected finding: {target}")
        )
        reply = model.structured(
            [
                {
                    "role": "system",
                    "content": "You grade data-analysis reports. Say whether one of the numbered "
                    "findings states the expected finding (same fact; numbers may be rounded).",
                },
                {"role": "user", "content": f"{question}\n\nFindings:\n{listing}"},
            ],
            _Pick,
        )
        if reply.match and 0 <= reply.index < len(insights):
            verdicts[(reply.index, item.id)] = True
    return verdicts
