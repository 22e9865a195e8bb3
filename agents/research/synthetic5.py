"""A fifth generator: economic and social time series as statistical agencies and econometrics
textbooks ship them.

An agency's table is one row per period (20-80 years, 40-120 quarters, 60-240 months) with
several series side by side (output, prices, rates, crime, births), or the same few series
stacked by country or state (a long panel). Time is written the way such files write it: a
year integer, a decimal year (``1990.25``), ``'YYYY-MM'``, ``'YYYYQn'``, an ISO date. The
series are autocorrelated (AR(1) noise) or wander (random walks); quarterly and monthly ones
may carry a seasonal pattern; a price deflator turns a real series into its nominal twin, and a
growth rate stands beside its level.

Documented facts about such tables are of four kinds, and this module plants them among
series that hold none:

- ``trend``: a monotone trend of modest size against autocorrelated noise (a line, or a random
  walk's drift), its strength a t-statistic on the noise's effective sample size drawn from
  ``T_RANGE``; in a panel, one shared by all units and one of a single unit;
- ``change``: a dated level shift (a policy change, a recession), strength from ``CHANGE_T``;
  where it is dated is in :attr:`SeriesTable.dates` (a run must date it within ``TOLERANCE``
  periods);
- ``outlier``: one period far off the series' own course (a strike year, a data break),
  ``OUTLIER_Z`` standard deviations of its noise; small beside the spread of a trending
  series, so that only the series' local level shows it;
- ``correlation``: two series whose changes move together (the same shocks).

The two planted trends of a wide table only share a trend: reporting them as related is a
false discovery (:attr:`SeriesTable.shared_trend`). With ``planted=False`` the same columns hold
noise only (random walks among them: the hard nulls), and every trend, change, outlier or
correlation reported is a false discovery, except between a column and the columns it is
computed from (:meth:`SeriesTable.is_by_construction`).

Neither :mod:`~lemmata.agents.research.synthetic`, :mod:`~lemmata.agents.research.synthetic2`
nor :mod:`~lemmata.agents.research.synthetic3` writes this shape.

>>> import tempfile, pathlib
>>> g = generate(pathlib.Path(tempfile.mkdtemp()) / "series.sqlite", seed=3)
>>> g.periods >= 20, {i.kind for i in g.checklist} <= {"trend", "change", "outlier", "correlation"}
(True, True)
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from lemmata.agents.research.types import ChecklistItem
from lemmata.environments.database import quote_ident

__all__ = [
    "CHANGE_T",
    "DOMAINS",
    "OUTLIER_Z",
    "TOLERANCE",
    "T_RANGE",
    "SeriesTable",
    "generate",
]

#: The t-statistic of a planted trend on the noise's effective sample size.
T_RANGE = (4.0, 9.0)
#: The t-statistic of a planted level shift (before against after, effective sample size).
CHANGE_T = (5.0, 10.0)
#: How far a planted outlier is off its series' course, in standard deviations of the noise.
OUTLIER_Z = (6.0, 10.0)
#: How many periods a change may be dated off by, per period.
TOLERANCE = {"year": 2, "quarter": 3, "month": 4}

# A series: (name, level, spread, decimals). Values are level + spread * (standardised series).
_Series = tuple[str, float, float, int]

DOMAINS: dict[str, dict[str, Any]] = {
    "macro": {
        "table": "macro",
        "period": "year",
        "span": (25, 80),
        "series": [
            ("realgdp", 5000.0, 400.0, 1),
            ("deflator", 80.0, 6.0, 2),
            ("cons", 3400.0, 260.0, 1),
            ("invest", 800.0, 90.0, 1),
            ("unemp", 6.0, 0.9, 1),
            ("tbill", 5.0, 1.2, 2),
            ("m2", 2600.0, 240.0, 0),
            ("exports", 600.0, 70.0, 1),
            ("pop", 220.0, 12.0, 2),
        ],
        "nominal": ("gdp", "realgdp", "deflator"),
        "growth": ("infl", "deflator"),
    },
    "social": {
        "table": "crime_births",
        "period": "year",
        "span": (20, 70),
        "series": [
            ("births", 15.0, 1.2, 2),
            ("marriages", 8.5, 0.7, 2),
            ("divorces", 3.6, 0.4, 2),
            ("violent", 480.0, 45.0, 1),
            ("burglary", 900.0, 90.0, 1),
            ("murders", 6.5, 0.8, 2),
            ("prisoners", 300.0, 35.0, 0),
            ("lifeexp", 75.0, 1.1, 2),
            ("teenbirths", 45.0, 5.0, 1),
        ],
        "nominal": None,
        "growth": ("prison_growth", "prisoners"),
    },
    "quarterly": {
        "table": "quarterly",
        "period": "quarter",
        "span": (40, 120),
        "series": [
            ("realgdp", 9000.0, 500.0, 1),
            ("pce", 99.0, 4.0, 3),
            ("hours", 100.0, 3.0, 2),
            ("hstarts", 1500.0, 160.0, 0),
            ("retail", 300.0, 25.0, 1),
            ("unemp", 6.0, 0.8, 1),
            ("ffrate", 4.0, 1.0, 2),
            ("wages", 22.0, 1.5, 2),
            ("prodty", 100.0, 4.0, 2),
        ],
        "nominal": ("gdp", "realgdp", "pce"),
        "growth": ("gdp_growth", "realgdp"),
    },
    "monthly": {
        "table": "monthly",
        "period": "month",
        "span": (60, 240),
        "series": [
            ("indpro", 100.0, 5.0, 2),
            ("cpi", 200.0, 8.0, 2),
            ("claims", 350.0, 40.0, 0),
            ("unrate", 6.0, 0.8, 1),
            ("sentiment", 85.0, 7.0, 1),
            ("oil", 60.0, 9.0, 2),
            ("electricity", 300.0, 25.0, 1),
            ("passengers", 450.0, 50.0, 0),
            ("payrolls", 140.0, 4.0, 2),
        ],
        "nominal": None,
        "growth": ("cpi_infl", "cpi"),
    },
    "states": {
        "table": "state_panel",
        "period": "year",
        "span": (20, 45),
        "units": (
            "state",
            ["Alabama", "Ohio", "Texas", "Oregon", "Maine", "Iowa", "Utah", "Idaho"],
        ),
        "series": [
            ("crime", 450.0, 40.0, 1),
            ("unemp", 6.0, 0.8, 1),
            ("income", 40.0, 2.5, 2),
            ("births", 14.0, 1.0, 2),
            ("prisoners", 350.0, 30.0, 0),
        ],
        "nominal": None,
        "growth": None,
    },
    "countries": {
        "table": "country_panel",
        "period": "year",
        "span": (20, 50),
        "units": (
            "country",
            ["Austria", "Chile", "Denmark", "France", "Japan", "Kenya", "Mexico", "Norway"],
        ),
        "series": [
            ("gdppc", 20000.0, 1500.0, 0),
            ("inflation", 4.0, 1.2, 2),
            ("lifeexp", 72.0, 1.2, 2),
            ("fertility", 2.4, 0.25, 3),
            ("openness", 60.0, 8.0, 1),
        ],
        "nominal": None,
        "growth": None,
    },
}

#: How each period's time may be written: (column names, forms).
_FORMS = {
    "year": (["year", "yr", "obs"], ["year_int", "year_text", "iso"]),
    "quarter": (["quarter", "date", "period", "time"], ["quarter", "decimal", "iso"]),
    "month": (["month", "date", "period"], ["year_month", "decimal", "iso"]),
}


@dataclass
class SeriesTable:
    """A generated table of time series: what was planted, where the changes are dated, and
    which columns are computed from which."""

    path: Path
    table: str
    domain: str
    period: str
    periods: int
    time: str
    form: str
    checklist: list[ChecklistItem]
    #: Each planted change's date (the first period of the new level, ISO) by item id.
    dates: dict[str, str] = field(default_factory=dict)
    #: Column -> the columns it is computed from (a nominal series, a growth rate).
    bases: dict[str, list[str]] = field(default_factory=dict)
    #: The two series of a wide table that only share a trend (empty when none).
    shared_trend: frozenset[str] = frozenset()
    units: list[str] = field(default_factory=list)
    #: The series written as random walks (in a panel: of some unit), and the columns
    #: computed from them.
    walks: set[str] = field(default_factory=set)

    def _planted_columns(self) -> set[str]:
        return {c.lower() for it in self.checklist for c in it.columns if c != self.time}

    def is_by_construction(self, kind: str, columns: list[str]) -> bool:
        """Whether a finding of ``kind`` about ``columns`` follows from what was planted or
        from how the columns are computed (a nominal series and its real twin, a level and its
        growth rate, a column computed from a series with a planted fact): on a table of
        noise, any other trend, change, outlier or correlation is a false discovery."""
        cols = [c.lower() for c in columns if c and c.lower() != self.time.lower()]
        planted = self._planted_columns()
        bases = {k.lower(): [b.lower() for b in v] for k, v in self.bases.items()}
        if kind == "correlation" and len(cols) == 2:
            a, b = cols
            if a in bases.get(b, []) or b in bases.get(a, []):
                return True
            if set(bases.get(a, [])) & set(bases.get(b, [])):
                return True
            pair = frozenset(cols)
            return any(
                it.kind == "correlation" and frozenset(c.lower() for c in it.columns) == pair
                for it in self.checklist
            )
        for c in cols:
            same = any(
                it.kind == kind and c in [x.lower() for x in it.columns] for it in self.checklist
            )
            if same or set(bases.get(c, [])) & planted:
                return True
        return False


def _write_time(period: str, form: str, start: int, i: int) -> tuple[Any, str]:
    """Period ``i`` after ``start`` written in ``form``, and its ISO first day."""
    if period == "year":
        year = start + i
        first = date(year, 1, 1).isoformat()
        return {"year_int": year, "year_text": str(year), "iso": first}[form], first
    if period == "quarter":
        year, q = divmod(start * 4 + i, 4)
        first = date(year, 3 * q + 1, 1).isoformat()
        value = {"quarter": f"{year}Q{q + 1}", "decimal": year + q / 4, "iso": first}[form]
        return value, first
    year, m = divmod(start * 12 + i, 12)
    first = date(year, m + 1, 1).isoformat()
    value = {"year_month": f"{year}-{m + 1:02d}", "decimal": round(year + m / 12, 4), "iso": first}
    return value[form], first


def _noise(rng: Any, n: int, walk: bool, phi: float, shocks: Any | None = None) -> Any:
    """Standardised noise: AR(1) with coefficient ``phi`` (marginal sd 1), or a random walk
    (sample sd 1); from ``shocks`` when given."""
    import numpy as np

    e = rng.normal(size=n) if shocks is None else shocks
    if walk:
        x = np.cumsum(e)
        return (x - x.mean()) / (x.std() or 1.0)
    x = np.empty(n)
    x[0] = e[0]
    scale = math.sqrt(1 - phi * phi)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + scale * e[i]
    return x


def _season(rng: Any, n: int, period: str) -> Any:
    """A seasonal pattern of one to one and a half noise sds (none for a year)."""
    import numpy as np

    if period == "year":
        return np.zeros(n)
    k = 4 if period == "quarter" else 12
    shape = rng.normal(size=k)
    shape = (shape - shape.mean()) / (shape.std() or 1.0) * rng.uniform(1.0, 1.5)
    return shape[np.arange(n) % k]


def _trend(rng: Any, n: int, phi: float) -> Any:
    """A line whose slope is a t-statistic from ``T_RANGE`` on AR(1) noise's effective
    sample size, signed at random."""
    import numpy as np

    t = np.arange(n, dtype=float)
    eff = n * (1 - phi) / (1 + phi)
    slope = rng.uniform(*T_RANGE) / (t.std() * math.sqrt(eff))
    return float(rng.choice([-1.0, 1.0])) * slope * (t - t.mean())


def generate(
    path: Path, seed: int, *, planted: bool = True, domain: str | None = None
) -> SeriesTable:
    """Write one table of time series to ``path`` (SQLite, replaced if it exists) and return
    what was planted in it. ``domain`` is one of :data:`DOMAINS` (drawn from the seed when
    None)."""
    import numpy as np

    if domain is not None and domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}: one of {', '.join(DOMAINS)}")
    rng = np.random.default_rng(seed)
    name = domain or str(rng.choice(sorted(DOMAINS)))
    spec = DOMAINS[name]
    period = spec["period"]
    n = int(rng.integers(spec["span"][0], spec["span"][1] + 1))
    names, forms = _FORMS[period]
    time_col = str(rng.choice(names))
    form = str(rng.choice(forms))
    start = int(rng.integers(1948, 2024 - n // {"year": 1, "quarter": 4, "month": 12}[period]))
    stamps = [_write_time(period, form, start, i) for i in range(n)]
    series: list[_Series] = [tuple(s) for s in spec["series"]]
    if "units" in spec:
        return _panel(path, seed, rng, name, spec, n, time_col, form, stamps, series, planted)
    table = spec["table"]
    k = len(series)
    walks = rng.random(k) < 0.35
    phis = rng.uniform(0.0, 0.7, k)
    z = np.array([_noise(rng, n, bool(walks[i]), phis[i]) for i in range(k)])
    seasonal = [rng.random() < 0.5 for _ in range(k)]
    items: list[ChecklistItem] = []
    dates: dict[str, str] = {}
    shared: frozenset[str] = frozenset()
    if planted:
        order = [int(i) for i in rng.permutation(k)]
        trend_cols, change_col, pair, out_cols = order[:2], order[2], order[3:5], order[5:7]
        for j, i in enumerate(trend_cols):
            # A trend against AR(1) noise, or a random walk's drift (growing output).
            walks[i] = walks[i] and rng.random() < 0.5
            if walks[i]:
                e = rng.normal(size=n)
                drift = rng.uniform(*T_RANGE) / math.sqrt(n - 1) * float(rng.choice([-1, 1]))
                x = np.cumsum(e + drift)
                z[i] = (x - x.mean()) / float(np.std(np.cumsum(e)) or 1.0)
            else:
                z[i] = _noise(rng, n, False, phis[i]) + _trend(rng, n, phis[i])
            up = bool(z[i][-n // 4 :].mean() > z[i][: n // 4].mean())
            items.append(_item(f"trend{j}", "trend", table, [series[i][0], time_col], up))
        shared = frozenset(series[i][0] for i in trend_cols)
        i = change_col
        walks[i] = False
        at = int(rng.integers(int(0.25 * n), int(0.75 * n) + 1))
        eff = (1 - phis[i]) / (1 + phis[i])
        shift = rng.uniform(*CHANGE_T) * math.sqrt(1 / at + 1 / (n - at)) / math.sqrt(eff)
        sign = float(rng.choice([-1.0, 1.0]))
        z[i] = _noise(rng, n, False, phis[i]) + sign * shift * (np.arange(n) >= at)
        items.append(_item("change", "change", table, [series[i][0], time_col], sign > 0))
        dates["change"] = stamps[at][1]
        a, b = pair
        rho = rng.uniform(0.5, 0.85)
        ea, eb = rng.normal(size=n), rng.normal(size=n)
        eb = rho * ea + math.sqrt(1 - rho * rho) * eb
        sign = float(rng.choice([-1.0, 1.0]))
        walk = bool(walks[a])
        walks[b] = walk
        z[a] = _noise(rng, n, walk, phis[a], ea)
        z[b] = _noise(rng, n, walk, phis[a], sign * eb)
        items.append(
            ChecklistItem(
                id="comove",
                kind="correlation",
                table=table,
                columns=[series[a][0], series[b][0]],
                direction="positive" if sign > 0 else "negative",
            )
        )
        for j, i in enumerate(out_cols):
            # A strike year (low) or a data break (high), away from the ends.
            walks[i] = False
            z[i] = _noise(rng, n, False, phis[i])
            at = int(rng.integers(2, n - 2))
            up = j == 1
            z[i][at] += (1 if up else -1) * rng.uniform(*OUTLIER_Z)
            items.append(
                ChecklistItem(
                    id=f"outlier{j}",
                    kind="outlier",
                    table=table,
                    columns=[series[i][0]],
                    entities=[f"{time_col}={stamps[at][0]}"],
                    direction="higher" if up else "lower",
                )
            )
    columns: dict[str, Any] = {time_col: [s[0] for s in stamps]}
    for i, (col, level, spread, decimals) in enumerate(series):
        values = level + spread * (z[i] + (_season(rng, n, period) if seasonal[i] else 0.0))
        columns[col] = np.round(values, decimals)
    walked = {series[i][0] for i in range(k) if walks[i]}
    bases: dict[str, list[str]] = {}
    if spec["nominal"]:
        nominal, real, deflator = spec["nominal"]
        columns[nominal] = np.round(columns[real] * columns[deflator] / 100, 1)
        bases[nominal] = [real, deflator]
    if spec["growth"]:
        growth, level_col = spec["growth"]
        x = columns[level_col]
        columns[growth] = np.r_[np.nan, np.round(100 * (x[1:] / x[:-1] - 1), 2)]
        bases[growth] = [level_col]
    walked |= {c for c, b in bases.items() if set(b) & walked}
    _create(path, table, columns, [time_col], time_col, seed)
    return SeriesTable(
        path=path,
        table=table,
        domain=name,
        period=period,
        periods=n,
        time=time_col,
        form=form,
        checklist=items,
        dates=dates,
        bases=bases,
        shared_trend=shared,
        walks=walked,
    )


def _item(id_: str, kind: str, table: str, columns: list[str], up: bool, unit: str = "") -> Any:
    return ChecklistItem(
        id=id_,
        kind=kind,  # type: ignore[arg-type]
        table=table,
        columns=columns,
        entities=[unit] if unit else [],
        direction="increase" if up else "decrease",
    )


def _panel(
    path: Path,
    seed: int,
    rng: Any,
    name: str,
    spec: dict[str, Any],
    n: int,
    time_col: str,
    form: str,
    stamps: list[tuple[Any, str]],
    series: list[_Series],
    planted: bool,
) -> SeriesTable:
    """A long panel: each unit's series stacked, unit by unit. Planted: a trend shared by all
    units, a trend of one unit and a level shift of one unit."""
    import numpy as np

    table = spec["table"]
    unit_col, pool = spec["units"]
    units = [str(u) for u in rng.choice(pool, size=int(rng.integers(3, 7)), replace=False)]
    k = len(series)
    # Units differ in level (a state's crime rate is its own), by up to a noise sd.
    offsets = rng.uniform(-1.0, 1.0, (len(units), k))
    z = np.empty((len(units), k, n))
    walked: set[str] = set()
    for u in range(len(units)):
        for i in range(k):
            walk = rng.random() < 0.35
            if walk:
                walked.add(series[i][0])
            z[u, i] = _noise(rng, n, walk, float(rng.uniform(0.0, 0.7))) + offsets[u, i]
    items: list[ChecklistItem] = []
    dates: dict[str, str] = {}
    if planted:
        common, own, shifted = (int(i) for i in rng.permutation(k)[:3])
        phi = float(rng.uniform(0.0, 0.6))
        line = _trend(rng, n, phi)
        for u in range(len(units)):
            z[u, common] = _noise(rng, n, False, phi) + line + offsets[u, common]
        up = bool(line[-1] > line[0])
        items.append(_item("trend", "trend", table, [series[common][0], time_col], up))
        u = int(rng.integers(len(units)))
        z[u, own] = _noise(rng, n, False, phi) + _trend(rng, n, phi) + offsets[u, own]
        up = bool(z[u, own][-n // 4 :].mean() > z[u, own][: n // 4].mean())
        entity = f"{unit_col}={units[u]}"
        items.append(_item("unit_trend", "trend", table, [series[own][0], time_col], up, entity))
        u = int(rng.integers(len(units)))
        at = int(rng.integers(int(0.25 * n), int(0.75 * n) + 1))
        eff = (1 - phi) / (1 + phi)
        shift = rng.uniform(*CHANGE_T) * math.sqrt(1 / at + 1 / (n - at)) / math.sqrt(eff)
        sign = float(rng.choice([-1.0, 1.0]))
        steps = sign * shift * (np.arange(n) >= at)
        z[u, shifted] = _noise(rng, n, False, phi) + steps + offsets[u, shifted]
        entity = f"{unit_col}={units[u]}"
        items.append(
            _item("unit_change", "change", table, [series[shifted][0], time_col], sign > 0, entity)
        )
        dates["unit_change"] = stamps[at][1]
    columns: dict[str, list[Any]] = {unit_col: [], time_col: []}
    for col, *_ in series:
        columns[col] = []
    for u, unit in enumerate(units):
        columns[unit_col] += [unit] * n
        columns[time_col] += [s[0] for s in stamps]
        for i, (col, level, spread, decimals) in enumerate(series):
            columns[col] += list(np.round(level + spread * z[u, i], decimals))
    _create(path, table, columns, [unit_col, time_col], "", seed)
    return SeriesTable(
        path=path,
        table=table,
        domain=name,
        period=spec["period"],
        periods=n,
        time=time_col,
        form=form,
        checklist=items,
        dates=dates,
        units=units,
        walks=walked,
    )


def _create(
    path: Path, table: str, columns: dict[str, Any], first: list[str], key: str, seed: int
) -> None:
    """Write the table: the ``first`` columns (unit, time) first, the time column its primary
    key (``key``) in about half of the wide tables, the series in a shuffled order, NaN as
    NULL."""
    import numpy as np

    rng = np.random.default_rng(seed + 7919)
    rest = [str(c) for c in rng.permutation([c for c in columns if c not in first])]
    names = first + rest

    def sql_type(c: str) -> str:
        v = columns[c][0]
        if isinstance(v, str):
            return "TEXT"
        if isinstance(v, int | np.integer):
            return "INTEGER"
        return "REAL"

    def cell(v: Any) -> Any:
        if isinstance(v, np.integer):
            return int(v)
        if isinstance(v, float | np.floating):
            return None if math.isnan(float(v)) else float(v)
        return v

    primary = key and rng.random() < 0.5
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    try:
        decl = ", ".join(
            f"{quote_ident(c)} {sql_type(c)}{' PRIMARY KEY' if primary and c == key else ''}"
            for c in names
        )
        con.execute(f"CREATE TABLE {quote_ident(table)} ({decl})")
        rows = [[cell(columns[c][r]) for c in names] for r in range(len(columns[names[0]]))]
        marks = ", ".join("?" * len(names))
        con.executemany(f"INSERT INTO {quote_ident(table)} VALUES ({marks})", rows)
        con.commit()
    finally:
        con.close()
