"""Group difference: one level's mean of a numeric column differs from the rest's (Welch
p < 1e-6, \\|Cohen's d\\| >= 0.3); of three or more levels, the level that differs most the
other way is told too when it clears the same bar, against the rest and against the levels in
between alike (the most and the least alcoholic of three cultivars; not a level that stands
apart only from one whose values are all zero). For a skewed column (\\|skewness\\| >= 1: the population of
a respondent's town, a card holder's spending), where a few large values carry a mean and
Welch's test assumes no such tails, the Mann-Whitney test may tell the level instead (p < 1e-6,
\\|rank-biserial r\\| >= ``RANK_R``), when the means differ the same way.

Where other groupings of the same rows (``BLOCK_SHARE`` of the column's variance or more: the
sites of a field trial) hide a difference, the level is compared within them: each row's value
less its blocks' means, as in a randomized block design, so that "higher in 1931 at each site"
is seen through the gap between sites. That comparison is held to Bonferroni at a family-wise
rate of ``RATE`` over the database's group hypotheses and the levels compared, and
\\|d\\| >= ``BLOCKED_D``.

In a small table (fewer than ``SMALL_N`` rows, not a time series: fifty states, a trial of a
few dozen plots, sixteen bacteria), where a large difference cannot reach 1e-6, levels of
``SMALL_GROUP`` rows or more are compared and a level is told when both Welch's t-test and the
Mann-Whitney test (which no single extreme row carries) clear the Benjamini-Hochberg step-up
bar at 5% over the database's group hypotheses, ranked among the table's
(``base.SMALL_STEP_UP``; else Bonferroni at 5%), and the levels compared, for at least a medium effect
(\\|d\\| >= ``SMALL_D``); for a skewed column the Mann-Whitney test alone, with
\\|rank-biserial r\\| >= ``SMALL_RANK_R``.

A larger table of units (``CheckContext.units``) is compared the same way, with effects of at
least \\|d\\| >= ``UNITS_D`` (\\|rank-biserial r\\| >= ``UNITS_RANK_R``), its bar the
Benjamini-Hochberg step-up bar at ``UNITS_RATE`` over the database's group hypotheses, ranked
among the table's (each hypothesis's p-value its best level's times the comparisons its levels
make): on a table of noise as strict as Bonferroni's bar, looser for each discovery where a
survey's columns are related throughout. A column of two levels makes one comparison (the
first level against the second is the second against the first), not two."""

from __future__ import annotations

from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks import base
from lemmata.agents.research.checks.base import (
    FAMILY_RATE,
    UNITS_RATE,
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    fmt,
    score_of,
)
from lemmata.agents.research.checks.correlation import SKEWED, is_small
from lemmata.agents.research.checks.stats import (
    MIN_GROUP,
    best_level,
    best_rank_level,
    block_residuals,
    comparisons,
    level_tests,
    other_level,
    skew,
    step_up_bar,
)
from lemmata.agents.research.profile import MAX_CATEGORIES
from lemmata.agents.research.types import Direction, Hypothesis

