"""Group difference: one level's mean of a numeric column differs from the rest's (Welch
p < 1e-6, \\|Cohen's d\\| >= 0.3)."""

from __future__ import annotations

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks.base import (
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    fmt,
    score_of,
)
from lemmata.agents.research.checks.stats import best_level
from lemmata.agents.research.types import Direction, Hypothesis

__all__ = ["check", "clear"]


def clear(p: float, d: float) -> bool:
    """The bar of a group difference (and of a relationship across a link)."""
    return p < 1e-6 and abs(d) >= 0.3


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    num, cat = h.columns
    t = ctx.table(h.table)
    found = best_level(t.num[num], t.raw[cat])
    if found is None:
        raise DataProblem(f"{h.table}: groups of {cat} too small")
    level, ma, mb, d, p = found
    if not clear(p, d):
        return Outcome(observation=f"{h.table}.{num} by {cat}: no clear difference (p={p:.2g})")
    direction: Direction = "higher" if d > 0 else "lower"
    more = "more" if d > 0 else "less"
    return ctx.outcome(
        Finding(
            kind="group_difference",
            table=h.table,
            columns=[num, cat],
            entities=[f"{cat}={level}"],
            direction=direction,
            evidence_sql=ev.mean_sql(h.table, ctx.expr(h.table, num), [ev.equals(cat, level)]),
            statement=lambda value: (
                f"{h.table}.{num} is {direction} where {cat} = {level}: mean {fmt(value)} "
                f"against {fmt(mb)} for the other rows "
                f"({fmt(abs(ma / mb - 1) * 100) if mb else '?'}% {more})"
            ),
            score=score_of(p),
            support={"test": "Welch t-test, level vs rest", "p": p, "cohen_d": d, "rest_mean": mb},
        )
    )
