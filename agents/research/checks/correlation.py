"""Correlation: Pearson r, or Spearman's rho where a column is an ordered scale of a few
integers (a rating from 1 to 5; in a small table also a 0/1 outcome) or strongly skewed (\\|skewness\\| >= 1: a few large values
would carry Pearson's r, and its p-value assumes no such tails); n >= 30 and either
\\|r\\| >= 0.05 with p < 1e-6 (weak correlations in large samples), or \\|r\\| >= 0.2 with p
below a Bonferroni bar at 0.1% over the database's correlation hypotheses (moderate ones in a
few hundred rows). In a small table (fewer than ``SMALL_N`` rows: fifty states, sixty strikes;
not a time series, whose rows are periods), where each row is one unit and a moderate effect cannot reach either
bar, n >= ``MIN_PAIRS_SMALL`` and \\|r\\| >= ``MIN_R_SMALL`` with p below the Benjamini-Hochberg
step-up bar at ``FAMILY_RATE`` (5%) over the database's correlation hypotheses, ranked among
the table's (``base.SMALL_STEP_UP``; else Holm's step-down bar at 5%: the k-th smallest
p-value held to 5% / (m - k + 1)): on a table of noise as strict as Bonferroni's bar, and
looser for each discovery where the columns are related throughout (violent crime and
poverty, rho = 0.42, p = 0.0024, the sixteenth of 21 in fifty states, fell short of
Bonferroni). Not when, with time taken out (each month's mean for events,
period-to-period changes for a monthly or coarser series), Pearson's \\|r\\| falls below 0.25
and half of itself: then both columns follow time, not each other.

In a table with one row per period (a month or longer), a series with a seasonal pattern is
taken without it, and two series either of which has a lag-1 autocorrelation above
``WANDERING`` are correlated by their period-to-period changes (held to Bonferroni at the
family rate, as changes follow each other as independent rows do), unless their levels move
together (cointegrated, :func:`~lemmata.agents.research.timeseries.cointegrated`): two random
walks, or two slow swings, agree in level by chance far more often than Pearson's p says.

The Bonferroni bar at 1% (for \\|r\\| >= 0.2), and at 5% with no floor, added false findings
on null databases: rows of one parent are not independent, so a weak effect in a large table
clears such a bar by chance more often than its p says. That dependence is what a large table
of events has (thousands of rows from a few hundred parents); a small table's rows are its
units, and there the bar is the database's 5% with a floor on the effect instead.

A larger table of units (``CheckContext.units``: a cross section of a few hundred to a few
thousand people or firms) is held to the Benjamini-Hochberg step-up bar at ``UNITS_RATE``
(2.5%) over the database's correlation hypotheses, ranked among the table's, with \\|r\\| >=
``MIN_R_UNITS``: on a table of noise as strict as Bonferroni's bar, and looser for each
discovery where the columns are related throughout, as surveys' columns are."""

from __future__ import annotations

from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research import timeseries as ts
from lemmata.agents.research.checks import base
from lemmata.agents.research.checks.base import (
    FAMILY_RATE,
    SMALL_ROWS,
    UNITS_RATE,
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    TableData,
    fmt,
    score_of,
)
from lemmata.agents.research.checks.stats import holm_passes, skew, step_up_bar, within_month_r
from lemmata.agents.research.types import Direction, Hypothesis

__all__ = [
    "MIN_R",
    "MIN_R_COUNTED",
    "MIN_PAIRS_SMALL",
    "MIN_R_SMALL",
    "MIN_R_UNITS",
    "RATE",
    "SKEWED",
    "WANDERING",
    "SMALL_N",
    "check",
    "clear",
    "is_small",
]

#: The weakest correlation told.
MIN_R = 0.05
#: The weakest correlation told on the Bonferroni bar.
MIN_R_COUNTED = 0.2
#: The family-wise error rate of that bar (over the database's correlation hypotheses).
RATE = 0.001
#: Tables with fewer rows than this are small: one row per unit, held to the 5% bar.
SMALL_N = SMALL_ROWS
#: The weakest correlation told in a small table.
MIN_R_SMALL = 0.3
#: The fewest pairs correlated in a small table (elsewhere 30): twenty committees or twenty
#: men measured are twenty units, and a strong correlation among them clears the step-down bar.
MIN_PAIRS_SMALL = 10
#: The weakest correlation told in a table of units (``CheckContext.units``) of ``SMALL_N``
#: rows or more, on the step-up bar (a small correlation in Cohen's terms).
MIN_R_UNITS = 0.1
#: The \\|skewness\\| from which a column's correlations are ranked (Spearman).
SKEWED = 1.0
#: The lag-1 autocorrelation from which two series (a table with one row per period) are
#: correlated by their period-to-period changes rather than their levels: two series that
#: each wander or drift slowly agree in level by chance far more often than a p-value for
#: independent rows says (Granger and Newbold's spurious regression).
WANDERING = 0.5