__all__ = [
    "BLOCKED_D",
    "BLOCK_SHARE",
    "RANK_R",
    "RATE",
    "SMALL_D",
    "SMALL_GROUP",
    "SMALL_RANK_R",
    "UNITS_D",
    "UNITS_RANK_R",
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
#: The fewest rows of a level (and of the rest) compared in a small table (a designed study
#: with five subjects or plots a treatment).
SMALL_GROUP = 5
#: The smallest \\|Cohen's d\\| told in a small table (a medium effect).
SMALL_D = 0.5
#: The smallest \\|rank-biserial r\\| told for a skewed column (about what \\|d\\| = 0.3 is
#: for two normal groups).
RANK_R = 0.17
#: The smallest \\|rank-biserial r\\| told for a skewed column in a small table (about
#: \\|d\\| = 0.5).
SMALL_RANK_R = 0.28
#: The smallest \\|Cohen's d\\| told in a table of units (``CheckContext.units``) of
#: ``SMALL_N`` rows or more, on the small table's bar (a small effect in Cohen's terms).
UNITS_D = 0.2
#: The smallest \\|rank-biserial r\\| told for a skewed column there (about \\|d\\| = 0.2).
UNITS_RANK_R = 0.11


def clear(p: float, d: float, alpha: float = 1e-6) -> bool:
    """The bar of a group difference (and, at the fixed ``alpha``, of a relationship across
    a link)."""
    return p < alpha and abs(d) >= 0.3


def mirror(support: dict[str, Any], column: str, other: Any | None) -> dict[str, Any]:
    """``support`` with ``other_level`` (``column=value``) where the column has two levels,
    so that "higher where sex = M" also reads as "lower where sex = F" (see
    :func:`lemmata.agents.research.score.matches`)."""
    return support if other is None else support | {"other_level": f"{column}={other}"}


def _skewed(x: Any) -> bool:
    import numpy as np

    ok = np.isfinite(x)
    return int(ok.sum()) >= 3 and float(np.std(x[ok])) > 0 and abs(skew(x[ok])) >= SKEWED


def _ranked(x: Any, groups: list[Any], alpha: float, least: float, min_group: int) -> Any:
    """The level of a skewed column that the Mann-Whitney test tells from the rest (p <
    ``alpha``, \\|rank-biserial r\\| >= ``least``), when its mean differs the same way;
    else None."""
    found = best_rank_level(x, groups, alpha, min_group=min_group)
    if found is None or abs(found[3]) < least or (found[1] - found[2]) * found[3] <= 0:
        return None
    return found


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    num, cat = h.columns
    t = ctx.table(h.table)
    x, groups = t.num[num], t.raw[cat]
    skewed = _skewed(x)
    found = best_level(x, groups)
    bar = _family_bar(ctx, h, groups)
    small = _small_sample(x, groups, skewed, *bar) if bar is not None else None
    ranked = None
    if small is None and skewed and (found is None or not clear(found[4], found[3])):
        ranked = _ranked(x, groups, 1e-6, RANK_R, MIN_GROUP)
    if found is None and small is None and ranked is None:
        raise DataProblem(f"{h.table}: groups of {cat} too small")
    blocks: list[str] = []
    if small is not None and (found is None or not clear(found[4], found[3])):
        found = small
    elif ranked is not None:
        found = ranked
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
        levels = comparisons(groups)
        alpha = ctx.alpha("group_difference", 1e-6 * levels, rate=RATE) / levels
        if within is not None and within[4] < alpha and abs(within[3]) >= BLOCKED_D:
            found = within
        else:
            blocks = []
    level, ma, mb, d, p = found
    if not (clear(p, d) or blocks or found is small or found is ranked):
        return Outcome(observation=f"{h.table}.{num} by {cat}: no clear difference (p={p:.2g})")
    if blocks:  # the means told are the level's and the rest's, not the residuals'
        inside = [g == level for g in groups]
        ma, mb = _means(x, inside)
    opposite = None
    label = ""
    if not (blocks or found is small or found is ranked):
        opposite = _opposite(x, groups, level, d)
    if opposite is None and not (blocks or found is ranked or skewed) and bar is not None:
        # A small table's (or a table of units') other end may clear its family-wise bar
        # only: the leanest breed of cow stands apart from the three in between in 60 rows.
        opposite = _opposite(x, groups, level, d, bar[:2], SMALL_GROUP)
        label = "Welch t-test and Mann-Whitney, level vs rest"
    if opposite is not None:
        # The other end of a column of three or more levels (the most and the least
        # alcoholic of three cultivars, the breeds of cow with the richest and the leanest
        # milk): both are told.
        first = label if found is small else ""
        return ctx.outcome(_finding(ctx, h, found, first), _finding(ctx, h, opposite, label))
    direction: Direction = "higher" if d > 0 else "lower"
    more = "more" if d > 0 else "less"
    said = f", within each {' and '.join(blocks)}" if blocks else ""
    test = "Welch t-test, level vs rest" + (
        f", on values less their {' and '.join(blocks)} means" if blocks else ""
    )
    where = " (a small table)" if is_small(t) else " (a table of units)"
    if found is small:
        test = "Welch t-test and Mann-Whitney, level vs rest" + where
    if found is ranked or (found is small and skewed):
        test = "Mann-Whitney, level vs rest (a skewed column)" + (where if found is small else "")
    effect = "rank_biserial_r" if found is ranked or (found is small and skewed) else "cohen_d"
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
                {"test": test, "p": p, effect: d, "rest_mean": mb}
                | ({"blocks": blocks} if blocks else {}),
                cat,
                other_level(groups, level),
            ),
        )
    )


