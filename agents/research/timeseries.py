"""Statistics of values over time: periods, seasonality, robust trends, level shifts, and the
correlation that is left once time is taken out.

- A trend is judged by the Mann-Kendall test (Kendall's tau of the values against time, which
  needs no straight line and no normal noise) with the Theil-Sen slope (the median of the
  pairwise slopes), after the seasonal pattern is taken out where there is one.
- Seasonality: the period's season (month of the year for a monthly series, quarter for a
  quarterly one) explains the detrended values (Kruskal-Wallis p < 1e-3).
- A level shift is the single split that leaves the least squared error, dated by the first
  period after it.
- A fall and a recovery (or a rise and a return) is a stretch of periods that departs from the
  series' course and comes back: the segment that, added to a line, leaves the least squared
  error (:func:`segment`), set against a single step added to the line and against a curve.
- A turn is a bend in the series' course: a line broken at two periods (continuous, three
  straight pieces, :func:`turn`), set against a line and a curve; a rise that turns into a
  fall and back (the peak, slump and recovery of a recession) is told by its steepest piece,
  which a single step or a smooth curve tells wrongly.
- Several level shifts (:func:`changes`): binary segmentation, each split tested within its
  stretch on an effective sample size for autocorrelated noise, the levels set against a
  quadratic with a margin simulated on smooth series with the same noise.
- Two series that both follow time correlate whether or not they are related; their
  relation is judged on first differences (period to period changes) instead.

>>> import numpy as np
>>> t = np.arange(48.0)
>>> y = 0.5 * t + 10 * np.sin(2 * np.pi * t / 12)
>>> fit = trend(t, y, season_of=t % 12)
>>> fit.seasonal, round(fit.slope, 1), fit.p < 1e-6
(True, 0.5, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Any

__all__ = [
    "AUTOCORRELATED",
    "Changes",
    "MAX_SEGMENT_PERIODS",
    "STRETCH_CRITICAL",
    "Segment",
    "Trend",
    "Turn",
    "WANDERING_LAG1",
    "ZA_CRITICAL",
    "changes",
    "cointegrated",
    "deseasonalize",
    "differenced_r",
    "drift",
    "effective_share",
    "jump",
    "lag1",
    "period_key",
    "period_start",
    "season_of",
    "segment",
    "step",
    "trend",
    "turn",
    "walk_tau_p",
    "wanders",
]

PERIODS = ("day", "week", "month", "quarter", "year")

#: Whether the tests of a series' trend and changes allow for autocorrelated noise and for a
#: random walk: a trend must clear Mann-Kendall on an effective sample size (the line's
#: residuals' lag-1 autocorrelation) or a drift test on the period-to-period changes, and each
#: change's F-test (and a single step's Welch test) is taken on the effective sample size of
#: its own model's residuals (a random walk cut into levels leaves little autocorrelation; cut
#: once, it leaves much). Off: measured on (off), with the local outlier test in both,
#: research_series development seeds 0-19 recall 0.729 (0.750), null false discoveries 3.6
#: (6.45) a table; but real data (c) 0.920 (0.960), (d) 0.721 (0.791): the changes of
#: us_employment and elec_equip and the trends of AAPL and interest_inflation are lost.
AUTOCORRELATED = False


def effective_share(resid: Any) -> float:
    """The share of the sample that autocorrelated residuals are worth, ``(1 - phi) / (1 +
    phi)`` for their lag-1 autocorrelation ``phi`` (clipped to 0-0.9); 1 when
    ``AUTOCORRELATED`` is off."""
    if not AUTOCORRELATED:
        return 1.0
    phi = _lag1(resid)
    return (1 - phi) / (1 + phi)


def period_key(day: float, period: str) -> int:
    """The index of the period (``month``: year * 12 + month) that ordinal ``day`` falls in."""
    d = date.fromordinal(int(day))
    if period == "year":
        return d.year
    if period == "quarter":
        return d.year * 4 + (d.month - 1) // 3
    if period == "month":
        return d.year * 12 + d.month
    if period == "week":
        return int(day) // 7
    return int(day)


def period_start(key: int, period: str) -> date:
    """The first day of the period ``key`` (the inverse of :func:`period_key`)."""
    if period == "year":
        return date(key, 1, 1)
    if period == "quarter":
        year, q = divmod(key, 4)
        return date(year, 3 * q + 1, 1)
    if period == "month":
        year, month = divmod(key - 1, 12)
        return date(year, month + 1, 1)
    if period == "week":
        return date.fromordinal(key * 7)
    return date.fromordinal(key)


def season_of(keys: Any, period: str) -> Any | None:
    """Each period's season (month of the year, quarter), or None for periods without one."""
    import numpy as np

    keys = np.asarray(keys, dtype=int)
    if period == "month":
        return (keys - 1) % 12
    if period == "quarter":
        return keys % 4
    return None


