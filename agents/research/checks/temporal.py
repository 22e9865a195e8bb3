"""Time: trends and change points of period means (or row counts) over a date column.

=====  ==========================================================================================
trend  period means fit a line (Mann-Kendall p < alpha, R^2 >= 0.3, seasonality taken out) at
       least as well as the best step, or move the trend's way on both sides of that step
       (Mann-Kendall p < 5% on each)
change a fall and a recovery (a stretch of periods off the line, see :func:`_fall_and_recovery`);
       else the best step leaves <= 0.8 of a line's squared error and less than a curve's, Welch
       p < alpha / s before/after (s: the split points the step was chosen from), a shift of
       >= 0.25 standard deviations; else a turn: a line broken at two periods leaves <= 0.5 of
       a line's and a curve's squared error, F-test p < alpha / s (s: the pairs of breaks
       searched), its steepest piece against a neighbour's slope moving >= 0.25 standard
       deviations
=====  ==========================================================================================

With ``SEVERAL_CHANGES`` set (the default), a series is first searched for several level shifts, each told
with its date and its levels before and after (see :func:`_several_changes`).

In a panel in long form (a column whose levels each hold a series: five stocks' monthly
prices, see :func:`panel_columns`), each level's series is tested as a table of its own, and
its insights name the level.

A smooth curve (a slowdown and a pick-up, a U) is no change: a step cut into a U ("fell and
stayed there") fits better than a line but says something false. So a step must also fit
better than a quadratic, which has as many free values (two levels and a split against three
coefficients: a U leaves a step 4-7 times a quadratic's error, a step in noise at most as
much), and a turn must leave at most half of it.

``alpha`` is the explorer's Bonferroni bar for the kind (see
:meth:`~lemmata.agents.research.checks.base.CheckContext.alpha`); without counted hypotheses the
fixed bars hold: 1e-4 for trends, 1e-8 for changes in monthly means of events and 1e-6 for a
series.
"""

from __future__ import annotations

import math
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research import timeseries as ts
from lemmata.agents.research.checks.base import (
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    fmt,
    score_of,
)
from lemmata.agents.research.types import Direction, Hypothesis
from lemmata.environments.database import quote_ident

__all__ = [
    "DIP_SHARE",
    "PANEL_LEVELS",
    "STEP_SHARE",
    "check_change",
    "check_trend",
    "panel_columns",
    "period_of",
    "trend_fit",
]

#: The most of a line's (and a curve's) squared error that a fall and its recovery may leave.
DIP_SHARE = 0.5
#: The most of a line's squared error that a step may leave (it must leave less than a
#: curve's too).
STEP_SHARE = 0.8
#: Whether a series is searched for several level shifts (binary segmentation,
#: :func:`~lemmata.agents.research.timeseries.changes`) before a fall and recovery or its
#: single best step. Measured on (off): research_recall (a) 0.929 (0.929), null false
#: discoveries 0.05/db (0.05); (b) 0.877 (0.877), 0.10/db (0.10); (c) 0.960 (0.960); (d) 0.791
#: (0.767), its changes 1/4 (0/4): electrical equipment's 2009 fall.
SEVERAL_CHANGES = True
#: Whether a series of single values a period that wanders like a random walk
#: (:func:`~lemmata.agents.research.timeseries.wanders`) is judged as one: its trend is its
#: drift (the mean of its changes, t-test) or a course steadier than driftless walks of its
#: length almost ever are (``WALK_TAU_RATE``); its change a single jump among its changes
#: (t prediction interval, Bonferroni over them) or a stretch of its changes off their course;
#: its levels' fit (a step, several, a stretch off the line, a turn) is no evidence, since a
#: random walk cut at its best split always fits levels better than a line. Off: measured on
#: (off, both with correlations of wandering series on their changes), research_series
#: development seeds 0-19 null false discoveries 0.6 (5.85) a table, recall 0.719 (0.792);
#: held-out seeds 1000-1019 null 1.1 (5.55), recall 0.667 (0.790): short series of
#: autocorrelated noise with a planted step or trend pass for walks (the unit-root tests
#: have little power in 20-40 values); research_recall (b) 0.869 (0.885, changes 0.65 against
#: 0.85 in one-row-a-month tables; measured before the stretch test of ``wanders``), (d) 0.767 (0.791, Apple's rise in stocks is no
#: drift), (e) 0.723 (0.702), (a) 0.933 and (c) 0.960 either way.
RANDOM_WALKS = False
#: How rarely a driftless random walk of the same length is as steady (Mann-Kendall's tau)
#: as a wandering series that is told as a trend without a drift that clears the bar.
WALK_TAU_RATE = 0.005


