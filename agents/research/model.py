"""The model's part in a research run: proposing hypotheses and writing statements.

Every reply is schema-validated (:meth:`~lemmata.llm.base.ChatModel.structured`), and every
proposal is then checked against the survey: a table or column that does not exist, or a kind
that is not one of :data:`~lemmata.agents.research.types.KINDS`, becomes an observation for the
next turn, never a crash. A rewritten statement is kept only when it still carries the
insight's value.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from lemmata.agents.research.profile import Survey
from lemmata.agents.research.types import KINDS, Hypothesis, Insight
from lemmata.errors import ModelError

if TYPE_CHECKING:
    from lemmata.llm.base import ChatModel

__all__ = ["Proposal", "Proposals", "check_proposal", "propose", "rewrite_statements"]


class Proposal(BaseModel):
    kind: str
    table: str
    columns: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    direction: str | None = None
    sql: str | None = None
    claim: str | None = None
    python: str | None = None
    rationale: str = ""


class Proposals(BaseModel):
    hypotheses: list[Proposal] = Field(default_factory=list, max_length=20)


class _Statements(BaseModel):
    statements: list[str]


def _prompt() -> dict[str, Any]:
    from lemmata.prompts import load_prompt

    return load_prompt("research", "lemmata.agents.research")


def check_proposal(p: Proposal, survey: Survey) -> tuple[Hypothesis | None, str | None]:
    """A proposal as a hypothesis, or the reason it cannot be tested."""
    if p.kind not in KINDS:
        return None, f"proposal kind {p.kind!r} is not one of {', '.join(KINDS)}"
    table = survey.tables.get(p.table)
    if table is None:
        return None, f"proposal names table {p.table!r}, which does not exist"
    known = set(table.columns)
    for link in survey.links:
        if link.child == p.table:
            known |= set(survey.tables[link.parent].columns)
    missing = [c for c in p.columns if c and c.split(".")[-1] not in known]
    if missing:
        return None, f"proposal names columns {missing} that {p.table} does not have"
    for e in p.entities:
        if "=" not in e:
            return None, f"proposal entity {e!r} is not column=value"
    if p.sql is None and p.python is None and not p.columns:
        return None, "proposal has no columns, sql or python to test"
    note = ""
    if p.kind == "relationship" and p.sql is None:
        found = next((lk for lk in survey.links if lk.child == p.table), None)
        if found is None:
            return None, f"proposal relationship on {p.table}: the table has no link"
        link = found
        note = f"{link.child}.{link.column}->{link.parent}.{link.parent_column}"
    hyp = Hypothesis(
        kind=p.kind,  # type: ignore[arg-type]
        table=p.table,
        columns=[c.split(".")[-1] for c in p.columns],
        entities=p.entities,
        origin="model",
        priority=1.0,
        note=note or (p.claim or p.rationale)[:300],
        sql=p.sql,
    )
    return hyp, None


def propose(
    model: ChatModel,
    survey: Survey,
    insights: list[Insight],
    observations: list[str],
    *,
    focus: str,
    n: int = 6,
) -> tuple[list[tuple[Hypothesis, Proposal]], list[str]]:
    """Ask the model for up to ``n`` hypotheses; returns the usable ones with their proposals,
    and notes on the rest (and on a reply that never validated)."""
    prompt = _prompt()
    text = prompt["propose"].format(
        focus=focus,
        n=n,
        schema=survey.describe(),
        insights="\n".join(f"- {i.statement}" for i in insights[-40:]) or "(nothing yet)",
        observations="\n".join(f"- {o}" for o in observations[-12:]) or "(none)",
        kinds=", ".join(KINDS),
    )
    try:
        reply = model.structured([{"role": "user", "content": text}], Proposals)
    except ModelError as exc:
        return [], [f"the model's proposals could not be used: {exc}"]
    usable, notes = [], []
    for p in reply.hypotheses[:n]:
        hyp, problem = check_proposal(p, survey)
        if hyp is None:
            notes.append(problem or "unusable proposal")
        else:
            usable.append((hyp, p))
    return usable, notes


def rewrite_statements(model: ChatModel, insights: list[Insight], *, focus: str) -> int:
    """Let the model reword the statements (in place); returns how many it changed.

    A sentence that drops the insight's value (at the precision shown) is not used.
    """
    if not insights:
        return 0
    text = _prompt()["write"].format(
        focus=focus,
        findings="\n".join(f"{i + 1}. {ins.statement}" for i, ins in enumerate(insights)),
    )
    try:
        reply = model.structured([{"role": "user", "content": text}], _Statements)
    except ModelError:
        return 0
    if len(reply.statements) != len(insights):
        return 0
    changed = 0
    for ins, sentence in zip(insights, reply.statements, strict=True):
        sentence = sentence.strip()
        if sentence and sentence != ins.statement and _keeps_value(sentence, ins.value):
            ins.support["original_statement"] = ins.statement
            ins.statement = sentence
            changed += 1
    return changed


def _keeps_value(sentence: str, value: float | None) -> bool:
    if value is None or not math.isfinite(value):
        return True
    import re

    numbers = [
        float(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*\.?\d*(?:e-?\d+)?", sentence)
    ]
    forms = [abs(value), abs(value) * 100]
    for n in numbers:
        for v in forms:
            if v == 0 and n == 0:
                return True
            if v and abs(abs(n) - v) <= max(0.051 * v, 0.006):
                return True
    return False