@dataclass
class Trend:
    """A trend fit: Theil-Sen ``slope`` per period, Mann-Kendall ``tau`` and ``p``, ``r2`` of
    the line on the (deseasonalized) values, and whether a season was taken out."""

    slope: float
    tau: float
    p: float
    r2: float
    seasonal: bool
    values: Any  # the values the fit used (deseasonalized where seasonal)


def deseasonalize(t: Any, y: Any, seasons: Any) -> tuple[Any, bool]:
    """``y`` (at times ``t``) less each season's mean departure from a line, and True, when
    the season explains the departures (Kruskal-Wallis p < 1e-3, three periods a season);
    else ``y`` as it is and False."""
    import numpy as np
    from scipy import stats

    levels = np.unique(seasons)
    if len(levels) < 2 or len(y) < 3 * len(levels):
        return y, False
    line = np.polyfit(t, y, 1)
    resid = y - np.polyval(line, t)
    groups = [resid[seasons == s] for s in levels]
    if min(len(g) for g in groups) < 2 or np.ptp(resid) == 0:
        return y, False
    if not float(stats.kruskal(*groups).pvalue) < 1e-3:
        return y, False
    means = {s: float(g.mean()) for s, g in zip(levels, groups, strict=True)}
    return y - np.array([means[s] for s in seasons]), True


def trend(t: Any, y: Any, season_of: Any | None = None) -> Trend:
    """Mann-Kendall and Theil-Sen over ``y`` at times ``t``, seasons taken out when
    ``season_of`` gives each point's season and the season matters."""
    import numpy as np
    from scipy import stats

    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    seasonal = False
    if season_of is not None:
        y, seasonal = deseasonalize(t, y, np.asarray(season_of))
    tau, p = stats.kendalltau(t, y)
    slope = float(stats.theilslopes(y, t).slope)
    r = np.corrcoef(t, y)[0, 1] if np.ptp(y) > 0 else 0.0
    tau = 0.0 if math.isnan(tau) else float(tau)
    p = 1.0 if math.isnan(p) else float(p)
    if AUTOCORRELATED and len(y) >= 6 and p < 1.0:
        p = _robust_trend_p(t, y, tau, p)
    return Trend(slope=slope, tau=tau, p=p, r2=float(r * r), seasonal=seasonal, values=y)


def _robust_trend_p(t: Any, y: Any, tau: float, p: float) -> float:
    """The p-value of a trend that autocorrelated noise or a random walk does not explain:
    Mann-Kendall on the effective sample size of the line's residuals, or a drift (the mean
    period-to-period change against its spread, in the trend's direction), whichever is
    stronger, Bonferroni over the two."""
    import numpy as np
    from scipy import stats

    order = np.argsort(t, kind="stable")
    t, y = t[order], y[order]
    resid = y - np.polyval(np.polyfit(t, y, 1), t)
    z = float(stats.norm.isf(p / 2)) * math.sqrt(effective_share(resid))
    corrected = float(2 * stats.norm.sf(z))
    steps = np.diff(y)
    drift = 1.0
    if len(steps) >= 5 and steps.std(ddof=1) > 0:
        td = float(steps.mean() / (steps.std(ddof=1) / math.sqrt(len(steps))))
        if td * tau > 0:
            drift = float(2 * stats.t.sf(abs(td), len(steps) - 1))
    return min(1.0, 2 * min(corrected, drift))