def _opposite(
    x: Any,
    groups: list[Any],
    first: Any,
    d: float,
    bar: tuple[float, float] | None = None,
    min_group: int = MIN_GROUP,
) -> Any:
    """Of a column with three or more levels, the level that differs most the other way from
    the rest (by the plain bar, or by ``bar``: a p-value and a \\|d\\| to clear, with the
    Mann-Whitney test agreeing, as a small table's level is told), when it also differs that
    way from the levels in between (the rest without ``first``, the level told already: a
    level is not told only for standing apart from an extreme one); else None."""
    import numpy as np

    def passes(level: Any, values: Any, labels: list[Any], f: Any) -> bool:
        if bar is None:
            return clear(f[4], f[3])
        if not (f[4] < bar[0] and abs(f[3]) >= bar[1]):
            return False
        return _rank_p(values, labels, level) < bar[0]

    tests = level_tests(x, groups, min_group)
    if len(tests) < 3:
        return None
    for f in sorted(tests, key=lambda f: -abs(f[3])):
        if f[0] == first or f[3] * d >= 0 or not passes(f[0], x, groups, f):
            continue
        kept = [g is not None and g != "" and g != first for g in groups]
        inner = [g for g, k in zip(groups, kept, strict=True) if k]
        rest = np.asarray(x)[np.array(kept)]
        apart = level_tests(rest, inner, min_group)
        mine = next((a for a in apart if a[0] == f[0]), None)
        if mine is not None and mine[3] * d < 0 and passes(f[0], rest, inner, mine):
            level, ma, mb, dd, p, _ = f
            return level, ma, mb, dd, p
        return None
    return None


def _rank_p(x: Any, groups: list[Any], level: Any) -> float:
    """The Mann-Whitney p-value of ``level``'s values against the rest's."""
    import numpy as np
    from scipy import stats

    inside = np.array([g == level for g in groups]) & np.isfinite(x)
    rest = np.array([g is not None and g != "" and g != level for g in groups])
    rest &= np.isfinite(x)
    return float(stats.mannwhitneyu(x[inside], x[rest]).pvalue)


def _finding(ctx: CheckContext, h: Hypothesis, found: Any, test: str = "") -> Finding:
    """A plain level-against-the-rest finding (Welch's bar unless ``test`` names another,
    no blocks)."""
    num, cat = h.columns
    level, ma, mb, d, p = found
    direction: Direction = "higher" if d > 0 else "lower"
    more = "more" if d > 0 else "less"
    return Finding(
        kind="group_difference",
        table=h.table,
        columns=[num, cat],
        entities=[f"{cat}={level}"],
        direction=direction,
        evidence_sql=ev.mean_sql(h.table, ctx.expr(h.table, num), [ev.equals(cat, level)]),
        statement=lambda value: (
            f"{h.table}.{num} is {direction} where {cat} = {level}: mean "
            f"{fmt(value)} against {fmt(mb)} for the other rows "
            f"({fmt(abs(ma / mb - 1) * 100) if mb else '?'}% {more})"
        ),
        score=score_of(p),
        support={
            "test": test or "Welch t-test, level vs rest",
            "p": p,
            "cohen_d": d,
            "rest_mean": mb,
        },
    )


def _means(x: Any, inside: list[bool]) -> tuple[float, float]:
    import numpy as np

    mask = np.array(inside) & np.isfinite(x)
    rest = ~np.array(inside) & np.isfinite(x)
    return float(x[mask].mean()), float(x[rest].mean())


def _family_bar(
    ctx: CheckContext, h: Hypothesis, groups: list[Any]
) -> tuple[float, float, float] | None:
    """The bar of a small table or a table of units: (p-value, \\|d\\|, \\|rank-biserial
    r\\|) to clear, over the comparisons its levels make: the step-up bar at ``FAMILY_RATE``
    over the database's group hypotheses in a small table (Bonferroni at ``FAMILY_RATE``
    without ``base.SMALL_STEP_UP``), the step-up bar at ``UNITS_RATE`` in a table of units; None for other tables (or uncounted hypotheses)."""
    t = ctx.table(h.table)
    m = ctx.family.get("group_difference", 0)
    if is_small(t) and not base.SMALL_STEP_UP:
        alpha = ctx.alpha("group_difference", 0.0, rate=FAMILY_RATE)
        least = (SMALL_D, SMALL_RANK_R)
    elif is_small(t):
        # The step-up bar is one of the p-values it ranks: a hypothesis at it is a discovery.
        alpha = step_up_bar(_table_ps(ctx, h.table), m, FAMILY_RATE) * (1 + 1e-9) if m else 0.0
        least = (SMALL_D, SMALL_RANK_R)
    elif ctx.units(h.table):
        alpha = step_up_bar(_table_ps(ctx, h.table), m, UNITS_RATE) * (1 + 1e-9) if m else 0.0
        least = (UNITS_D, UNITS_RANK_R)
    else:
        return None
    alpha /= comparisons(groups)
    return (alpha, *least) if alpha > 0 else None