def period_of(ctx: CheckContext, table: str, date_col: str) -> str:
    """The period values are grouped by: a series' own step (months for a long daily
    series), else months (worked out once per column)."""
    key = (table, date_col)
    if key not in ctx.periods:
        ctx.periods[key] = _find_period(ctx, table, date_col)
    return ctx.periods[key]


def _find_period(ctx: CheckContext, table: str, date_col: str) -> str:
    import numpy as np

    p = ctx.survey.tables[table]
    if p.series and date_col == p.time and p.period in ts.PERIODS:
        if p.period in ("day", "week") and p.rows > 400:
            return "month"
        return p.period
    # Events dated only to the year (or quarter) are grouped by it, not by month.
    days = ctx.table(table).days.get(date_col)
    starts: Any = np.unique(days[np.isfinite(days)]) if days is not None else []
    for coarse in ("year", "quarter"):
        if len(starts) and all(
            ts.period_start(ts.period_key(d, coarse), coarse).toordinal() == int(d) for d in starts
        ):
            return coarse
    return "month"


def _period_means(
    ctx: CheckContext, table: str, num: str, date_col: str, level: tuple[str, str] | None = None
) -> tuple[Any, Any, Any, Any, str] | None:
    """Each period's mean of ``num`` (row count when empty): (periods, means, each row's
    period, each row's value, the period's name); of the rows of one ``level`` (column,
    value) of a panel, each a series of its own, when given."""
    import numpy as np

    t = ctx.table(table)
    period = period_of(ctx, table, date_col)
    series = period != "month" or ctx.survey.tables[table].series or level is not None
    days = t.days[date_col]
    x = t.num[num] if num else np.ones_like(days)
    ok = np.isfinite(days) & np.isfinite(x)
    if level is not None:
        ok &= np.array([str(v) == level[1] for v in t.raw[level[0]]], dtype=bool)
    days, x = days[ok], x[ok]
    if len(x) < (8 if series else 30):
        return None
    keys = np.array([ts.period_key(d, period) for d in days])
    levels = np.unique(keys)
    if num:
        means = np.array([x[keys == m].mean() for m in levels])
        sizes = np.array([(keys == m).sum() for m in levels])
        # A series has one row per period; events need a few rows for a mean.
        keep = sizes >= (1 if series else 5)
    else:
        means = np.array([float((keys == m).sum()) for m in levels])
        keep = np.ones(len(levels), dtype=bool)
        keep[[0, -1]] = False  # first and last months are usually partial
    if keep.sum() < (8 if series else 6):
        return None
    return levels[keep], means[keep], keys, x, period


#: The most rows a period (median) whose means are judged as a series of single values,
#: which may wander: a table with one row a period, a panel's few units a year. The mean of
#: many events a month is judged as it is (a random walk's course needs one value to follow
#: the last).
FEW_A_PERIOD = 10


def _few_a_period(keys: Any) -> bool:
    import numpy as np

    _, sizes = np.unique(keys, return_counts=True)
    return bool(len(sizes)) and float(np.median(sizes)) <= FEW_A_PERIOD


def trend_fit(
    ctx: CheckContext, table: str, num: str, date_col: str, level: tuple[str, str] | None = None
) -> dict[str, Any] | None:
    """The trend and the best step of ``num``'s period means over ``date_col`` (None when
    there are too few periods), of one ``level`` of a panel when given."""
    import numpy as np

    data = _period_means(ctx, table, num, date_col, level)
    if data is None:
        return None
    t, y, keys, x, period = data
    fit = ts.trend(t, y, season_of=ts.season_of(t, period))
    y = fit.values
    line = np.polyfit(t, y, 1)
    lin_sse = float(np.sum((y - np.polyval(line, t)) ** 2))
    curve = np.polyfit(t - t.mean(), y, 2)
    curve_sse = float(np.sum((y - np.polyval(curve, t - t.mean())) ** 2))
    best = ts.step(y)
    step_sse, split = best if best is not None else (math.inf, 0)
    return {
        "slope": fit.slope,
        "p": fit.p,
        "tau": fit.tau,
        "r2": fit.r2,
        "seasonal": fit.seasonal,
        "period": period,
        "lin_sse": lin_sse,
        "curve_sse": curve_sse,
        "step_sse": step_sse,
        "split_month": int(t[split]) if split else None,
        "wanders": RANDOM_WALKS and _few_a_period(keys) and ts.wanders(y),
        "months": len(t),
        "t": t,
        "values": y,
        "first": float(y[:3].mean()),
        "last": float(y[-3:].mean()),
        "rows": (keys, x),
    }


