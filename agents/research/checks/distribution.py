"""Distribution: a skewed numeric column (\\|skewness\\| >= 1 without the outlying rows,
\\|robust z\\| >= 7; at least 50 values)."""

from __future__ import annotations

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks.base import CheckContext, DataProblem, Finding, Outcome, fmt
from lemmata.agents.research.checks.stats import robust_z
from lemmata.agents.research.types import Hypothesis

__all__ = ["check"]


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    import numpy as np
    from scipy import stats

    (col,) = h.columns
    x = ctx.table(h.table).num[col]
    x = x[np.isfinite(x)]
    if len(x) < 50:
        raise DataProblem(f"{h.table}.{col}: too few values")
    kept = x[np.abs(robust_z(x)) < 7]
    g = float(stats.skew(kept))
    if not abs(g) >= 1.0:
        return Outcome(observation=f"{h.table}.{col}: skewness {g:.2f}")
    sql = ev.skew_sql(h.table, ctx.expr(h.table, col), [ctx.col(h.table, col).present()])
    median, mean = float(np.median(x)), float(np.mean(x))
    side = "right" if g > 0 else "left"
    return ctx.outcome(
        Finding(
            kind="distribution",
            table=h.table,
            columns=[col],
            evidence_sql=sql,
            statement=lambda value: (
                f"{h.table}.{col} is {side}-skewed (skewness {fmt(value)}): its mean "
                f"{fmt(mean)} is {'above' if mean > median else 'below'} its median {fmt(median)}"
            ),
            score=min(50.0, abs(g) * 5),
            support={"test": "skewness without outliers", "skewness": g, "n": len(x)},
        )
    )
