"""Outliers: rows (at most 5) with \\|robust z\\| >= 5.5 (on the log scale for a skewed positive
column); across a link, a parent whose mean over its child rows has \\|robust z\\| >= 6 among
parents (its facts become follow-up hypotheses).

In a time series (one row per period) a period is also judged against the series' own local
level: its distance from the median of its ``LOCAL_SPAN`` neighbours on each side, as a robust
z over all periods (the seasonal pattern of a monthly or quarterly series taken out first; the
first and last ``LOCAL_SPAN`` periods, without neighbours on one side, are not judged),
\\|z\\| >= ``LOCAL_Z``, alone (its neighbours under it: a burst of two high periods or a
zigzag is no outlier). A strike year in a growing output series is far off its neighbours but not
off the pooled values, which the trend spreads out; a short annual series (from
``LOCAL_MIN`` periods) is judged this way only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks.base import CheckContext, DataProblem, Finding, Outcome, fmt
from lemmata.agents.research.checks.entity import entity_hypotheses
from lemmata.agents.research.checks.stats import entity_means, robust_z, skew
from lemmata.agents.research.types import Hypothesis

__all__ = ["LOCAL_MIN", "LOCAL_SPAN", "LOCAL_Z", "check", "isolated", "local_z"]

#: The robust z against its neighbours' median that a period of a series must reach.
LOCAL_Z = 5.5
#: The neighbours on each side whose median is a period's local level.
LOCAL_SPAN = 2
#: The fewest periods a series needs to be judged against its local level.
LOCAL_MIN = 20


def local_z(x: Any, seasons: Any | None = None, span: int = LOCAL_SPAN) -> Any:
    """Each value's distance from the median of its ``span`` neighbours on each side, as a
    robust z over the series; NaN for the first and last ``span`` values, which have no
    neighbours on one side. With ``seasons`` (each value's month or quarter, four cycles or
    more, the seasons differing) the seasonal pattern is taken out first (classical decomposition: each season's
    median distance from a centred moving mean over one cycle), so that every December's peak
    is no outlier. ``x`` is in time order.

    >>> import numpy as np
    >>> x = np.arange(30.0) + np.random.default_rng(0).normal(0, 1, 30); x[12] += 20
    >>> z = local_z(x)
    >>> int(np.nanargmax(np.abs(z))), bool(z[12] > 5.5)
    (12, True)
    """
    import numpy as np

    x = np.asarray(x, dtype=float)
    n = len(x)
    if seasons is not None:
        x = x - _seasonal(x, np.asarray(seasons))
    resid = np.full(n, np.nan)
    for i in range(span, n - span):
        around = np.r_[x[i - span : i], x[i + 1 : i + 1 + span]]
        resid[i] = x[i] - np.median(around)
    z = np.full(n, np.nan)
    inner = np.isfinite(resid)
    if inner.sum() >= 3:
        z[inner] = robust_z(resid[inner])
    return z


def _seasonal(x: Any, seasons: Any) -> Any:
    """Each value's seasonal effect; zero where there are under four cycles or the seasons do
    not differ (one-way ANOVA p >= 1e-3; a rank test misses one month that stands out): a season's median of a few values would take part of
    each value's own noise out and make the rest look extreme."""
    import numpy as np
    from scipy import stats

    levels = np.unique(seasons)
    k = len(levels)
    if k < 2 or len(x) < 4 * k:
        return np.zeros(len(x))
    # A centred moving mean over one cycle (2 x k for an even k) follows the course.
    weights = np.ones(k + 1 - k % 2)
    if k % 2 == 0:
        weights[[0, -1]] = 0.5
    weights /= weights.sum()
    course = np.convolve(x, weights, mode="same")
    half = len(weights) // 2
    detrended = (x - course)[half : len(x) - half]
    inside = seasons[half : len(x) - half]
    groups = [detrended[inside == s] for s in levels]
    if min(len(g) for g in groups) < 2 or np.ptp(detrended) == 0:
        return np.zeros(len(x))
    if not float(stats.f_oneway(*groups).pvalue) < 1e-3:
        return np.zeros(len(x))
    effect = {s: float(np.median(detrended[inside == s])) for s in levels}
    centre = float(np.mean(list(effect.values())))
    return np.array([effect[s] - centre for s in seasons])