#: The most levels of a column whose rows are each a series of their own (a panel).
PANEL_LEVELS = 10


def panel_columns(ctx: CheckContext, table: str, date_col: str) -> list[str]:
    """The categorical columns of ``table`` whose levels each hold a series over ``date_col``
    (a panel in long form: five stocks' monthly prices, three sources' yearly output): at
    most ``PANEL_LEVELS`` levels, each with at least 8 dated rows, nearly all of them on
    dates of their own. A series of each level is then tested for a trend and a change as a
    table of its own would be."""
    import numpy as np

    profile = ctx.survey.tables[table]
    if profile.series:
        return []
    t = ctx.table(table)
    days = t.days.get(date_col)
    if days is None:
        return []
    out = []
    for name, c in profile.columns.items():
        if c.role != "categorical" or not 2 <= c.distinct <= PANEL_LEVELS:
            continue
        by_level: dict[str, list[float]] = {}
        for v, d in zip(t.raw[name], days, strict=True):
            if v is not None and v != "" and np.isfinite(d):
                by_level.setdefault(str(v), []).append(float(d))
        if len(by_level) >= 2 and all(
            len(ds) >= 8 and len(set(ds)) >= 0.95 * len(ds) for ds in by_level.values()
        ):
            out.append(name)
    return out


def _level(ctx: CheckContext, h: Hypothesis) -> tuple[str, str] | None:
    """The panel level (column, value) a hypothesis is about, if any."""
    if not h.entities:
        return None
    column, _, value = h.entities[0].partition("=")
    column, value = column.strip(), value.strip()
    if column not in ctx.survey.tables[h.table].columns:
        raise DataProblem(f"no column {column!r} in {h.table}")
    return column, value


def _level_sql(ctx: CheckContext, h: Hypothesis, level: tuple[str, str] | None) -> list[str]:
    """The SQL condition that picks a panel level's rows (none without a level)."""
    if level is None:
        return []
    from lemmata.agents.research.checks.stats import typed

    return [ev.equals(level[0], typed(level[1], ctx.table(h.table).raw[level[0]]))]


def _of(h: Hypothesis, level: tuple[str, str] | None) -> str:
    return f" where {level[0]} = {level[1]}" if level else ""


def _both_sides(fit: dict[str, Any]) -> bool:
    """Whether the series moves the trend's way on both sides of its best step (Mann-Kendall
    p < 5% on each, at least 6 periods a side): a step that leaves less error than a line
    but has a rise before it and after it (a share price growing faster and faster) does not
    explain the rise, which is then a trend."""
    from scipy import stats

    t, y, split = fit["t"], fit["values"], fit["split_month"]
    if split is None:
        return False
    left = t < split
    for side in (left, ~left):
        if side.sum() < 6:
            return False
        tau, p = stats.kendalltau(t[side], y[side])
        if not (p < 0.05 and tau * fit["slope"] > 0):
            return False
    return True