def is_small(t: TableData) -> bool:
    """Whether a table is small: fewer than ``SMALL_N`` rows, and its rows units rather than
    the periods of a time series (which follow each other, so that chance agreement between
    two series is far likelier than a p-value for independent rows says)."""
    return t.n < SMALL_N and not t.profile.series


def clear(r: float, p: float, alpha: float = 0.0) -> bool:
    """The bar of any table: p < 1e-6 with \\|r\\| >= ``MIN_R`` (weak correlations in large
    samples), or p below the database's Bonferroni bar ``alpha`` with \\|r\\| >=
    ``MIN_R_COUNTED``. (A small table's step-down bar is checked apart from it.)"""
    return (abs(r) >= MIN_R and p < 1e-6) or (abs(r) >= MIN_R_COUNTED and p < alpha)


def _measure(t: TableData, a: str, b: str) -> tuple[float, float, bool, float, Any]:
    """(r, p, ranked, Pearson's r, the rows with both values) of columns ``a`` and ``b``:
    Spearman's rho where either is a scale or skewed, else Pearson's r."""
    import numpy as np
    from scipy import stats

    if a not in t.num or b not in t.num:
        raise DataProblem(f"{t.name}: {a} and {b} are not both measures or scales")
    x, y = _seasonless(t, a), _seasonless(t, b)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < (MIN_PAIRS_SMALL if is_small(t) else 30):
        raise DataProblem(f"{t.name}: too few pairs of {a}, {b}")
    pearson = float(stats.pearsonr(x[ok], y[ok])[0])
    ranked = a in t.ordinal or b in t.ordinal or max(abs(skew(x[ok])), abs(skew(y[ok]))) >= SKEWED
    if ranked:
        rho, p_rank = stats.spearmanr(x[ok], y[ok])
        return float(rho), float(p_rank), True, pearson, ok
    return pearson, float(stats.pearsonr(x[ok], y[ok])[1]), False, pearson, ok


def _series_order(t: TableData) -> str | None:
    """The time column of a table with one row per period of a month or longer (whose rows
    follow each other), else None."""
    time = t.profile.time
    if t.profile.series and time in t.days and t.profile.period not in ("day", "week"):
        return time
    return None


def _seasonless(t: TableData, col: str) -> Any:
    """``col``'s values, with the seasonal pattern taken out where the table is a monthly or
    quarterly series whose season matters for ``col`` (two series with seasons of their own
    agree in level and in change by their seasons, not by each other)."""
    import numpy as np

    x = t.num[col]
    time = _series_order(t)
    period = t.profile.period
    if time is None or period not in ("month", "quarter"):
        return x
    days = t.days[time]
    ok = np.isfinite(x) & np.isfinite(days)
    if ok.sum() < 12:
        return x
    keys = np.array([ts.period_key(d, period) for d in days[ok]])
    values, seasonal = ts.deseasonalize(days[ok], x[ok], ts.season_of(keys, period))
    if not seasonal:
        return x
    out = x.copy()
    out[ok] = values
    return out


def _on_changes(t: TableData, a: str, b: str, ok: Any) -> tuple[float, float, bool] | None:
    """(r, p) of the period-to-period changes of ``a`` and ``b`` when either series' lag-1
    autocorrelation is above ``WANDERING`` (in a table with one row per period), and whether
    their levels move together all the same (cointegrated: the gap between them keeps
    returning to its level); None when the levels can be correlated as they are, or there
    are fewer than 10 changes."""
    import numpy as np
    from scipy import stats

    time = _series_order(t)
    if time is None:
        return None
    days = t.days[time]
    keep = ok & np.isfinite(days)
    order = np.argsort(days[keep], kind="stable")
    x, y = _seasonless(t, a)[keep][order], _seasonless(t, b)[keep][order]
    if len(x) < 11 or max(ts.lag1(x), ts.lag1(y)) <= WANDERING:
        return None
    dx, dy = np.diff(x), np.diff(y)
    if dx.std() == 0 or dy.std() == 0:
        return None
    r, p = stats.pearsonr(dx, dy)
    return float(r), float(p), ts.cointegrated(x, y)


def _table_ps(ctx: CheckContext, table: str) -> dict[tuple[str, ...], float]:
    """The p-value of each of a table's correlation hypotheses in the database's family."""
    key = ("correlation p-values", table)
    if key not in ctx.memo:
        t = ctx.table(table)
        values = {}
        for g in ctx.members.get("correlation", []):
            if g.table == table and len(g.columns) == 2:
                try:
                    values[tuple(g.columns)] = _measure(t, *g.columns)[1]
                except DataProblem:
                    continue
        ctx.memo[key] = values
    return dict(ctx.memo[key])