def step(y: Any, margin: int = 3) -> tuple[float, int] | None:
    """The split ``k`` (``y[:k]`` against ``y[k:]``) with the least squared error, and that
    error; None when ``y`` is too short."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    n = len(y)
    if n < 2 * margin:
        return None
    c1, c2 = np.cumsum(y), np.cumsum(y * y)
    k = np.arange(margin, n - margin + 1)
    left = c2[k - 1] - c1[k - 1] ** 2 / k
    right = (c2[-1] - c2[k - 1]) - (c1[-1] - c1[k - 1]) ** 2 / (n - k)
    sse = left + right
    i = int(np.argmin(sse))
    return float(sse[i]), int(k[i])


def differenced_r(t: Any, x: Any, y: Any) -> float | None:
    """Pearson r of the period-to-period changes of ``x`` and ``y`` (ordered by ``t``); None
    when there are too few or they do not vary."""
    import numpy as np

    order = np.argsort(t, kind="stable")
    dx, dy = np.diff(np.asarray(x, float)[order]), np.diff(np.asarray(y, float)[order])
    if len(dx) < 10 or dx.std() == 0 or dy.std() == 0:
        return None
    return float(np.corrcoef(dx, dy)[0, 1])


@dataclass
class Segment:
    """A stretch ``y[start:end]`` that departs from the series' line by ``shift`` and comes
    back. ``p`` is the F-test of adding it to the line (one stretch; ``tried`` were searched,
    so a bar for the best of them is Bonferroni over ``tried``). ``sse`` is what the line and
    the stretch leave; ``line_sse``, ``curve_sse`` and ``step_sse`` what a line, a quadratic
    and a line with one step (a shift that never comes back) leave."""

    start: int
    end: int
    shift: float
    p: float
    sse: float
    line_sse: float
    curve_sse: float
    step_sse: float
    tried: int


#: The most periods :func:`segment` searches (its search holds every pair of ends in memory).
MAX_SEGMENT_PERIODS = 1200


def segment(t: Any, y: Any, margin: int = 3, shortest: int = 2) -> Segment | None:
    """The stretch of at least ``shortest`` periods, with ``margin`` periods before and after
    it, whose departure from a line through ``y`` (at times ``t``) explains the most; None
    when ``y`` is too short, or longer than ``MAX_SEGMENT_PERIODS``.

    With the line's residuals ``r`` and the stretch's indicator ``I``, adding ``I`` to the
    line takes ``(sum of r over I)^2 / |I less its projection on the line|^2`` off the squared
    error; prefix sums give that for every stretch at once.

    >>> import numpy as np
    >>> y = np.r_[np.zeros(10), -5 * np.ones(6), np.zeros(10)] + np.arange(26) * 0.1
    >>> s = segment(np.arange(26.0), y)
    >>> (s.start, s.end, round(s.shift, 1))
    (10, 16, -5.0)
    """
    import numpy as np
    from scipy import stats

    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    n = len(y)
    if not 2 * margin + shortest + 3 <= n <= MAX_SEGMENT_PERIODS or np.ptp(t) == 0:
        return None
    q, _ = np.linalg.qr(np.column_stack([np.ones(n), t - t.mean()]))
    r = y - q @ (q.T @ y)
    line_sse = float(r @ r)
    zero = np.zeros(1)
    cr, c1, c2 = (np.concatenate([zero, np.cumsum(v)]) for v in (r, q[:, 0], q[:, 1]))
    i, j = np.meshgrid(np.arange(margin, n + 1), np.arange(margin, n + 1), indexing="ij")
    inside = (j - i >= shortest) & (j <= n - margin)
    i, j = i[inside], j[inside]
    length = (j - i).astype(float)
    sum_r = cr[j] - cr[i]
    norm = length - (c1[j] - c1[i]) ** 2 - (c2[j] - c2[i]) ** 2
    ok = norm > 1e-9
    if not ok.any():
        return None
    gain = np.where(ok, sum_r**2 / np.where(ok, norm, 1.0), -1.0)
    best = int(np.argmax(gain))
    sse = max(line_sse - float(gain[best]), 0.0)
    # The residuals of the line with the stretch: their autocorrelation shrinks the sample.
    inside_best = (np.arange(n) >= i[best]) & (np.arange(n) < j[best])
    z = inside_best - q @ (q.T @ inside_best.astype(float))
    left = r - float(sum_r[best] / norm[best]) * z
    dof = max(n * effective_share(left) - 3, 1.0)
    f = float(gain[best]) / (sse / dof) if sse > 0 else math.inf
    # A step that never comes back, on the same line: a stretch that runs to the end.
    ends = np.arange(margin, n - margin + 1)
    sum_e = cr[n] - cr[ends]
    norm_e = (n - ends) - (c1[n] - c1[ends]) ** 2 - (c2[n] - c2[ends]) ** 2
    step_sse = line_sse - float(np.max(sum_e**2 / np.maximum(norm_e, 1e-9)))
    curve = np.polyfit(t - t.mean(), y, 2)
    curve_sse = float(np.sum((y - np.polyval(curve, t - t.mean())) ** 2))
    return Segment(
        start=int(i[best]),
        end=int(j[best]),
        shift=float(sum_r[best] / norm[best]),
        p=float(stats.f.sf(f, 1, dof)) if math.isfinite(f) else 0.0,
        sse=sse,
        line_sse=line_sse,
        curve_sse=curve_sse,
        step_sse=max(step_sse, 0.0),
        tried=int(ok.sum()),
    )


@dataclass
class Turn:
    """A line broken at ``y[start]`` and ``y[end]`` (continuous, three straight pieces), told
    by its piece ``y[start:end + 1]``, which moves by ``change`` (``slope`` a period) against
    the pieces before and after it, whose slopes are ``before`` and ``after``. ``p`` is the
    F-test of the two breaks against one line (``tried`` pairs of breaks were searched);
    ``sse`` is what the broken line leaves, ``line_sse`` and ``curve_sse`` what a line and a
    quadratic leave."""

    start: int
    end: int
    slope: float
    change: float
    before: float
    after: float
    p: float
    sse: float
    line_sse: float
    curve_sse: float
    tried: int


#: The most break positions :func:`turn` tries (evenly spread over a longer series).
MAX_TURN_POSITIONS = 48


def turn(t: Any, y: Any, margin: int = 3, shortest: int = 2) -> Turn | None:
    """The line broken at two periods (at least ``shortest`` apart, ``margin`` periods from
    either end) that fits ``y`` at times ``t`` best, told by its steepest piece that runs
    against a neighbouring one (a fall between two rises, a fall before a recovery); None
    when ``y`` is too short or longer than ``MAX_SEGMENT_PERIODS``, or no piece turns.

    >>> import numpy as np
    >>> t = np.arange(40.0)
    >>> y = np.minimum(t, 60 - 3 * t) + np.maximum(0, t - 25) * 2.5
    >>> found = turn(t, y)
    >>> (found.start, found.end, round(found.slope, 1))
    (15, 25, -3.0)
    """
    import numpy as np
    from scipy import stats

    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    n = len(y)
    if not 2 * margin + shortest + 5 <= n <= MAX_SEGMENT_PERIODS or np.ptp(t) == 0:
        return None
    spread = float(np.ptp(t))
    u = (t - t[0]) / spread  # scaled, for a well-conditioned fit
    yc = y - y.mean()
    candidates = np.arange(margin, n - margin)
    if len(candidates) > MAX_TURN_POSITIONS:
        picks = np.linspace(0, len(candidates) - 1, MAX_TURN_POSITIONS).round().astype(int)
        candidates = np.unique(candidates[picks])
    a, b = np.meshgrid(candidates, candidates, indexing="ij")
    keep = b - a >= shortest
    a, b = a[keep], b[keep]
    if not len(a):
        return None
    x = np.empty((len(a), n, 4))
    x[:, :, 0] = 1.0
    x[:, :, 1] = u
    x[:, :, 2] = np.maximum(0.0, u[None, :] - u[a][:, None])
    x[:, :, 3] = np.maximum(0.0, u[None, :] - u[b][:, None])
    gram = np.einsum("pni,pnj->pij", x, x)
    xty = np.einsum("pni,n->pi", x, yc)
    beta = np.linalg.solve(gram, xty[:, :, None])[:, :, 0]
    sse_all = float(yc @ yc) - np.einsum("pi,pi->p", beta, xty)
    best = int(np.argmin(sse_all))
    sse = max(float(sse_all[best]), 0.0)
    i, j = int(a[best]), int(b[best])
    slopes = np.cumsum(beta[best, 1:]) / spread  # per unit of t, piece by piece
    ends = [(0, i), (i, j), (j, n - 1)]
    moves = [slopes[k] * (t[e] - t[s]) for k, (s, e) in enumerate(ends)]
    # The steepest piece whose slope runs against a neighbour's: where the course turns.
    turning = [
        k for k in range(3) if any(0 <= m < 3 and slopes[m] * slopes[k] < 0 for m in (k - 1, k + 1))
    ]
    if not turning:
        return None
    k = max(turning, key=lambda m: abs(slopes[m]))
    line = np.polyfit(u, yc, 1)
    line_sse = float(np.sum((yc - np.polyval(line, u)) ** 2))
    curve = np.polyfit(u, yc, 2)
    curve_sse = float(np.sum((yc - np.polyval(curve, u)) ** 2))
    gain = max(line_sse - sse, 0.0)
    fitted = x[best] @ beta[best]
    dof = max(n * effective_share(yc - fitted) - 4, 1.0)
    f = (gain / 2) / (sse / dof) if sse > 0 else math.inf
    start, end = ends[k]
    return Turn(
        start=start,
        end=end,
        slope=float(slopes[k]),
        change=float(moves[k]),
        before=float(slopes[k - 1]) if k > 0 else math.nan,
        after=float(slopes[k + 1]) if k < 2 else math.nan,
        p=float(stats.f.sf(f, 2, dof)) if math.isfinite(f) else 0.0,
        sse=sse,
        line_sse=line_sse,
        curve_sse=curve_sse,
        tried=len(a),
    )


@dataclass
class Changes:
    """Level shifts found by binary segmentation (:func:`changes`): ``splits`` are the first
    indices of each new level (sorted), ``levels`` the mean of each stretch between them (one
    more than the splits), ``p`` each split's F-test within its stretch (the noise's lag-1
    autocorrelation ``phi`` taken out by an effective sample size), ``tried`` the split points
    each was chosen from, ``sse`` what the levels leave, ``curve_sse`` and ``line_sse`` what a
    quadratic and a line leave, and ``margin`` the share of the curve's error that the levels
    of a smooth series with this noise leave at most in one case in twenty (simulated)."""

    splits: list[int]
    levels: list[float]
    p: list[float]
    tried: list[int]
    sse: float
    curve_sse: float
    line_sse: float
    phi: float
    margin: float


def _split(c1: Any, c2: Any, a: int, b: int, margin: int) -> tuple[float, int, int] | None:
    """The best split of ``y[a:b]`` (from cumulative sums with a leading zero): the squared
    error it removes, the split index and the number of splits searched."""
    import numpy as np

    n = b - a
    if n < 2 * margin:
        return None
    k = np.arange(a + margin, b - margin + 1)
    s, s2 = c1[b] - c1[a], c2[b] - c2[a]
    whole = s2 - s * s / n
    left = (c2[k] - c2[a]) - (c1[k] - c1[a]) ** 2 / (k - a)
    right = (c2[b] - c2[k]) - (c1[b] - c1[k]) ** 2 / (b - k)
    sse = left + right
    i = int(np.argmin(sse))
    return float(whole - sse[i]), int(k[i]), len(k)


def _binseg(y: Any, most: int, margin: int) -> list[tuple[int, float, float, int]]:
    """Binary segmentation of ``y`` into at most ``most`` splits, greedily: each (split,
    error removed, error of its stretch before, splits searched), in the order found."""
    import numpy as np

    c1 = np.r_[0.0, np.cumsum(y)]
    c2 = np.r_[0.0, np.cumsum(y * y)]
    bounds = [0, len(y)]
    out: list[tuple[int, float, float, int]] = []
    for _ in range(most):
        best: tuple[float, int, int, float] | None = None
        for a, b in zip(bounds, bounds[1:], strict=False):
            got = _split(c1, c2, a, b, margin)
            if got is not None and (best is None or got[0] > best[0]):
                s, s2 = c1[b] - c1[a], c2[b] - c2[a]
                best = (got[0], got[1], got[2], float(s2 - s * s / (b - a)))
        if best is None or best[0] <= 0:
            break
        out.append((best[1], best[0], best[3], best[2]))
        bounds = sorted([*bounds, best[1]])
    return out


def _levels_sse(y: Any, splits: list[int]) -> float:
    import numpy as np

    edges = [0, *sorted(splits), len(y)]
    return float(
        sum(np.sum((y[a:b] - y[a:b].mean()) ** 2) for a, b in zip(edges, edges[1:], strict=False))
    )


def _lag1(r: Any) -> float:
    import numpy as np

    r = r - r.mean()
    d = float(np.dot(r, r))
    return float(np.clip(np.dot(r[1:], r[:-1]) / d, 0.0, 0.9)) if d > 0 else 0.0


def changes(
    t: Any,
    y: Any,
    alpha: float,
    most: int = 4,
    margin: int = 3,
    sims: int = 100,
    quantile: float = 0.05,
) -> Changes | None:
    """Several level shifts of ``y`` (at times ``t``) by binary segmentation; None when there
    is none.

    Each split is the best of its stretch; it is kept while its F-test (error removed against
    what is left, on an effective sample size ``n (1 - phi) / (1 + phi)`` for lag-1
    autocorrelation ``phi`` of the levels' residuals) stays under ``alpha`` over the split
    points searched (Bonferroni). The levels must then leave less of a quadratic's error than
    the same search leaves on smooth series with this noise: ``sims`` series of the quadratic
    plus AR(1) noise (``phi`` and the spread of the quadratic's residuals), whose
    ``quantile`` is the margin. Deterministic (the simulation's seed is fixed)."""
    import numpy as np
    from scipy import signal, stats

    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    n = len(y)
    if n < 4 * margin or np.ptp(y) == 0:
        return None
    found = _binseg(y, most, margin)
    if not found:
        return None
    # The noise's autocorrelation is judged from what the most levels leave (a shift left in
    # the residuals would pass for autocorrelation).
    all_splits = [s for s, *_ in found]
    edges = [0, *sorted(all_splits), n]
    resid = np.concatenate([y[a:b] - y[a:b].mean() for a, b in zip(edges, edges[1:], strict=False)])
    phi = _lag1(resid)
    eff = (1 - phi) / (1 + phi)
    kept: list[tuple[int, float, int]] = []
    for i, (split, gain, _stretch, tried) in enumerate(found):
        splits = [s for s, *_ in found[: i + 1]]
        left = _levels_sse(y, splits)
        if AUTOCORRELATED:
            # Each split is judged on the noise its own model leaves: a random walk cut into
            # many levels leaves little autocorrelation, cut once it leaves much.
            edges_i = [0, *sorted(splits), n]
            own = np.concatenate(
                [y[a:b] - y[a:b].mean() for a, b in zip(edges_i, edges_i[1:], strict=False)]
            )
            phi_i = max(phi, _lag1(own))
            eff = (1 - phi_i) / (1 + phi_i)
        dof = n * eff - (2 * len(splits) + 1)
        if dof < 2 or left <= 0:
            p = 0.0 if left <= 0 else 1.0
        else:
            p = float(stats.f.sf(gain / (left / dof), 1, dof))
        if p * tried >= alpha:
            break
        kept.append((split, p, tried))
    if not kept:
        return None
    splits = sorted(s for s, _, _ in kept)
    sse = _levels_sse(y, splits)
    tc = t - t.mean()
    curve = np.polyfit(tc, y, 2)
    curve_fit = np.polyval(curve, tc)
    curve_sse = float(np.sum((y - curve_fit) ** 2))
    line_sse = float(np.sum((y - np.polyval(np.polyfit(t, y, 1), t)) ** 2))
    # The margin: what the same search leaves of a curve's error on smooth series.
    rng = np.random.default_rng(n)
    sd = math.sqrt(curve_sse / max(n - 3, 1) * (1 - phi * phi))
    e = rng.normal(0.0, sd, (sims, n))
    e[:, 0] /= math.sqrt(1 - phi * phi)
    noise = signal.lfilter([1.0], [1.0, -phi], e, axis=1)
    shares = []
    for row in noise:
        z = curve_fit + row
        zs = [s for s, *_ in _binseg(z, len(splits), margin)]
        zc = float(np.sum((z - np.polyval(np.polyfit(tc, z, 2), tc)) ** 2))
        shares.append(_levels_sse(z, zs) / zc if zc > 0 else 1.0)
    margin_share = float(np.quantile(shares, quantile))
    edges = [0, *splits, n]
    levels = [float(y[a:b].mean()) for a, b in zip(edges, edges[1:], strict=False)]
    by_split = {s: (p, k) for s, p, k in kept}
    return Changes(
        splits=splits,
        levels=levels,
        p=[by_split[s][0] for s in splits],
        tried=[by_split[s][1] for s in splits],
        sse=sse,
        curve_sse=curve_sse,
        line_sse=line_sse,
        phi=phi,
        margin=margin_share,
    )


#: The 5% critical value of the Dickey-Fuller t-statistic with a constant and a trend, and its
#: finite-sample terms (MacKinnon 2010): ``c0 + c1 / n + c2 / n^2``.
_DF_CT = (-3.4126, -4.039, -17.83)
#: The critical value of the same regression with a shift in level at the date that makes
#: the statistic least (Zivot and Andrews 1992: -4.80 at 5% for a shift in level, -5.08 for
#: one in level and slope). The stricter value is taken: at -4.80, research_series'
#: development nulls got 0.9 false findings a table instead of 0.55 (more random walks
#: passed for noise around a shift and were cut into levels).
ZA_CRITICAL = -5.08
#: The critical value of the test with two shifts in level, at the ends of the stretch that
#: departs most from a line (Lumsdaine and Papell's 5% value for two breaks is about -6.2;
#: on driftless random walks of 20-144 values, -6.0 rejected 0-3%).
STRETCH_CRITICAL = -6.0
#: The least lag-1 autocorrelation of a series that wanders (a random walk's is near 1; a
#: short series' unit-root test, which has little power, would call much noise a walk).
WANDERING_LAG1 = 0.5


def _df_t(y: Any, step_at: int | tuple[int, ...] | None = None, trend: bool = True) -> float:
    """The t-statistic of ``b`` in the augmented Dickey-Fuller regression ``dy[t] = a + c t +
    b y[t-1] + g dy[t-1] (+ a shift in level and an impulse at ``step_at``)``: well below
    zero when ``y`` returns to its course, near zero when it wanders."""
    import numpy as np

    dy = np.diff(y)
    target = dy[1:]
    m = len(target)
    cols = [np.ones(m), y[1:-1], dy[:-1]]
    if trend:
        cols.append(np.arange(m, dtype=float))
    at = np.arange(2, len(y))
    for k in (step_at,) if isinstance(step_at, int) else step_at or ():
        cols += [(at >= k).astype(float), (at == k).astype(float)]
    x = np.column_stack(cols)
    beta, *_ = np.linalg.lstsq(x, target, rcond=None)
    resid = target - x @ beta
    dof = m - x.shape[1]
    if dof < 3:
        return 0.0
    gram = x.T @ x
    try:
        var = float(np.linalg.inv(gram)[1, 1]) * float(resid @ resid) / dof
    except np.linalg.LinAlgError:
        return 0.0
    return float(beta[1] / math.sqrt(var)) if var > 0 else -math.inf


def wanders(y: Any) -> bool:
    """Whether a series wanders like a random walk (a unit root): the augmented Dickey-Fuller
    test (a constant, a trend, one lagged change) does not reject a unit root at 5%, and
    neither does the same test with a shift in level at the date that makes it least
    (Zivot-Andrews: a series that returns to its course around one level shift is not a
    random walk), nor with shifts at the ends of the stretch that departs most from a line (a
    fall and its recovery), and its lag-1 autocorrelation is at least ``WANDERING_LAG1``. A wandering
    series' trend, level shifts and correlations with other series
    are no findings in themselves: its drift (:func:`drift`), its jumps (:func:`jump`) and
    its changes are. False for fewer than 20 values (too few to tell).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> wanders(np.cumsum(rng.normal(size=80))), wanders(rng.normal(size=80))
    (True, False)
    """
    import numpy as np

    y = np.asarray(y, dtype=float)
    n = len(y)
    if n < 20 or np.ptp(y) == 0 or lag1(y) < WANDERING_LAG1:
        return False
    c0, c1, c2 = _DF_CT
    if _df_t(y) < c0 + c1 / n + c2 / n**2:
        return False
    trim = max(3, int(0.15 * n))
    least = min((_df_t(y, k) for k in range(trim, n - trim)), default=0.0)
    if least < ZA_CRITICAL:
        return False
    # Nor does a series that returns to its course around one stretch off it (a fall in a
    # recession and the recovery after it): the test with shifts at the best stretch's ends.
    off = segment(np.arange(n, dtype=float), y)
    return off is None or not _df_t(y, (off.start, off.end)) < STRETCH_CRITICAL


#: The 5% critical value of the Engle-Granger test for two series (MacKinnon 2010): ``c0 +
#: c1 / n + c2 / n^2``.
_EG_C = (-3.3377, -5.967, -8.98)


def cointegrated(x: Any, y: Any) -> bool:
    """Whether two series (in time order) that wander move together in level (Engle and
    Granger): what is left of ``y`` once a line in ``x`` is taken out does not wander (the
    Dickey-Fuller test rejects a unit root in it at 5%). Two unrelated random walks fit each
    other's course by chance (a spurious regression), and what they leave wanders; two
    series tied together leave a gap that keeps returning to its level. False for fewer
    than 20 values."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(y)
    if n < 20 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return False
    resid = y - np.polyval(np.polyfit(x, y, 1), x)
    c0, c1, c2 = _EG_C
    return _df_t(resid, trend=False) < c0 + c1 / n + c2 / n**2


def drift(y: Any) -> tuple[float, float]:
    """The mean period-to-period change of ``y`` (a random walk's drift) and the two-sided
    p-value of its t-test against no drift (1 when there are fewer than 5 changes or they do
    not vary)."""
    import numpy as np
    from scipy import stats

    steps = np.diff(np.asarray(y, dtype=float))
    if len(steps) < 5 or steps.std(ddof=1) == 0:
        return (float(steps.mean()) if len(steps) else 0.0), 1.0
    t = float(steps.mean() / (steps.std(ddof=1) / math.sqrt(len(steps))))
    return float(steps.mean()), float(2 * stats.t.sf(abs(t), len(steps) - 1))


def jump(y: Any) -> tuple[int, float, float] | None:
    """The largest period-to-period change of ``y`` against the others, as a wandering series
    shifts its level (a single big step among its changes): (the index of the first value
    after it, its departure from the other changes' mean, and its two-sided p-value, not yet
    corrected for the changes searched). The p-value is the t prediction interval's: exact
    for a random walk's normal changes; None for fewer than 10 changes or changes that do not
    vary."""
    import numpy as np
    from scipy import stats

    steps = np.diff(np.asarray(y, dtype=float))
    m = len(steps)
    if m < 10:
        return None
    centre = float(np.median(steps))
    k = int(np.argmax(np.abs(steps - centre)))
    others = np.delete(steps, k)
    sd = float(others.std(ddof=1))
    if sd <= 0:
        return None
    size = float(steps[k] - others.mean())
    z = size / (sd * math.sqrt(1 + 1 / len(others)))
    return k + 1, size, float(2 * stats.t.sf(abs(z), len(others) - 1))


_WALK_TAUS: dict[int, Any] = {}


def walk_tau_p(n: int, tau: float, sims: int = 500) -> float:
    """The share of driftless random walks of ``n`` values whose Mann-Kendall \\|tau\\|
    against time is at least ``abs(tau)`` (simulated once for each ``n``, seed fixed; at
    least one in ``sims + 1``): how often a walk that merely wanders looks as steady as a
    series with this tau. Kendall's tau needs no scale, so one simulation serves every
    series of that length."""
    import numpy as np

    n = min(n, 100)  # the walks' tau settles long before (Brownian motion's)
    if n not in _WALK_TAUS:
        rng = np.random.default_rng(n)
        walks = np.cumsum(rng.normal(size=(sims, n)), axis=1)
        i, j = np.triu_indices(n, 1)
        taus = np.empty(sims)
        for k in range(0, sims, 50):
            block = walks[k : k + 50]
            taus[k : k + 50] = np.sign(block[:, j] - block[:, i]).mean(axis=1)
        _WALK_TAUS[n] = np.sort(np.abs(taus))
    taus = _WALK_TAUS[n]
    above = len(taus) - int(np.searchsorted(taus, abs(tau) - 1e-12))
    return (above + 1) / (len(taus) + 1)


def lag1(y: Any) -> float:
    """The lag-1 autocorrelation of ``y`` in its order (0 when it does not vary)."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    y = y - y.mean()
    d = float(y @ y)
    return float(y[1:] @ y[:-1] / d) if d > 0 and len(y) > 2 else 0.0