def check_trend(ctx: CheckContext, h: Hypothesis) -> Outcome:
    num, date_col = h.columns
    level = _level(ctx, h)
    fit = trend_fit(ctx, h.table, num, date_col, level)
    if fit is None:
        raise DataProblem(f"{h.table}.{num or 'rows'} over {date_col}: too few months")
    alpha = ctx.alpha("trend", 1e-4)
    steady = fit["lin_sse"] <= fit["step_sse"] or _both_sides(fit)
    drift, drift_p = ts.drift(fit["values"]) if fit["wanders"] else (0.0, 1.0)
    if fit["wanders"]:
        # A random walk's course is no trend; a drift of its changes is, and so is a course
        # steadier than driftless walks of its length almost ever are.
        drifts = drift_p < alpha and drift * fit["slope"] > 0
        steadier = (
            fit["p"] < alpha and steady and ts.walk_tau_p(fit["months"], fit["tau"]) < WALK_TAU_RATE
        )
        passed = (drifts or steadier) and fit["r2"] >= 0.3
    else:
        passed = fit["p"] < alpha and fit["r2"] >= 0.3 and steady
    if not passed:
        wander = ", wanders like a random walk without a drift" if fit["wanders"] else ""
        return Outcome(
            observation=f"{h.table}.{num or 'rows'}{_of(h, level)} over {date_col}: no steady "
            f"trend (R^2={fit['r2']:.2f}{wander})"
        )
    direction: Direction = "increase" if fit["slope"] > 0 else "decrease"
    where = [ctx.col(h.table, num).present()] if num else []
    where += _level_sql(ctx, h, level)
    period = fit["period"]
    sql = ev.monthly_slope_sql(
        h.table,
        ctx.expr(h.table, num) if num else None,
        ctx.col(h.table, date_col).time_sql(),
        where,
        period=period,
    )
    profile = ctx.survey.tables[h.table]
    series = (profile.series or level is not None) and date_col == profile.time
    what = (
        f"{h.table}.{num}{_of(h, level)}"
        if num and series
        else f"the {period}ly mean of {h.table}.{num}{_of(h, level)}"
        if num and level
        else f"the {period}ly mean of {h.table}.{num}"
        if num
        else f"the number of {h.table} rows per {period}"
    )
    seasonal = ", with its seasonal pattern taken out" if fit["seasonal"] else ""
    if fit["wanders"]:
        seasonal += (
            f"; it wanders, and drifts by {fmt(drift)} a {period} (t-test p = {drift_p:.2g})"
        )
    return ctx.outcome(
        Finding(
            kind="trend",
            table=h.table,
            columns=[num, date_col] if num else [date_col],
            entities=[f"{level[0]}={level[1]}"] if level else [],
            direction=direction,
            evidence_sql=sql,
            statement=lambda value: (
                f"{what} {direction}s steadily over {date_col}: by {fmt(value)} "
                f"a {period}, from about {fmt(fit['first'])} to {fmt(fit['last'])} over "
                f"{fit['months']} {period}s (Mann-Kendall tau = {fit['tau']:.2f}{seasonal})"
            ),
            score=score_of(fit["p"]),
            support={
                "test": "Mann-Kendall on period means, Theil-Sen slope",
                "p": fit["p"],
                "tau": fit["tau"],
                "theil_sen_slope": fit["slope"],
                "r2": fit["r2"],
                "seasonal": fit["seasonal"],
                "period": period,
                "wanders": fit["wanders"],
                **({"drift": drift, "drift_p": drift_p} if fit["wanders"] else {}),
            },
        )
    )


