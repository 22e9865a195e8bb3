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
told.

A share that differs by group (the share answering ``yes`` higher in one region, the share
improved higher in one arm of a trial) is a hypothesis about two categorical columns of one
table (:func:`check_by_group`): their contingency table, tested by the chi-square test of
independence (a test of the one cell told, times the cells that could have been told, found
less on development studies: 0.29 against 0.35 of the shares) and told by the cell whose
share stands furthest above the rest's (the largest adjusted residual), when its share differs
from the other rows' by ``MIN_GAP`` or more and by Cohen's h of ``MIN_H`` or more. The bar is
the Benjamini-Hochberg step-up bar over the database's by-group share hypotheses, ranked among
the table's, at ``BY_GROUP_RATE`` in a small table or a table of units (a trial's patients, a
survey's respondents: rows that are independent), and a fixed p < 1e-6 elsewhere (events of
one parent are not independent). Where either column is a 0/1 flag (died, improved,
censored), its share is its mean, and the finding is told as a group difference of that
column too ("died is lower where arm = 1"), as such facts are written."""

from __future__ import annotations

import math
from collections.abc import Callable
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
from lemmata.agents.research.checks.stats import step_up_bar
from lemmata.agents.research.types import Hypothesis

__all__ = [
    "BY_GROUP",
    "BY_GROUP_RATE",
    "MAX_LEVELS",
    "MIN_GAP",
    "MIN_SHARE",
    "MIN_H",
    "MIN_W",
    "check",
    "check_by_group",
    "least_share",
]

#: The smallest Cohen's w of the top level against the rest that is told.
MIN_W = 0.2
#: The smallest share told, whatever the number of levels.
MIN_SHARE = 0.3
#: The family under which by-group share hypotheses are counted (apart from one column's).
BY_GROUP = "share by group"
#: The false-discovery rate of the by-group bar in a small table or a table of units.
BY_GROUP_RATE = 0.025
#: The smallest difference between a group's share and the other rows' that is told.
MIN_GAP = 0.05
#: The smallest Cohen's h of a group's share against the other rows' that is told (a small
#: effect in Cohen's terms).
MIN_H = 0.2
#: The most levels of either column compared (more are labels, not groups).
MAX_LEVELS = 12
#: The fewest rows of a group compared.
MIN_ROWS = 5


def least_share(k: int) -> float:
    """The least share of ``k`` levels' top level that is told (see the module docstring).

    >>> [round(least_share(k), 3) for k in (2, 3, 4, 10)]
    [0.6, 0.428, 0.337, 0.3]
    """
    even = 1 / k
    return max(MIN_SHARE, even + MIN_W * math.sqrt(even * (1 - even)))


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    from scipy import stats

    if len(h.columns) == 2:
        return check_by_group(ctx, h)
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


def _crosstab(a: list[Any], b: list[Any]) -> tuple[list[Any], list[Any], Any] | None:
    """The levels of ``a`` and ``b`` (each of at most ``MAX_LEVELS``, rows where both are
    present, levels of ``b`` with at least ``MIN_ROWS`` rows) and their contingency table;
    None when there are fewer than two levels of either."""
    import numpy as np

    pairs = [
        (x, y)
        for x, y in zip(a, b, strict=True)
        if x is not None and x != "" and y is not None and y != ""
    ]
    counts: dict[Any, int] = {}
    for _, y in pairs:
        counts[y] = counts.get(y, 0) + 1
    groups = sorted((y for y, c in counts.items() if c >= MIN_ROWS), key=str)
    answers = sorted({x for x, _ in pairs}, key=str)
    if not 2 <= len(groups) <= MAX_LEVELS or not 2 <= len(answers) <= MAX_LEVELS:
        return None
    gi = {g: i for i, g in enumerate(groups)}
    ai = {x: i for i, x in enumerate(answers)}
    table = np.zeros((len(answers), len(groups)))
    for x, y in pairs:
        if y in gi:
            table[ai[x], gi[y]] += 1
    keep = table.sum(axis=1) > 0
    if keep.sum() < 2:
        return None
    return [x for x, k in zip(answers, keep, strict=True) if k], groups, table[keep]


def _independence(a: list[Any], b: list[Any]) -> tuple[float, float, tuple[int, int], Any] | None:
    """(chi-square p, Cramér's V, the cell of the largest adjusted residual, the table) of
    two categorical columns; None when they cannot be compared."""
    import numpy as np
    from scipy import stats

    made = _crosstab(a, b)
    if made is None:
        return None
    _, _, table = made
    n = table.sum()
    rows, cols = table.sum(axis=1, keepdims=True), table.sum(axis=0, keepdims=True)
    expected = rows * cols / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    v = math.sqrt(chi2 / (n * (min(table.shape) - 1)))
    adjusted = (table - expected) / np.sqrt(expected * (1 - rows / n) * (1 - cols / n))
    cell = np.unravel_index(int(np.argmax(adjusted)), adjusted.shape)
    p = float(stats.chi2.sf(chi2, (table.shape[0] - 1) * (table.shape[1] - 1)))
    return p, float(v), (int(cell[0]), int(cell[1])), table


def _by_group_ps(ctx: CheckContext, table: str) -> list[float]:
    """The p-value of each of a table's by-group share hypotheses."""
    key = ("share by group p-values", table)
    if key not in ctx.memo:
        t = ctx.table(table)
        values = []
        for g in ctx.members.get(BY_GROUP, []):
            if g.table == table and len(g.columns) == 2 and all(c in t.raw for c in g.columns):
                found = _independence(t.raw[g.columns[0]], t.raw[g.columns[1]])
                if found is not None:
                    values.append(found[0])
        ctx.memo[key] = values
    return list(ctx.memo[key])


def check_by_group(ctx: CheckContext, h: Hypothesis) -> Outcome:
    """Whether the share of one column's level differs by the other column's level (see the
    module docstring)."""
    first, second = h.columns
    t = ctx.table(h.table)
    # The column of fewer levels is the answer, the other the groups (yes/no by region).
    a, b = (first, second)
    if len({v for v in t.raw[a] if v is not None}) > len({v for v in t.raw[b] if v is not None}):
        a, b = b, a
    made = _crosstab(t.raw[a], t.raw[b])
    found = _independence(t.raw[a], t.raw[b])
    if made is None or found is None:
        raise DataProblem(f"{h.table}: {a} and {b} have too few levels to compare")
    answers, groups, _ = made
    p, v, (i, j), table = found
    level, group = answers[i], groups[j]
    inside = float(table[i, j] / table[:, j].sum())
    rest_rows = float(table.sum() - table[:, j].sum())
    rest = float(table[i].sum() - table[i, j]) / rest_rows if rest_rows else math.nan
    # Cohen's h of the group's share against the other rows'.
    h_effect = 2 * math.asin(math.sqrt(inside)) - 2 * math.asin(math.sqrt(rest))
    if ctx.units(h.table) or is_small(t):
        # The step-up bar is one of the p-values it ranks: a hypothesis at it is a discovery.
        m = ctx.family.get(BY_GROUP, 0)
        bar = step_up_bar(_by_group_ps(ctx, h.table), m, BY_GROUP_RATE) * (1 + 1e-9) if m else 0.0
        passes = p <= bar
    else:
        passes = p < 1e-6
    if not passes or h_effect < MIN_H or not inside - rest >= MIN_GAP:
        return Outcome(
            observation=(
                f"{h.table}.{a} by {b}: chi-square p = {p:.2g}, V = {v:.2f}; "
                f"{a} = {level} {inside:.0%} where {b} = {group}, {rest:.0%} elsewhere"
            )
        )
    from lemmata.agents.research.checks.group import mirror
    from lemmata.agents.research.checks.stats import other_level

    support = {
        "test": "chi-square of independence",
        "p": p,
        "cramer_v": v,
        "cohen_h": h_effect,
        "rest_share": rest,
    }
    support = mirror(support, b, other_level(list(t.raw[b]), group))
    twin = other_level(list(t.raw[a]), level)
    if twin is not None:
        support["other_answer"] = f"{a}={twin}"
    from lemmata.agents.research.checks.base import is_flag

    extra = []
    for flag, other, group_level in ((a, b, group), (b, a, level)):
        values = list(t.raw[flag])
        if not is_flag(values):
            continue
        others = list(t.raw[other])
        inside_v = [
            float(v)
            for v, g in zip(values, others, strict=True)
            if v is not None and g == group_level
        ]
        rest_v = [
            float(v)
            for v, g in zip(values, others, strict=True)
            if v is not None and g is not None and g != group_level
        ]
        if not inside_v or not rest_v:
            continue
        mi, mr = sum(inside_v) / len(inside_v), sum(rest_v) / len(rest_v)
        direction_f = "higher" if mi > mr else "lower"
        extra.append(
            Finding(
                kind="group_difference",
                table=h.table,
                columns=[flag, other],
                entities=[f"{other}={group_level}"],
                direction=direction_f,  # type: ignore[arg-type]
                evidence_sql=ev.mean_sql(
                    h.table, ctx.expr(h.table, flag), [ev.equals(other, group_level)]
                ),
                statement=_flag_statement(h.table, flag, other, group_level, direction_f, mr),
                score=score_of(p),
                support=mirror(
                    {
                        "test": "chi-square of independence (a 0/1 column's share)",
                        "p": p,
                        "rest_mean": mr,
                    },
                    other,
                    other_level(others, group_level),
                ),
            )
        )
    return ctx.outcome(
        *extra,
        Finding(
            kind="share",
            table=h.table,
            columns=[a, b],
            entities=[f"{a}={level}", f"{b}={group}"],
            direction="higher",
            evidence_sql=ev.share_sql(h.table, a, level, [ev.equals(b, group)]),
            statement=lambda value: (
                f"{fmt(100 * value)}% of {h.table} rows with {b} = {group} have {a} = {level}, "
                f"against {fmt(100 * rest)}% of the other rows"
            ),
            score=score_of(p),
            support=support,
        ),
    )


def _flag_statement(
    table: str, flag: str, other: str, level: Any, direction: str, rest: float
) -> Callable[[float], str]:
    """The statement of a 0/1 column's share by group, told as a group difference."""

    def say(value: float) -> str:
        return (
            f"{table}.{flag} (0/1) is {direction} where {other} = {level}: {fmt(100 * value)}% "
            f"against {fmt(100 * rest)}% of the other rows"
        )

    return say
