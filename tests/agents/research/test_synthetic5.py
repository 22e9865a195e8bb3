"""The time-series generator (lemmata.agents.research.synthetic5): the shapes agencies ship
(one row per period or a long panel, time written as a year, 'YYYY-MM', 'YYYYQn', a decimal
year or a date), planted facts that the written data hold, and tables of noise beside them."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lemmata.agents.research.profile import survey
from lemmata.agents.research.synthetic5 import DOMAINS, SeriesTable, generate
from lemmata.environments.database import Database, quote_ident


def _rows(g: SeriesTable, *columns: str, unit: str | None = None) -> list[tuple]:
    where = ""
    if unit is not None:
        column, _, value = unit.partition("=")
        where = f" WHERE {quote_ident(column)} = '{value}'"
    con = sqlite3.connect(g.path)
    try:
        cols = ", ".join(quote_ident(c) for c in columns)
        return con.execute(f"SELECT {cols} FROM {quote_ident(g.table)}{where}").fetchall()
    finally:
        con.close()


def _series(g: SeriesTable, column: str, unit: str | None = None) -> np.ndarray:
    return np.array([r[0] for r in _rows(g, column, unit=unit)], dtype=float)


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_each_domain_reads_as_a_series_or_a_panel_over_its_time_column(
    tmp_path: Path, domain: str
) -> None:
    g = generate(tmp_path / "s.sqlite", seed=4, domain=domain)
    with Database(g.path) as db:
        table = survey(db).tables[g.table]
    assert table.columns[g.time].role == "date", (g.time, g.form)
    if g.units:
        assert len(table.columns) >= 6 and table.rows == g.periods * len(g.units)
    else:
        # One row per period, several series side by side, growth rates and nominal twins.
        assert table.series and table.time == g.time and table.rows == g.periods
        assert sum(c.role == "numeric" for c in table.columns.values()) >= 9
        assert g.bases


def test_time_is_written_in_each_form_agencies_use(tmp_path: Path) -> None:
    seen = {}
    for seed in range(40):
        g = generate(tmp_path / f"{seed}.sqlite", seed=seed)
        # The second period: a decimal year's first may be a whole year.
        seen[(g.period, g.form)] = _rows(g, g.time)[1][0]
    assert any(isinstance(v, str) and len(v) == 6 and v[4] == "Q" for v in seen.values())
    assert any(isinstance(v, str) and len(v) == 7 and v[4] == "-" for v in seen.values())
    assert any(isinstance(v, float) and not v.is_integer() for v in seen.values())
    assert ("year", "year_int") in seen and ("month", "decimal") in seen


def test_every_planted_fact_is_in_the_written_data(tmp_path: Path) -> None:
    for seed in (1, 3, 6, 0):
        g = generate(tmp_path / f"{seed}.sqlite", seed=seed)
        for item in g.checklist:
            unit = item.entities[0] if item.entities and item.kind != "outlier" else None
            if item.kind == "trend":
                y = _series(g, item.columns[0], unit)
                tau, p = stats.kendalltau(np.arange(len(y)), y)
                assert p < 0.01 and (tau > 0) == (item.direction == "increase"), (seed, item)
            elif item.kind == "change":
                rows = _rows(g, g.time, item.columns[0], unit=unit)
                when = g.dates[item.id]
                with Database(g.path) as db:
                    form = survey(db).tables[g.table].columns[g.time]
                days = np.array([form.day(r[0]) for r in rows])
                y = np.array([r[1] for r in rows], dtype=float)
                after = days >= date.fromisoformat(when).toordinal()
                diff = y[after].mean() - y[~after].mean()
                assert stats.ttest_ind(y[after], y[~after]).pvalue < 1e-3, (seed, item)
                assert (diff > 0) == (item.direction == "increase"), (seed, item)
            elif item.kind == "outlier":
                rows = _rows(g, g.time, item.columns[0])
                at = item.entities[0].split("=", 1)[1]
                i = next(j for j, r in enumerate(rows) if str(r[0]) == at)
                y = np.array([r[1] for r in rows], dtype=float)
                # Far off its neighbours, in the planted direction.
                near = np.median(np.r_[y[max(0, i - 2) : i], y[i + 1 : i + 3]])
                spread = np.median(np.abs(np.diff(y))) or 1.0
                assert (y[i] - near) * (1 if item.direction == "higher" else -1) > 3 * spread
            else:
                a, b = (np.diff(_series(g, c)) for c in item.columns)
                ok = np.isfinite(a) & np.isfinite(b)
                r = np.corrcoef(a[ok], b[ok])[0, 1]
                assert abs(r) > 0.3 and (r > 0) == (item.direction == "positive"), (seed, item)


def test_a_seed_gives_one_table_and_a_table_of_noise_has_nothing_planted(tmp_path: Path) -> None:
    a = generate(tmp_path / "a.sqlite", seed=3)
    b = generate(tmp_path / "b.sqlite", seed=3)
    assert a.checklist == b.checklist and a.path.read_bytes() == b.path.read_bytes()
    null = generate(tmp_path / "null.sqlite", seed=3, planted=False)
    assert null.checklist == [] and null.dates == {}
    # A growth rate and its level are computed from each other; two series are not.
    growth, base = next(iter(null.bases.items()))
    assert null.is_by_construction("correlation", [growth, base[0]])
    others = [c for c in ("births", "violent", "murders") if c not in (growth, *base)]
    assert not null.is_by_construction("correlation", others[:2])
    assert not null.is_by_construction("trend", [others[0], null.time])
    # On the planted table, the two trends only share a trend: no correlation between them.
    assert len(a.shared_trend) == 2
    assert not a.is_by_construction("correlation", sorted(a.shared_trend))


def test_an_unknown_domain_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown domain 'farms'"):
        generate(tmp_path / "x.sqlite", seed=1, domain="farms")