def check_change(ctx: CheckContext, h: Hypothesis) -> Outcome:
    from scipy import stats

    num, date_col = h.columns
    level = _level(ctx, h)
    fit = trend_fit(ctx, h.table, num, date_col, level)
    if fit is None or fit["split_month"] is None:
        raise DataProblem(f"{h.table}.{num} over {date_col}: too few months")
    # Events give many rows a side; a series has one a period, so it needs less. Counted
    # hypotheses set the bar instead: Bonferroni over them and over the split points (or
    # stretches) the fit chose from (the best of them is no single test).
    series = ctx.survey.tables[h.table].series or level is not None
    fixed = 1e-8 if fit["period"] == "month" and not series else 1e-6
    if fit["wanders"]:
        return _jump(ctx, h, fit, fixed)
    if SEVERAL_CHANGES:
        several = _several_changes(ctx, h, fit, fixed)
        if several is not None:
            return several
    dip = _fall_and_recovery(ctx, h, fit, fixed)
    if dip is not None:
        return dip
    months, x = fit["rows"]
    before, after = x[months < fit["split_month"]], x[months >= fit["split_month"]]
    if min(len(before), len(after)) < (5 if fit["period"] != "month" else 10):
        raise DataProblem(f"{h.table}.{num}: change too close to an end")
    t_stat, p = stats.ttest_ind(before, after, equal_var=False)
    p = float(p)
    if series and ts.AUTOCORRELATED:
        # One row a period: the step's residuals, in time order, say what the sample is worth.
        import numpy as np

        y, k = fit["values"], int(np.searchsorted(fit["t"], fit["split_month"]))
        share = ts.effective_share(np.r_[y[:k] - y[:k].mean(), y[k:] - y[k:].mean()])
        dof = max(len(y) * share - 2, 1.0)
        p = float(2 * stats.t.sf(abs(float(t_stat)) * math.sqrt(share), dof))
    sd = float(x.std()) or 1e-12
    diff = float(after.mean() - before.mean())
    splits = max(1, fit["months"] - 5)
    alpha = ctx.alpha("change", fixed * splits) / splits
    shaped = fit["step_sse"] <= STEP_SHARE * fit["lin_sse"] and fit["step_sse"] < fit["curve_sse"]
    if not (p < alpha and abs(diff) >= 0.25 * sd and shaped):
        bend = _turn(ctx, h, fit, fixed)
        if bend is not None:
            return bend
        return Outcome(
            observation=f"{h.table}.{num}{_of(h, level)} over {date_col}: no step change"
        )
    when = ts.period_start(fit["split_month"], fit["period"]).isoformat()
    before_mean = float(before.mean())
    return ctx.outcome(
        Finding(
            kind="change",
            table=h.table,
            columns=[num, date_col],
            entities=[f"{level[0]}={level[1]}"] if level else [],
            direction="increase" if diff > 0 else "decrease",
            evidence_sql=ev.mean_sql(
                h.table,
                ctx.expr(h.table, num),
                [
                    _dated(ctx, h.table, date_col, ">=", when),
                    ctx.col(h.table, num).present(),
                    *_level_sql(ctx, h, level),
                ],
            ),
            statement=lambda value: (
                f"{h.table}.{num}{_of(h, level)} {'rose' if diff > 0 else 'fell'} from a mean of "
                f"{fmt(before_mean)} before {when} to {fmt(value)} from then on, and stayed there"
            ),
            score=score_of(p),
            support={
                "test": "step fit of monthly means; Welch t-test",
                "p": p,
                "since": when,
                "before_mean": before_mean,
            },
        )
    )


def _jump(ctx: CheckContext, h: Hypothesis, fit: dict[str, Any], fixed: float) -> Outcome:
    """The level shift of a series that wanders like a random walk: a single change far larger
    than its others (robust z of the changes, Bonferroni over them and the database's change
    hypotheses), not undone by the next one (a spike), moving by at least a quarter of the
    values' standard deviation; an observation when there is none."""
    import numpy as np

    num, date_col = h.columns
    level = _level(ctx, h)
    t, y = fit["t"], fit["values"]
    found = ts.jump(y)
    splits = max(1, len(y) - 1)
    alpha = ctx.alpha("change", fixed * splits) / splits
    sd = float(np.std(y)) or 1e-12
    k, size, p = found if found is not None else (0, 0.0, 1.0)
    # A spike (a strike year) rises and falls back at once: an outlier, not a new level.
    undone = 0 < k < len(y) - 1 and abs(y[k + 1] - y[k - 1]) < 0.5 * abs(size)
    if not (p < alpha and abs(size) >= 0.25 * sd and not undone):
        stretch = _drift_stretch(ctx, h, fit, fixed)
        if stretch is not None:
            return stretch
        return Outcome(
            observation=f"{h.table}.{num}{_of(h, level)} over {date_col}: no step change (it "
            "wanders like a random walk, and no change stands out from its others)"
        )
    period = fit["period"]
    when = ts.period_start(int(t[k]), period).isoformat()
    before_mean = float(y[k - 1])
    rose = size > 0
    return ctx.outcome(
        Finding(
            kind="change",
            table=h.table,
            columns=[num, date_col],
            entities=[f"{level[0]}={level[1]}"] if level else [],
            direction="increase" if rose else "decrease",
            evidence_sql=ev.mean_sql(
                h.table,
                ctx.expr(h.table, num),
                [
                    _dated(ctx, h.table, date_col, ">=", when),
                    ctx.col(h.table, num).present(),
                    *_level_sql(ctx, h, level),
                ],
            ),
            statement=lambda value: (
                f"{h.table}.{num}{_of(h, level)} {'jumped' if rose else 'dropped'} by "
                f"{fmt(abs(size))} in {when}, from {fmt(before_mean)} the {period} before: a "
                f"change far beyond its others in a series that wanders (a mean of "
                f"{fmt(value)} from then on)"
            ),
            score=score_of(p * splits),
            support={
                "test": "the largest change of a wandering series against its others (robust z)",
                "p": p,
                "changes_searched": splits,
                "since": when,
                "before_mean": before_mean,
                "jump": size,
                "wanders": True,
            },
        )
    )