def _holm_small(ctx: CheckContext, h: Hypothesis, p: float, rate: float = FAMILY_RATE) -> bool:
    """Whether ``p`` clears Holm's step-down bar at ``rate`` over the database's correlation
    hypotheses, ranked among the other correlations of its (small) table."""
    import math

    m = ctx.family.get("correlation", 0)
    if not m:
        return False
    values = _table_ps(ctx, h.table)
    others = [q for cols, q in values.items() if cols != tuple(h.columns) and math.isfinite(q)]
    return holm_passes(p, others, m, rate)


def _step_up(ctx: CheckContext, h: Hypothesis, p: float, rate: float = UNITS_RATE) -> bool:
    """Whether ``p`` clears the Benjamini-Hochberg step-up bar at ``rate`` over the
    database's correlation hypotheses, ranked among the correlations of its table (of
    units)."""
    import math

    m = ctx.family.get("correlation", 0)
    if not m:
        return False
    values = [q for q in _table_ps(ctx, h.table).values() if math.isfinite(q)]
    return p <= step_up_bar(values, m, rate)


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    import numpy as np

    a, b = h.columns
    t = ctx.table(h.table)
    r, p, ranked, pearson, ok = _measure(t, a, b)
    x, y = _seasonless(t, a), _seasonless(t, b)
    name = "Spearman rho" if ranked else "Pearson r"
    changes = _on_changes(t, a, b, ok)
    if changes is not None and not (
        changes[2] and clear(r, p, ctx.alpha("correlation", 0.0, RATE))
    ):
        # Levels that wander are related by their changes, unless they move together.
        r, p, _ = changes
        name = "Pearson r of the changes"
    else:
        changes = None
    # A series' changes follow each other as independent rows do (a parent's rows do not), so
    # they are held to Bonferroni at the family rate rather than at RATE.
    rate = FAMILY_RATE if changes is not None else RATE
    passed = clear(r, p, ctx.alpha("correlation", 0.0, rate=rate))
    if not passed:
        # A small table (the step-up bar at 5%, or Holm's step-down bar), or a larger one
        # whose rows are independent units (the step-up bar at 2.5%).
        if is_small(t):
            bar = _step_up(ctx, h, p, FAMILY_RATE) if base.SMALL_STEP_UP else None
            passed = abs(r) >= MIN_R_SMALL and (_holm_small(ctx, h, p) if bar is None else bar)
        elif ctx.units(h.table):
            passed = abs(r) >= MIN_R_UNITS and _step_up(ctx, h, p)
    if not passed:
        return Outcome(observation=f"{h.table}.{a} ~ {b}: {name} = {r:.2f} (p = {p:.2g})")
    for date_col, days in t.days.items():
        if changes is not None and date_col == _series_order(t):
            continue  # already judged on its changes
        # A daily or weekly series has many rows a month: its months take time out. A
        # monthly or coarser one has one row a period: its changes from one to the next.
        series = (
            t.profile.series
            and date_col == t.profile.time
            and t.profile.period not in ("day", "week")
        )
        if series:
            keep = ok & np.isfinite(days)
            within = ts.differenced_r(days[keep], x[keep], y[keep])
        else:
            within = within_month_r(x, y, days)
        if within is not None and abs(within) < 0.5 * abs(pearson) and abs(within) < 0.25:
            return Outcome(
                observation=(
                    f"{h.table}.{a} ~ {b}: r = {pearson:.2f}, but {within:.2f} "
                    f"{'in changes from period to period' if series else 'within months'} "
                    f"of {date_col}: both follow time, not each other"
                )
            )
    present = [ctx.col(h.table, a).present(), ctx.col(h.table, b).present()]
    time = _series_order(t)
    if changes is not None and time is not None:
        column = ctx.col(h.table, time)
        sql = ev.changes_pearson_sql(
            h.table,
            ctx.expr(h.table, a),
            ctx.expr(h.table, b),
            column.time_sql(),
            [*present, column.present()],
        )
    else:
        sql = (ev.spearman_sql if ranked else ev.pearson_sql)(
            h.table, ctx.expr(h.table, a), ctx.expr(h.table, b), present
        )
    direction: Direction = "positive" if r > 0 else "negative"
    strength = "strongly" if abs(r) >= 0.7 else "moderately" if abs(r) >= 0.4 else "weakly"
    n = int(ok.sum())
    return ctx.outcome(
        Finding(
            kind="correlation",
            table=h.table,
            columns=[a, b],
            direction=direction,
            evidence_sql=sql,
            statement=lambda value: (
                f"{h.table}.{a} and {h.table}.{b} are {strength} {direction}ly correlated "
                f"({name} = {fmt(value)}, n = {n})"
            ),
            score=score_of(p),
            support={
                "test": name.split()[0],
                "p": p,
                "n": n,
                "pearson_r": pearson,
                **({"on_changes": True} if changes is not None else {}),
            },
        )
    )
