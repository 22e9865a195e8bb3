"""Share: one level holds >= max(0.3, 1.3/k) of a column's rows (k levels), chi-square
against an even split p < 1e-6."""

from __future__ import annotations

from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks.base import (
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    fmt,
    score_of,
)
from lemmata.agents.research.types import Hypothesis

__all__ = ["check"]


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    from scipy import stats

    (col,) = h.columns
    values = [v for v in ctx.table(h.table).raw[col] if v is not None and v != ""]
    counts: dict[Any, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    k = len(counts)
    if k < 2 or len(values) < 30:
        raise DataProblem(f"{h.table}.{col}: fewer than two levels")
    top, n_top = max(counts.items(), key=lambda kv: kv[1])
    share = n_top / len(values)
    p = float(stats.chisquare(list(counts.values())).pvalue)
    if share < max(0.3, 1.3 / k) or not p < 1e-6:
        return Outcome(observation=f"{h.table}.{col}: top level {top!r} holds {share:.0%}")
    return ctx.outcome(
        Finding(
            kind="share",
            table=h.table,
            columns=[col],
            entities=[f"{col}={top}"],
            evidence_sql=ev.share_sql(h.table, col, top),
            statement=lambda value: (
                f"{fmt(100 * value)}% of {h.table} rows have {col} = {top} "
                f"(an even split over its {k} levels would give {fmt(100 / k)}%)"
            ),
            score=score_of(p),
            support={"test": "chi-square vs uniform", "p": p, "levels": k},
        )
    )