def _drift_stretch(
    ctx: CheckContext, h: Hypothesis, fit: dict[str, Any], fixed: float
) -> Outcome | None:
    """A stretch of periods in which a wandering series' changes depart from their course (a
    walk that falls through a recession and climbs again): the stretch of the changes that,
    added to a line through them, clears Bonferroni over the database's change hypotheses
    and the stretches searched (F-test), told as a turn of the series; None when there is
    none. The changes of a random walk are noise, so this is the level-shift test on them."""
    import numpy as np

    num, date_col = h.columns
    t, y = fit["t"], fit["values"]
    steps = np.diff(y)
    seg = ts.segment(t[1:], steps)
    if seg is None:
        return None
    alpha = ctx.alpha("change", fixed * seg.tried) / seg.tried
    moved = float(np.sum(steps[seg.start : seg.end]))
    if not (seg.p < alpha and seg.end - seg.start >= 3 and moved * seg.shift > 0):
        return None
    period = fit["period"]
    since = ts.period_start(int(t[seg.start]), period).isoformat()
    until = ts.period_start(int(t[seg.end]), period).isoformat()
    fell = seg.shift < 0
    return _stretch_outcome(
        ctx,
        h,
        fell,
        (since, "<=", until),
        Finding(
            kind="change",
            table=h.table,
            columns=[num, date_col],
            evidence_sql="",
            statement=lambda value: (
                f"{h.table}.{num}{_of(h, _level(ctx, h))} turned: it {'fell' if fell else 'rose'} "
                f"by {fmt(abs(moved))} from {since} to {until} (a mean of {fmt(value)} over "
                f"those {period}s), its changes {fmt(abs(seg.shift))} a {period} "
                f"{'below' if fell else 'above'} their course: a series that wanders, whose "
                "drift broke"
            ),
            score=score_of(seg.p * seg.tried),
            support={
                "test": "line plus one stretch of the period-to-period changes (F-test)",
                "p": seg.p,
                "stretches_searched": seg.tried,
                "since": since,
                "until": until,
                "change": moved,
                "wanders": True,
            },
        ),
    )


def _dated(ctx: CheckContext, table: str, date_col: str, op: str, when: str) -> str:
    """The SQL condition ``date_col op when`` (an ISO date), whatever form the column has."""
    time_sql = ctx.col(table, date_col).time_sql()
    if time_sql != quote_ident(date_col):
        time_sql = f"date({time_sql})"
    return f"{time_sql} {op} {ev.literal(when)}"


def _stretch_outcome(
    ctx: CheckContext,
    h: Hypothesis,
    fell: bool,
    dates: tuple[str, str, str],
    finding: Finding,
) -> Outcome:
    """The outcome of ``finding``, a change told over a stretch of dates ``(since, op,
    until)``: its direction, and its evidence the mean of the column over those rows."""
    from dataclasses import replace

    num, date_col = h.columns
    level = _level(ctx, h)
    since, op, until = dates
    sql = ev.mean_sql(
        h.table,
        ctx.expr(h.table, num),
        [
            _dated(ctx, h.table, date_col, ">=", since),
            _dated(ctx, h.table, date_col, op, until),
            ctx.col(h.table, num).present(),
            *_level_sql(ctx, h, level),
        ],
    )
    direction: Direction = "decrease" if fell else "increase"
    entities = [f"{level[0]}={level[1]}"] if level else []
    return ctx.outcome(replace(finding, evidence_sql=sql, direction=direction, entities=entities))


