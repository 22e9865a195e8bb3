"""Group difference: one level's mean of a numeric column differs from the rest's (Welch
p < 1e-6, \\|Cohen's d\\| >= 0.3).

Where other groupings of the same rows (``BLOCK_SHARE`` of the column's variance or more: the
sites of a field trial) hide a difference, the level is compared within them: each row's value
less its blocks' means, as in a randomized block design, so that "higher in 1931 at each site"
is seen through the gap between sites. That comparison is held to Bonferroni at a family-wise
rate of ``RATE`` over the database's group hypotheses and the levels compared, and
\\|d\\| >= ``BLOCKED_D``.

In a small table (fewer than ``SMALL_N`` rows, not a time series: fifty states, a trial of a
few dozen plots),
where a large difference cannot reach 1e-6, levels of ``SMALL_GROUP`` rows or more are
compared and a level is told when its difference is large (\\|d\\| >= ``SMALL_D``) and both
Welch's t-test and the Mann-Whitney test (which no single extreme row carries) clear
Bonferroni at 5% over the database's group hypotheses and the levels compared."""

from __future__ import annotations

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
from lemmata.agents.research.checks.stats import best_level, block_residuals, other_level
from lemmata.agents.research.profile import MAX_CATEGORIES
from lemmata.agents.research.types import Direction, Hypothesis

__all__ = [
    "BLOCKED_D",
    "BLOCK_SHARE",
    "RATE",
    "SMALL_D",
    "SMALL_GROUP",
    "check",
    "clear",
    "mirror",
]

#: The family-wise error rate of the group-difference bar (Bonferroni over the database's
#: group hypotheses).
RATE = 0.01
#: The smallest \\|Cohen's d\\| told within blocks.
BLOCKED_D = 0.5
#: The share of a column's variance another grouping must explain to be taken as blocks.
BLOCK_SHARE = 0.3
#: The fewest rows of a level (and of the rest) compared in a small table.
SMALL_GROUP = 8
#: The smallest \\|Cohen's d\\| told in a small table (a large effect).
SMALL_D = 0.8


def clear(p: float, d: float, alpha: float = 1e-6) -> bool:
    """The bar of a group difference (and, at the fixed ``alpha``, of a relationship across
    a link)."""
    return p < alpha and abs(d) >= 0.3


def mirror(support: dict[str, Any], column: str, other: Any | None) -> dict[str, Any]:
    """``support`` with ``other_level`` (``column=value``) where the column has two levels,
    so that "higher where sex = M" also reads as "lower where sex = F" (see
    :func:`lemmata.agents.research.score.matches`)."""
    return support if other is None else support | {"other_level": f"{column}={other}"}


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    num, cat = h.columns
    t = ctx.table(h.table)
    x, groups = t.num[num], t.raw[cat]
    found = best_level(x, groups)
    small = _small_sample(ctx, h, x, groups) if is_small(t) else None
    if found is None and small is None:
        raise DataProblem(f"{h.table}: groups of {cat} too small")
    blocks: list[str] = []
    if small is not None and (found is None or not clear(found[4], found[3])):
        found = small
    elif found is None:
        raise DataProblem(f"{h.table}: groups of {cat} too small")
    elif not clear(found[4], found[3]):
        blocks = [
            c
            for c, p in t.profile.columns.items()
            if c != cat and p.role in ("categorical", "date") and p.distinct <= MAX_CATEGORIES
        ]
        residuals, blocks = block_residuals(x, [t.raw[c] for c in blocks], blocks, BLOCK_SHARE)
        within = best_level(residuals, groups) if blocks else None
        # Within blocks, a designed comparison: the bar is Bonferroni over the database's
        # group hypotheses and the levels compared (the best of k levels is k tests), for a
        # difference of at least half a standard deviation.
        levels = len({g for g in groups if g is not None and g != ""})
        alpha = ctx.alpha("group_difference", 1e-6 * levels, rate=RATE) / max(1, levels)
        if within is not None and within[4] < alpha and abs(within[3]) >= BLOCKED_D:
            found = within
        else:
            blocks = []
    level, ma, mb, d, p = found
    if not (clear(p, d) or blocks or found is small):
        return Outcome(observation=f"{h.table}.{num} by {cat}: no clear difference (p={p:.2g})")
    if blocks:  # the means told are the level's and the rest's, not the residuals'
        inside = [g == level for g in groups]
        ma, mb = _means(x, inside)
    direction: Direction = "higher" if d > 0 else "lower"
    more = "more" if d > 0 else "less"
    said = f", within each {' and '.join(blocks)}" if blocks else ""
    test = "Welch t-test, level vs rest" + (
        f", on values less their {' and '.join(blocks)} means" if blocks else ""
    )
    if found is small:
        test = "Welch t-test and Mann-Whitney, level vs rest (a small table)"
    return ctx.outcome(
        Finding(
            kind="group_difference",
            table=h.table,
            columns=[num, cat],
            entities=[f"{cat}={level}"],
            direction=direction,
            evidence_sql=ev.mean_sql(h.table, ctx.expr(h.table, num), [ev.equals(cat, level)]),
            statement=lambda value: (
                f"{h.table}.{num} is {direction} where {cat} = {level}{said}: mean "
                f"{fmt(value)} against {fmt(mb)} for the other rows "
                f"({fmt(abs(ma / mb - 1) * 100) if mb else '?'}% {more})"
            ),
            score=score_of(p),
            support=mirror(
                {"test": test, "p": p, "cohen_d": d, "rest_mean": mb}
                | ({"blocks": blocks} if blocks else {}),
                cat,
                other_level(groups, level),
            ),
        )
    )


def _means(x: Any, inside: list[bool]) -> tuple[float, float]:
    import numpy as np

    mask = np.array(inside) & np.isfinite(x)
    rest = ~np.array(inside) & np.isfinite(x)
    return float(x[mask].mean()), float(x[rest].mean())


def _small_sample(
    ctx: CheckContext, h: Hypothesis, x: Any, groups: list[Any]
) -> tuple[Any, float, float, float, float] | None:
    """The level that differs in a small table, by the small-table bar (see the module
    docstring); None when no level clears it."""
    import numpy as np
    from scipy import stats

    levels = len({g for g in groups if g is not None and g != ""})
    alpha = ctx.alpha("group_difference", 0.0, rate=FAMILY_RATE) / max(1, levels)
    found = best_level(x, groups, alpha, min_group=SMALL_GROUP) if alpha > 0 else None
    if found is None or not (found[4] < alpha and abs(found[3]) >= SMALL_D):
        return None
    inside = np.array([g == found[0] for g in groups]) & np.isfinite(x)
    rest = np.array([g is not None and g != "" and g != found[0] for g in groups])
    rest &= np.isfinite(x)
    p_rank = float(stats.mannwhitneyu(x[inside], x[rest]).pvalue)
    return found if p_rank < alpha else None