def _table_ps(ctx: CheckContext, table: str) -> list[float]:
    """The p-value of each of a table's group hypotheses in the database's family, as its
    family-wise test makes it (:func:`_question_p`)."""
    key = ("group p-values", table)
    if key not in ctx.memo:
        t = ctx.table(table)
        values = []
        for g in ctx.members.get("group_difference", []):
            if g.table == table and len(g.columns) == 2:
                num, cat = g.columns
                if num in t.num and cat in t.raw:
                    x = t.num[num]
                    values.append(_question_p(x, t.raw[cat], _skewed(x)))
        ctx.memo[key] = values
    return list(ctx.memo[key])


def _question_p(x: Any, groups: list[Any], skewed: bool) -> float:
    """The p-value of a group hypothesis in a table of units: of its levels (of
    ``SMALL_GROUP`` rows or more), the smallest p-value of the test that tells one (the
    Mann-Whitney test for a skewed column, else the larger of Welch's and Mann-Whitney's),
    times the comparisons the levels make. Both tests in their large-sample form (the normal
    approximation with ties and continuity corrected, as scipy's), written out because a table
    of units asks hundreds of these questions at once and scipy's per-call overhead made that
    the slowest step of a run."""
    import math

    import numpy as np
    from scipy import special, stats

    g = np.array([None if v == "" else v for v in groups], dtype=object)
    ok = np.isfinite(x) & np.array([v is not None for v in g], dtype=bool)
    x, g = np.asarray(x)[ok], g[ok]
    n = len(x)
    if n < 2 * SMALL_GROUP:
        return 1.0
    ranks = stats.rankdata(x)
    _, counts = np.unique(x, return_counts=True)
    ties = 1 - float((counts**3 - counts).sum()) / (n**3 - n)
    best = 1.0
    for level in sorted(set(g.tolist()), key=str):
        inside = g == level
        n1 = int(inside.sum())
        n2 = n - n1
        sd = math.sqrt(n1 * n2 * (n + 1) / 12 * ties)
        if n1 < SMALL_GROUP or n2 < SMALL_GROUP or sd == 0:
            continue
        u = float(ranks[inside].sum()) - n1 * (n1 + 1) / 2
        p = math.erfc(max(0.0, abs(u - n1 * n2 / 2) - 0.5) / sd / math.sqrt(2))
        if not skewed:
            a, b = x[inside], x[~inside]
            va, vb = float(a.var(ddof=1)) / n1, float(b.var(ddof=1)) / n2
            if va + vb == 0:
                continue
            t = abs(float(a.mean() - b.mean())) / math.sqrt(va + vb)
            df = (va + vb) ** 2 / (va**2 / (n1 - 1) + vb**2 / (n2 - 1))
            p = max(p, 2 * float(special.stdtr(df, -t)))
        best = min(best, p)
    return min(1.0, best * comparisons(groups))


def _small_sample(
    x: Any, groups: list[Any], skewed: bool, alpha: float, least_d: float, least_r: float
) -> tuple[Any, float, float, float, float] | None:
    """The level that differs in a small table (or a table of units), by its family-wise bar
    ``alpha`` with effects of at least ``least_d`` (\\|rank-biserial r\\| ``least_r`` for a
    skewed column; see the module docstring); None when no level clears it."""
    if skewed:
        return _ranked(x, groups, alpha, least_r, SMALL_GROUP)
    found = best_level(x, groups, alpha, min_group=SMALL_GROUP)
    if found is None or not (found[4] < alpha and abs(found[3]) >= least_d):
        return None
    return found if _rank_p(x, groups, found[0]) < alpha else None