def _fall_and_recovery(
    ctx: CheckContext, h: Hypothesis, fit: dict[str, Any], fixed: float
) -> Outcome | None:
    """A stretch of periods that departs from the series' course and comes back (a fall in a
    recession and the recovery after it), when one single step would tell it wrongly.

    Told when the stretch, added to the line, clears Bonferroni over the database's change
    hypotheses and the stretches searched (F-test), leaves at most ``DIP_SHARE`` of what a
    line or a curve leaves and at most 0.8 of what a line with one step leaves, and departs
    by at least a quarter of the values' standard deviation. None when it is not."""
    import numpy as np

    num, date_col = h.columns
    t, y = fit["t"], fit["values"]
    seg = ts.segment(t, y)
    if seg is None:
        return None
    alpha = ctx.alpha("change", fixed * seg.tried) / seg.tried
    if not (
        seg.p < alpha
        and seg.sse <= DIP_SHARE * min(seg.line_sse, seg.curve_sse)
        and seg.sse <= 0.8 * seg.step_sse
        and abs(seg.shift) >= 0.25 * float(np.std(y))
    ):
        return None
    period = fit["period"]
    since = ts.period_start(int(t[seg.start]), period).isoformat()
    until = ts.period_start(int(t[seg.end]), period).isoformat()
    fell = seg.shift < 0
    outside = np.r_[y[: seg.start], y[seg.end :]]
    around = float(outside.mean())
    return _stretch_outcome(
        ctx,
        h,
        fell,
        (since, "<", until),
        Finding(
            kind="change",
            table=h.table,
            columns=[num, date_col],
            evidence_sql="",
            statement=lambda value: (
                f"{h.table}.{num}{_of(h, _level(ctx, h))} {'fell' if fell else 'rose'} from "
                f"{since} to before {until} "
                f"and then {'recovered' if fell else 'came back'}: a mean of {fmt(value)} in "
                f"those {seg.end - seg.start} {period}s, {fmt(abs(seg.shift))} "
                f"{'below' if fell else 'above'} the course of the other {period}s (mean "
                f"{fmt(around)})"
            ),
            score=score_of(seg.p * seg.tried),
            support={
                "test": "line plus one stretch of period means (F-test), against one step",
                "p": seg.p,
                "stretches_searched": seg.tried,
                "since": since,
                "until": until,
                "shift": seg.shift,
                "share_of_line_error": seg.sse / seg.line_sse if seg.line_sse else 0.0,
            },
        ),
    )


def _turn(ctx: CheckContext, h: Hypothesis, fit: dict[str, Any], fixed: float) -> Outcome | None:
    """A bend in the series' course (a rise that turns into a fall and back, a fall that
    levels off), told by the steepest piece of a line broken at two periods; when a step
    does not hold and a smooth curve does not follow the series either.

    Told when the broken line clears Bonferroni over the database's change hypotheses and the
    pairs of breaks searched (F-test against a line), leaves at most ``DIP_SHARE`` of what a
    line or a curve leaves, and its piece moves by at least a quarter of the values' standard
    deviation. None when it is not."""
    import numpy as np

    num, date_col = h.columns
    t, y = fit["t"], fit["values"]
    bend = ts.turn(t, y)
    if bend is None:
        return None
    alpha = ctx.alpha("change", fixed * bend.tried) / bend.tried
    if not (
        bend.p < alpha
        and bend.sse <= DIP_SHARE * min(bend.line_sse, bend.curve_sse)
        and abs(bend.change) >= 0.25 * float(np.std(y))
    ):
        return None
    period = fit["period"]
    since = ts.period_start(int(t[bend.start]), period).isoformat()
    until = ts.period_start(int(t[bend.end]), period).isoformat()
    fell = bend.change < 0
    around = []
    for slope, when in ((bend.before, "before"), (bend.after, "after")):
        if math.isfinite(slope):
            around.append(
                f"{'rising' if slope > 0 else 'falling'} by {fmt(abs(slope))} a {period} {when}"
            )
    return _stretch_outcome(
        ctx,
        h,
        fell,
        (since, "<=", until),
        Finding(
            kind="change",
            table=h.table,
            columns=[num, date_col],
            evidence_sql="",
            statement=lambda value: (
                f"{h.table}.{num}{_of(h, _level(ctx, h))} turned: it {'fell' if fell else 'rose'} by "
                f"{fmt(abs(bend.change))} from {since} to {until} (a mean of {fmt(value)} over "
                f"those {period}s), {' and '.join(around)}: a break in its course that no "
                "steady trend or smooth curve follows"
            ),
            score=score_of(bend.p * bend.tried),
            support={
                "test": "line broken at two periods (F-test against a line), against a curve",
                "p": bend.p,
                "break_pairs_searched": bend.tried,
                "since": since,
                "until": until,
                "change": bend.change,
                "share_of_curve_error": bend.sse / bend.curve_sse if bend.curve_sse else 0.0,
            },
        ),
    )