def isolated(z: Any, i: int, bar: float = LOCAL_Z) -> bool:
    """Whether ``z[i]`` stands alone: its neighbours in time are under the bar (two periods in
    a row over it, or a zigzag, are a burst, not one period off its course)."""
    import math

    return all(
        not (0 <= j < len(z)) or not math.isfinite(z[j]) or abs(z[j]) < bar for j in (i - 1, i + 1)
    )


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    """Row outliers of ``[column]``; outlying parents for ``[column, link column]``."""
    if len(h.columns) == 2:
        return _entities(ctx, h)
    import numpy as np

    (col,) = h.columns
    t = ctx.table(h.table)
    x = t.num[col]
    ok = np.isfinite(x)
    time = t.profile.time if t.profile.series else None
    if ok.sum() < (LOCAL_MIN if time else 50):
        raise DataProblem(f"{h.table}.{col}: too few values")
    scale = x.copy()
    logged = False
    finite = x[ok]
    # Skew judged without the extreme rows themselves, so that two outliers do not turn
    # the column to the log scale (where small values would look extreme instead).
    if finite.min() > 0 and abs(skew(finite[np.abs(robust_z(finite)) < 7])) >= 1:
        scale = np.where(ok, np.log(np.where(ok, x, 1.0)), np.nan)
        logged = True
    z = np.full(len(x), np.nan)
    if ok.sum() >= 50:
        z[ok] = robust_z(scale[ok])
    local = _local(ctx, h.table, time, scale, ok) if time else {}
    # A period far off its neighbours is told against them where the pooled values do not
    # show it.
    for i, (zi, _) in local.items():
        if np.isfinite(zi) and abs(zi) >= LOCAL_Z and not abs(np.nan_to_num(z[i])) >= 5.5:
            z[i] = zi
    flagged = [i for i in np.argsort(-np.abs(np.nan_to_num(z))) if abs(np.nan_to_num(z[i])) >= 5.5]
    if not flagged or len(flagged) > max(5, int(0.002 * ok.sum())):
        return Outcome(observation=f"{h.table}.{col}: {len(flagged)} extreme rows")
    # A series without a key is told apart by its time column.
    key = t.profile.key or (t.profile.time if t.profile.series else None)
    median = float(np.median(finite))
    findings = []
    for i in flagged[:3]:
        key_col, key_value = (key, t.raw[key][i]) if key else ("rowid", None)
        if key_value is None:
            continue
        zi = float(z[i])
        near = local.get(i)
        by_neighbours = near is not None and near[0] == zi
        against = (
            f"the median of its neighbours in {key}, {fmt(_unscaled(near[1], logged))}"
            if near is not None and by_neighbours
            else f"a median of {fmt(median)}"
        )
        findings.append(
            Finding(
                kind="outlier",
                table=h.table,
                columns=[col],
                entities=[f"{key_col}={key_value}"],
                direction="higher" if zi > 0 else "lower",
                evidence_sql=ev.row_value_sql(h.table, ctx.expr(h.table, col), key_col, key_value),
                statement=_row_statement(h.table, key_col, key_value, col, against, zi),
                score=min(50.0, abs(zi)),
                support={
                    "test": "robust z against the neighbours' median (MAD)"
                    if by_neighbours
                    else "robust z (median, MAD)",
                    "z": zi,
                },
            )
        )
    return ctx.outcome(*findings)


def _unscaled(value: float, logged: bool) -> float:
    import math

    return math.exp(value) if logged else value


def _local(
    ctx: CheckContext, table: str, time: str, scale: Any, ok: Any
) -> dict[int, tuple[float, float]]:
    """Each present row's robust z against its neighbours in time (see :func:`local_z`) and
    its neighbours' median, by row index; empty when the series is too short."""
    import numpy as np

    from lemmata.agents.research import timeseries as ts
    from lemmata.agents.research.checks.temporal import period_of

    t = ctx.table(table)
    days = t.days.get(time)
    if days is None:
        return {}
    rows = np.flatnonzero(ok & np.isfinite(days))
    if len(rows) < LOCAL_MIN:
        return {}
    rows = rows[np.argsort(days[rows], kind="stable")]
    period = period_of(ctx, table, time)
    keys = np.array([ts.period_key(d, period) for d in days[rows]])
    seasons = ts.season_of(keys, period)
    values = scale[rows]
    z = local_z(values, seasons)
    out = {}
    for j, i in enumerate(rows):
        if not isolated(z, j):
            continue
        around = np.r_[values[max(0, j - LOCAL_SPAN) : j], values[j + 1 : j + 1 + LOCAL_SPAN]]
        out[int(i)] = (float(z[j]), float(np.median(around)))
    return out


def _row_statement(
    table: str, key_col: str, key_value: Any, col: str, against: str, z: float
) -> Callable[[float], str]:
    return lambda value: (
        f"{table} row {key_col} = {key_value} has an extreme {col} of {fmt(value)}, against "
        f"{against} (robust z = {fmt(z)})"
    )


def _entities(ctx: CheckContext, h: Hypothesis) -> Outcome:
    import numpy as np

    num, column = h.columns
    t = ctx.table(h.table)
    means = {k: m for k, (m, n) in entity_means(t.raw[column], t.num[num]).items() if n >= 5}
    if len(means) < 20:
        raise DataProblem(f"{h.table}: too few {column} with 5 rows")
    keys = list(means)
    z = robust_z(np.array([means[k] for k in keys]))
    typical = float(np.median(list(means.values())))
    out = Outcome()
    for i in [i for i in np.argsort(-np.abs(z)) if abs(z[i]) >= 6][:3]:
        k, zi = keys[i], float(z[i])
        ins = ctx.confirm(
            Finding(
                kind="outlier",
                table=h.table,
                columns=[num],
                entities=[f"{column}={k}"],
                direction="higher" if zi > 0 else "lower",
                evidence_sql=ev.mean_sql(h.table, ctx.expr(h.table, num), [ev.equals(column, k)]),
                statement=_entity_statement(column, k, h.table, num, typical, zi),
                score=min(50.0, abs(zi)),
                support={"test": "robust z of per-entity means", "z": zi},
            )
        )
        if ins:
            out.insights.append(ins)
            out.follow_ups += [
                hyp.model_copy(update={"origin": "follow-up", "priority": 0.9})
                for hyp in entity_hypotheses(ctx.survey, column, str(k))
                if hyp.kind in {"trend", "share"}
            ]
    return out


def _entity_statement(
    column: str, k: Any, table: str, num: str, typical: float, z: float
) -> Callable[[float], str]:
    return lambda value: (
        f"{column} = {k} stands out in {table}: its mean {num} is {fmt(value)} against a "
        f"typical {fmt(typical)} (robust z = {fmt(z)})"
    )
