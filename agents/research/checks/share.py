"""Share: one level holds clearly more than an even split would give it, chi-square against an
even split p < 1e-6; in a small table (fewer than 200 rows, not a time series: the 63 deaths
of a riot, one row each), p below Bonferroni at 5% over the database's share hypotheses, where
a clear plurality (28 of 63 over four levels, p = 5e-5) cannot reach 1e-6.

"Clearly more" is an effect size, not a fixed multiple of the even share: the level's share
``s`` against ``1/k`` (k levels) as Cohen's w of a level against the rest,
``(s - 1/k) / sqrt(1/k (1 - 1/k))``, at least ``MIN_W`` (between Cohen's small, 0.1, and
medium, 0.3), and ``s`` >= 0.3. For three levels that is the 43% the rule ``1.3/k`` asked; for
two it is 60% rather than 65% (``1.3/k`` asked two levels for w = 0.3, half as much again as
three), so that a two-level column's clear majority (357 benign tumours of 569, 63%) is
told."""

from __future__ import annotations

import math
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks.base import (
    FAMILY_RATE,
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    fmt,
    score_of,
)
from lemmata.agents.research.checks.correlation import is_small
from lemmata.agents.research.types import Hypothesis

__all__ = ["MIN_SHARE", "MIN_W", "check", "least_share"]

#: The smallest Cohen's w of the top level against the rest that is told.
MIN_W = 0.2
#: The smallest share told, whatever the number of levels.
MIN_SHARE = 0.3


def least_share(k: int) -> float:
    """The least share of ``k`` levels' top level that is told (see the module docstring).

    >>> [round(least_share(k), 3) for k in (2, 3, 4, 10)]
    [0.6, 0.428, 0.337, 0.3]
    """
    even = 1 / k
    return max(MIN_SHARE, even + MIN_W * math.sqrt(even * (1 - even)))


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
    bar = 1e-6
    if is_small(ctx.table(h.table)):
        bar = max(bar, ctx.alpha("share", 0.0, rate=FAMILY_RATE))
    if share < least_share(k) or not p < bar:
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