def _several_changes(
    ctx: CheckContext, h: Hypothesis, fit: dict[str, Any], fixed: float
) -> Outcome | None:
    """Each dated level shift of a series with several (binary segmentation, see
    :func:`~lemmata.agents.research.timeseries.changes`), each told with its date and the
    levels before and after it; None when there is none.

    Each split clears Bonferroni over the database's change hypotheses and the split points
    of its stretch (F-test on an effective sample size for autocorrelated noise); the levels
    together leave less of a quadratic's squared error than they leave, in all but one case in
    twenty, on smooth series with the same noise (simulated), and less than ``STEP_SHARE`` of
    a line's, and less than a line with one stretch off it (:func:`_fall_and_recovery`); each
    shift moves by at least a quarter of the values' standard deviation."""
    import numpy as np

    num, date_col = h.columns
    t, y = fit["t"], fit["values"]
    n = len(y)
    splits = max(1, n - 5)
    found = ts.changes(t, y, ctx.alpha("change", fixed * splits))
    if found is None:
        return None
    sd = float(np.std(y)) or 1e-12
    if not (
        found.sse < found.margin * found.curve_sse and found.sse <= STEP_SHARE * found.line_sse
    ):
        return None
    # A stretch off a line (a fall and a recovery on a trend) that explains as much is the
    # better account; it is judged by its own rules.
    seg = ts.segment(t, y) if len(found.splits) > 1 else None
    if seg is not None and seg.sse <= found.sse:
        return None
    level = _level(ctx, h)
    period = fit["period"]
    edges = [0, *found.splits, n]
    findings = []
    for i, split in enumerate(found.splits):
        before, after = found.levels[i], found.levels[i + 1]
        if abs(after - before) < 0.25 * sd:
            continue
        when = ts.period_start(int(t[split]), period).isoformat()
        since = ts.period_start(int(t[edges[i]]), period).isoformat()
        end = edges[i + 2]
        until = ts.period_start(int(t[end]), period).isoformat() if end < n else None
        rose = after > before
        where = [_dated(ctx, h.table, date_col, ">=", when)]
        if until is not None:
            where.append(_dated(ctx, h.table, date_col, "<", until))
        p = found.p[i]

        def statement(
            value: float,
            rose: bool = rose,
            before: float = before,
            since: str = since,
            when: str = when,
            until: str | None = until,
        ) -> str:
            span = (
                f"from {when} to before {until}" if until else f"from {when} on, and stayed there"
            )
            return (
                f"{h.table}.{num}{_of(h, level)} {'rose' if rose else 'fell'} in {when}: from a "
                f"mean of {fmt(before)} (from {since}) to {fmt(value)} ({span})"
            )

        findings.append(
            Finding(
                kind="change",
                table=h.table,
                columns=[num, date_col],
                entities=[f"{level[0]}={level[1]}"] if level else [],
                direction="increase" if rose else "decrease",
                evidence_sql=ev.mean_sql(
                    h.table,
                    ctx.expr(h.table, num),
                    [*where, ctx.col(h.table, num).present(), *_level_sql(ctx, h, level)],
                ),
                statement=statement,
                score=score_of(p * found.tried[i]),
                support={
                    "test": "binary segmentation of period means; F-test per split, against "
                    "a curve with a margin simulated on smooth series",
                    "p": p,
                    "splits_searched": found.tried[i],
                    "since": when,
                    "before_mean": before,
                    "after_mean": after,
                    "share_of_curve_error": found.sse / found.curve_sse,
                    "margin": found.margin,
                    "autocorrelation": found.phi,
                },
            )
        )
    if not findings:
        return None
    return ctx.outcome(*findings)
