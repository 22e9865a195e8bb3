"""The statistics the checks share: robust z-scores, skewness, the level that differs most
from the rest, correlation with time taken out, and per-entity means."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from lemmata.agents.research.checks.base import DataProblem

__all__ = [
    "MIN_GROUP",
    "best_level",
    "best_rank_level",
    "block_residuals",
    "entity_means",
    "holm_passes",
    "level_splits",
    "level_tests",
    "other_level",
    "pair_screen",
    "group_screen",
    "comparisons",
    "robust_z",
    "step_up_bar",
    "twins",
    "same_number",
    "skew",
    "typed",
    "within_month_r",
]

#: The fewest rows a level (and the rest) needs for a Welch test.
MIN_GROUP = 15


def robust_z(x: Any) -> Any:
    """(x - median) / (1.4826 MAD); the standard deviation stands in when the MAD is 0."""
    import numpy as np

    median = np.median(x)
    mad = np.median(np.abs(x - median)) * 1.4826
    if mad == 0:
        mad = np.std(x) or 1e-12
    return (x - median) / mad


def skew(x: Any) -> float:
    from scipy import stats

    return float(stats.skew(x))


def best_level(
    x: Any, groups: list[Any], alpha: float = 1e-6, min_group: int = MIN_GROUP
) -> tuple[Any, float, float, float, float] | None:
    """The level whose mean differs most from the rest: (level, mean, rest mean, d, p).

    Of the levels whose difference is significant (Welch p < ``alpha``), the one with the
    largest effect (the heaviest species, the biggest firm), not the one measured most
    precisely; else the one with the largest t. None when no level and its rest both have
    ``min_group`` values."""
    found = level_tests(x, groups, min_group)
    if not found:
        return None
    significant = [f for f in found if f[4] < alpha]
    size = 3 if significant else 5  # |d|, else |t|
    pool = significant or found
    top = max(abs(f[size]) for f in pool)
    # Of two levels that differ equally (the two of a binary column: one higher is the
    # other lower), the higher one is told.
    tied = [f for f in pool if math.isclose(abs(f[size]), top, rel_tol=1e-9)]
    if not tied:  # the largest is NaN: levels whose values are all one number
        raise DataProblem("a level's difference is undefined (its values are all equal)")
    level, ma, mb, d, p, _ = max(tied, key=lambda f: f[3])
    return level, ma, mb, d, p


def level_splits(x: Any, groups: list[Any], min_group: int) -> Iterator[tuple[Any, Any, Any]]:
    """Each level's values and the rest's, ``(level, values, rest)``, for the levels that (and
    whose rest) have ``min_group`` finite values, in sorted order (so that a choice among them
    does not follow the hash order of the levels); an empty or None group is no level."""
    import numpy as np

    g = np.array([None if v == "" else v for v in groups], dtype=object)
    ok = np.isfinite(x) & np.array([v is not None for v in g])
    x, g = x[ok], g[ok]
    for level in sorted(set(g.tolist()), key=str):
        inside = g == level
        a, b = x[inside], x[~inside]
        if len(a) >= min_group and len(b) >= min_group:
            yield level, a, b


def level_tests(
    x: Any, groups: list[Any], min_group: int = MIN_GROUP
) -> list[tuple[Any, float, float, float, float, float]]:
    """Each level against the rest, by Welch's t-test: (level, mean, rest mean, Cohen's d, p,
    t), for the levels that (and whose rest) have ``min_group`` values, in sorted order (so
    that a choice among them does not follow the hash order of the levels)."""
    from scipy import stats

    found = []
    for level, a, b in level_splits(x, groups, min_group):
        t, p = stats.ttest_ind(a, b, equal_var=False)
        pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2) or 1e-12
        d = (a.mean() - b.mean()) / pooled
        found.append((level, float(a.mean()), float(b.mean()), float(d), float(p), float(t)))
    return found


def best_rank_level(
    x: Any, groups: list[Any], alpha: float, min_group: int = MIN_GROUP
) -> tuple[Any, float, float, float, float] | None:
    """The level whose values rank furthest from the rest's, by the Mann-Whitney test (for a
    skewed column, where a few large values carry a mean and Welch's test assumes no such
    tails): (level, mean, rest mean, rank-biserial r, p). Of the levels with p < ``alpha``,
    the one with the largest \\|r\\| (the higher one of a tie); None when none has, or no
    level and its rest both have ``min_group`` values. The rank-biserial r is
    ``2 U / (n1 n2) - 1``: the chance that a value of the level exceeds one of the rest, less
    the chance of the opposite."""
    from scipy import stats

    found = []
    for level, a, b in level_splits(x, groups, min_group):
        u = stats.mannwhitneyu(a, b)
        r = 2 * float(u.statistic) / (len(a) * len(b)) - 1
        if float(u.pvalue) < alpha:
            found.append((level, float(a.mean()), float(b.mean()), r, float(u.pvalue)))
    if not found:
        return None
    top = max(abs(f[3]) for f in found)
    tied = [f for f in found if math.isclose(abs(f[3]), top, rel_tol=1e-9)]
    return max(tied, key=lambda f: f[3])


def block_residuals(
    x: Any, columns: list[list[Any]], names: list[str], share: float
) -> tuple[Any, list[str]]:
    """``x`` less the means of the blocks it falls in, for each of ``columns`` (groupings of
    the same rows) whose levels explain at least ``share`` of its variance; with the names
    of the groupings taken out. Rows whose block is NULL keep NaN."""
    import numpy as np

    out = np.array(x, dtype=float)
    used = []
    for name, column in zip(names, columns, strict=True):
        g = np.array(["" if v is None else str(v) for v in column], dtype=object)
        ok = np.isfinite(out) & (g != "")
        if ok.sum() < 2 * MIN_GROUP:
            continue
        _, inverse = np.unique(g[ok], return_inverse=True)
        sizes = np.bincount(inverse)
        if len(sizes) < 2 or sizes.min() < 2:
            continue
        means = np.bincount(inverse, weights=out[ok]) / sizes
        fitted = means[inverse]
        total = float(((out[ok] - out[ok].mean()) ** 2).sum())
        if total == 0 or float(((fitted - out[ok].mean()) ** 2).sum()) < share * total:
            continue
        out[ok] -= fitted
        out[~ok] = np.nan
        used.append(name)
    return out, used


def holm_passes(p: float, others: list[float], m: int, rate: float) -> bool:
    """Whether ``p`` is rejected by Holm's step-down procedure at family-wise ``rate`` over
    ``m`` hypotheses, of which ``others`` are p-values of some of the rest (those not given
    count as never rejected). Holm keeps Bonferroni's guarantee under any dependence and
    rejects at least what it does: the smallest p-value must clear ``rate / m``, the next
    ``rate / (m - 1)``, and so on, stopping at the first that does not.

    >>> holm_passes(0.0024, [0.5], m=21, rate=0.05)  # first: 0.05 / 21 = 0.00238
    False
    >>> holm_passes(0.0024, [1e-9] * 15 + [0.5], m=21, rate=0.05)  # 16th: 0.05 / 6
    True
    """
    ranked = sorted([*others, p])
    for j, q in enumerate(ranked):
        if not q < rate / max(1, m - j):
            return False
        if q == p:
            return True
    return False


def step_up_bar(values: list[float], m: int, rate: float) -> float:
    """The p-value bar of the Benjamini-Hochberg step-up procedure at false-discovery rate
    ``rate`` over ``m`` hypotheses, of which ``values`` are p-values of some (those not given
    count as never rejected): the largest p-value ``p_(k)`` with ``p_(k) <= rate k / m``, and
    at least Bonferroni's ``rate / m`` (a p-value at or under the bar is a discovery).

    Where every hypothesis is null, it rejects anything with the same chance as Bonferroni
    (``rate``); where many are not (a survey's columns related throughout), each discovery
    loosens the bar of the next, as Holm's step-down, whose bar moves from ``rate / m`` only
    to ``rate / (m - k)``, does not.

    >>> step_up_bar([0.0001, 0.003, 0.5], m=20, rate=0.05)  # 0.003 <= 0.05 * 2 / 20
    0.003
    >>> step_up_bar([0.5], m=10, rate=0.05)
    0.005
    """
    bar = rate / max(1, m)
    for k, q in enumerate(sorted(values), 1):
        if q <= rate * k / max(1, m):
            bar = max(bar, q)
    return bar


def comparisons(groups: list[Any]) -> int:
    """How many distinct level-against-the-rest tests a column's levels make: one per level,
    but one for a column of two (the first level against the second is the second against
    the first)."""
    levels = len({g for g in groups if g is not None and g != ""})
    return 1 if levels == 2 else max(1, levels)


def twins(num: dict[str, Any]) -> dict[str, str]:
    """Each column of ``num`` mapped to the first column it is a strictly monotone transform
    of (over the same rows, the one's order is the other's, ties and all: a wage and its
    logarithm, experience and its square), or to itself. A hypothesis about a wage and one
    about its logarithm ask the same question; a family of tests counts it once. Two series
    that both rise with time are no twins: somewhere one dips while the other does not.

    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 5.0, 3.0, np.nan])
    >>> twins({"wage": x, "lwage": np.log(x), "hours": np.array([3.0, 1.0, 2.0, 5.0, 4.0])})
    {'wage': 'wage', 'lwage': 'wage', 'hours': 'hours'}
    """
    import numpy as np

    names = list(num)
    rep = {c: c for c in names}
    ranked: dict[str, tuple[bytes, Any]] = {}
    for c in names:
        x = np.asarray(num[c], dtype=float)
        ok = np.isfinite(x)
        if ok.sum() >= 3 and float(np.std(x[ok])) > 0:
            ranked[c] = (ok.tobytes(), _ranks(x[ok]))
    for i, a in enumerate(names):
        if rep[a] != a or a not in ranked:
            continue
        for b in names[i + 1 :]:
            if rep[b] != b or b not in ranked or ranked[a][0] != ranked[b][0]:
                continue
            ra, rb = ranked[a][1], ranked[b][1]
            if np.array_equal(ra, rb) or np.array_equal(ra, len(ra) + 1 - rb):
                rep[b] = a
    return rep


def other_level(groups: list[Any], level: Any) -> Any | None:
    """The one other level of a column of two levels (None when it has more or fewer): a
    difference of one of them from the rest is the opposite difference of the other."""
    levels = {v for v in groups if v is not None and v != ""}
    if len(levels) != 2 or level not in levels:
        return None
    return next(v for v in levels if v != level)


def within_month_r(x: Any, y: Any, days: Any) -> float | None:
    """Pearson r of ``x`` and ``y`` after each month's mean is taken out of both (both may
    simply follow time: a trend and a step change correlate with each other); None when
    there are too few months or pairs to tell."""
    import numpy as np

    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(days)
    if ok.sum() < 30:
        return None
    months = np.array([_month_of(d) for d in days[ok]])
    if len(np.unique(months)) < 6:
        return None
    xs, ys = x[ok].astype(float), y[ok].astype(float)
    _, inverse = np.unique(months, return_inverse=True)
    for v in (xs, ys):
        sums = np.bincount(inverse, weights=v)
        counts = np.bincount(inverse)
        v -= (sums / counts)[inverse]
    if xs.std() == 0 or ys.std() == 0:
        return None
    return float(np.corrcoef(xs, ys)[0, 1])


def _month_of(day: float) -> int:
    from datetime import date

    d = date.fromordinal(int(day))
    return d.year * 12 + d.month


def entity_means(keys: list[Any], x: Any, counts: bool = False) -> dict[Any, tuple[float, int]]:
    """Each key's mean of ``x`` (its number of rows when ``counts``) and its number of rows;
    NULL keys and non-finite values left out."""
    sums: dict[Any, list[float]] = {}
    for k, v in zip(keys, x, strict=True):
        if k is None or not math.isfinite(v):
            continue
        sums.setdefault(k, []).append(float(v))
    if counts:
        return {k: (float(len(v)), len(v)) for k, v in sums.items()}
    return {k: (sum(v) / len(v), len(v)) for k, v in sums.items()}


def same_number(a: Any, b: str) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def typed(value: str, column: list[Any]) -> Any:
    """``value`` as the column stores it (an int for an integer key)."""
    sample = next((v for v in column if v is not None), None)
    if isinstance(sample, int | float) and not isinstance(sample, bool):
        try:
            f = float(value)
        except ValueError:
            return value
        return int(f) if isinstance(sample, int) and f.is_integer() else f
    return value


def _ranks(x: Any) -> Any:
    """The ranks of ``x``'s finite values (ties averaged); NaN stays NaN."""
    import numpy as np
    from scipy import stats

    out = np.full(len(x), np.nan)
    ok = np.isfinite(x)
    out[ok] = stats.rankdata(x[ok])
    return out


def pair_screen(x: Any, y: Any) -> float:
    """A quick \\|t\\| of the association of two columns, the larger of Pearson's and of
    the ranks' (Spearman's): how far from chance a correlation test of them can come. 0 with
    fewer than 4 pairs or a constant column."""
    import numpy as np

    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < 4:
        return 0.0
    best = 0.0
    for a, b in ((x[ok], y[ok]), (_ranks(x[ok]), _ranks(y[ok]))):
        if float(np.std(a)) == 0 or float(np.std(b)) == 0:
            return 0.0
        r = min(0.999999, abs(float(np.corrcoef(a, b)[0, 1])))
        best = max(best, r * math.sqrt((n - 2) / (1 - r * r)))
    return best


def group_screen(x: Any, groups: list[Any], min_group: int = 6) -> float:
    """A quick \\|t\\| of the level that differs most from the rest (Welch's statistic on
    the values and on their ranks, the larger): how far from chance a group-difference test
    can come. 0 when no level and its rest have ``min_group`` values."""
    import numpy as np

    best = 0.0
    for values in (np.asarray(x, dtype=float), _ranks(np.asarray(x, dtype=float))):
        for _, a, b in level_splits(values, groups, min_group):
            se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
            if se > 0:
                best = max(best, abs(float(a.mean() - b.mean())) / se)
    return best
