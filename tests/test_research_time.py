"""Column roles and time-aware statistics on data shaped as others shape it: time keys in every
common form, series with one row per period, row-number and code columns, seasons, level
shifts, series that only share time, events dated only to the year, two-level columns and a
few named parents."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lemmata.agents.research.explore import Explorer
from lemmata.agents.research.profile import survey
from lemmata.agents.research.run import research
from lemmata.agents.research.timeforms import detect_time
from lemmata.agents.research.types import Insight
from lemmata.environments.database import Database


def _months(n: int, start: int = 2000) -> list[date]:
    return [date(start + i // 12, i % 12 + 1, 1) for i in range(n)]


def _write(path: Path, table: str, columns: dict[str, str], rows: list[tuple[Any, ...]]) -> Path:
    con = sqlite3.connect(path)
    cols = ", ".join(f'"{c}" {t}' for c, t in columns.items())
    con.execute(f'CREATE TABLE "{table}" ({cols})')
    con.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(columns))})', rows)
    con.commit()
    con.close()
    return path


def _insights(path: Path) -> list[Insight]:
    db = Database(path)
    explorer = Explorer(db, survey(db))
    found: list[Insight] = []
    for h in explorer.initial():
        found += explorer.test(h).insights
    return found


def _reproduces(path: Path, ins: Insight) -> bool:
    value = sqlite3.connect(path).execute(ins.evidence_sql).fetchone()[0]
    return value is not None and ins.value is not None and abs(value - ins.value) < 1e-9


# A month as each form writes it, with the SQL type a source would declare.
FORMS: dict[str, tuple[str, Any]] = {
    "year_month": ("TEXT PRIMARY KEY", lambda d: d.strftime("%Y-%m")),
    "iso": ("TEXT", lambda d: d.isoformat()),
    "quarter_text": ("TEXT", None),
    "month_name": ("TEXT", lambda d: d.strftime("%b %Y")),
    "decimal_year": ("REAL", lambda d: round(d.year + (d.month - 1) / 12, 4)),
    "epoch_s": ("INTEGER", lambda d: int((d - date(1970, 1, 1)).days * 86400)),
    "epoch_ms": ("INTEGER", lambda d: int((d - date(1970, 1, 1)).days * 86400 * 1000)),
    "excel": ("INTEGER", lambda d: (d - date(1899, 12, 30)).days),
    "yyyymmdd": ("INTEGER", lambda d: int(d.strftime("%Y%m%d"))),
    "month_day_year": ("TEXT", lambda d: f"{d.month:02d}/{d.day}/{d.year}"),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_monthly_series_gets_its_trend_whatever_form_its_time_takes(
    tmp_path: Path, form: str
) -> None:
    rng = np.random.default_rng(7)
    declared, write = FORMS[form]
    n = 60
    days = (
        _months(n)
        if write is not None
        else [date(1990 + i // 4, 3 * (i % 4) + 1, 1) for i in range(n)]
    )
    stamp = write or (lambda d: f"{d.year}Q{(d.month - 1) // 3 + 1}")
    sales = 100 + 2.0 * np.arange(n) + rng.normal(0, 5, n)
    path = _write(
        tmp_path / "s.sqlite",
        "sales",
        {"period": declared, "sales": "REAL"},
        [(stamp(d), float(s)) for d, s in zip(days, sales, strict=True)],
    )
    db = Database(path)
    table = survey(db).tables["sales"]
    assert table.columns["period"].role == "date"
    assert table.series and table.time == "period"
    assert table.period == ("quarter" if write is None else "month")
    trends = [i for i in _insights(path) if i.kind == "trend" and "sales" in i.columns]
    assert trends and trends[0].direction == "increase"
    assert _reproduces(path, trends[0])
    # The value is the slope per period: 2 a month (or a quarter), not per day or per year.
    assert trends[0].value == pytest.approx(2.0, rel=0.15)


@pytest.mark.parametrize(
    ("values", "name", "form"),
    [
        (["2023-01-15", "2023-02-01 08:30:00", "2023-03-05T10:00:00Z"], "when", "iso"),
        (["2023/01/15", "2023/02/01", "2023/03/05"], "x", "iso_slash"),
        (["2023Q1", "2023-Q2", "Q3 2023"], "x", "quarter"),
        (["January 2020", "Feb 2020", "Mar-2020"], "x", "month_name"),
        (["05/20/1987", "05/21/1987", "06/1/1987", "12/31/1999"], "x", "month_day_year"),
        (["20/05/1987", "21/05/1987", "1/06/1987", "31/12/1999"], "x", "day_month_year"),
        ([1990, 1991, 1992], "year", "year"),
        ([1990, 1991, 1992, 1993, 1994, 1995, 1996], "x", "year"),  # unnamed: a regular index
    ],
)
def test_time_forms_read_the_same_in_python_and_in_sql(
    values: list[Any], name: str, form: str
) -> None:
    found = detect_time(values, name=name)
    assert found is not None and found.name == form
    con = sqlite3.connect(":memory:")
    for v in values:
        in_sql = con.execute(f"WITH v(c) AS (SELECT ?) SELECT date({found.sql('c')}) FROM v", (v,))
        assert in_sql.fetchone()[0] == date.fromordinal(int(found.day(v))).isoformat()


def test_a_daily_series_dated_day_first_or_month_first_gets_its_change(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    days = [date.fromordinal(date(2008, 1, 1).toordinal() + i) for i in range(400)]
    price = np.where(np.arange(400) < 200, 130.0, 45.0) + rng.normal(0, 3, 400)
    for order, stamp in (
        ("month first", lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}"),
        ("day first", lambda d: f"{d.day}/{d.month}/{d.year}"),
    ):
        path = _write(
            tmp_path / f"{order}.sqlite",
            "oil",
            {"day": "TEXT", "price": "REAL"},
            [(stamp(d), float(p)) for d, p in zip(days, price, strict=True)],
        )
        table = survey(Database(path)).tables["oil"]
        column = table.columns["day"]
        assert column.role == "date" and order in column.evidence
        assert (column.minimum, column.maximum) == ("2008-01-01", "2009-02-03")
        assert table.series and table.period == "day"
        falls = [i for i in _insights(path) if i.kind == "change" and i.direction == "decrease"]
        assert falls and "price" in falls[0].columns


def test_slash_dates_that_need_both_orders_are_no_time() -> None:
    # 13/01 is day first, 01/13 month first: no one order reads the column.
    assert detect_time(["13/01/2000", "01/13/2000", "02/02/2000", "03/03/2000"]) is None
    # 31/02 is no day either way.
    assert detect_time(["31/02/2000", "02/31/2000", "30/02/2000"], name="date") is None


def test_numbers_that_only_look_like_years_stay_numbers() -> None:
    assert detect_time([2019, 1500, 2750, 1999, 2100], name="price") is None
    assert detect_time([45000, 45001, 45010], name="income") is None


def test_year_text_stacked_country_by_country_is_time_whatever_its_columns_name() -> None:
    # A long panel's period column named 'obs': each country's years, one block after another.
    years = [str(y) for y in range(1990, 2014)]
    form = detect_time(years * 4, name="obs")
    assert form is not None and form.name == "year"
    assert detect_time(list(range(1990, 2014)) * 3, name="obs") is not None
    # Codes that repeat in blocks but do not run up to the same years stay numbers.
    assert detect_time([2019, 1500, 2750, 1999, 2100, 2200, 2019, 1500, 2750] * 2) is None
    assert detect_time([1990, 1991, 1992, 1990, 1991, 1992], name="obs") is None  # too short


def _csv_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "csv"
    folder.mkdir()
    rng = np.random.default_rng(3)
    lines = ['"","time","value","dose","sensor_code"']
    for i in range(120):
        year = 1949 + i / 12
        lines.append(
            f"{i + 1},{year:.4f},{100 + 1.5 * i + rng.normal(0, 4):.2f},"
            f"{rng.choice([0.5, 1.0, 2.0])},{rng.choice([101, 205, 317, 422, 530, 611, 702])}"
        )
    (folder / "series.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_a_csv_with_a_row_number_column_and_decimal_years(tmp_path: Path) -> None:
    report = research(_csv_folder(tmp_path), tmp_path / "out", budget_turns=30, figures=False)
    roles = report.stats["columns"]["series"]
    row_column = next(c for c in roles if c.lower().startswith("unnamed") or c in ("", "column1"))
    assert roles[row_column].startswith("key: row numbers")
    assert roles["time"].startswith("date: 120 of 120 values read as decimal_year")
    assert roles["sensor_code"].startswith("categorical: integer codes")
    assert report.stats["time_series"] == {"series": "one row per month of time"}
    # The trend is found, over the decimal year; nothing is said about the row numbers or codes.
    assert any(i.kind == "trend" and i.columns == ["value", "time"] for i in report.insights)
    mentioned = {c for i in report.insights for c in i.columns}
    assert row_column not in mentioned and "sensor_code" not in [
        i.columns[0] for i in report.insights
    ]
    assert not any(i.kind == "correlation" for i in report.insights)


def test_a_seasonal_series_gets_its_trend_that_a_straight_line_misses(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    n = 120
    t = np.arange(n)
    # A small rise under a large yearly cycle: a line through the raw months explains < 0.3.
    y = 50 + 0.1 * t + 20 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n)
    assert np.corrcoef(t, y)[0, 1] ** 2 < 0.3
    path = _write(
        tmp_path / "s.sqlite",
        "visitors",
        {"month": "TEXT PRIMARY KEY", "visitors": "REAL"},
        [(d.strftime("%Y-%m"), float(v)) for d, v in zip(_months(n), y, strict=True)],
    )
    trends = [i for i in _insights(path) if i.kind == "trend"]
    assert len(trends) == 1 and trends[0].direction == "increase"
    assert trends[0].support["seasonal"] is True
    assert "seasonal pattern taken out" in trends[0].statement
    assert trends[0].support["theil_sen_slope"] == pytest.approx(0.1, rel=0.2)


def test_a_dated_level_shift_in_a_yearly_series(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    years = list(range(1871, 1971))
    flow = [(1100 if y < 1899 else 850) + rng.normal(0, 120) for y in years]
    path = _write(
        tmp_path / "nile.sqlite",
        "flow",
        {"year": "INTEGER PRIMARY KEY", "flow": "REAL"},
        [(y, float(f)) for y, f in zip(years, flow, strict=True)],
    )
    changes = [i for i in _insights(path) if i.kind == "change"]
    assert len(changes) == 1 and changes[0].direction == "decrease"
    assert changes[0].support["since"] == "1899-01-01"
    assert _reproduces(path, changes[0])


def test_series_that_both_follow_time_are_not_called_related(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    n = 80
    t = np.arange(n)
    a = 10 + 0.5 * t + rng.normal(0, 2, n)  # two unrelated rises
    b = 300 - 1.5 * t + rng.normal(0, 6, n)
    driver = np.cumsum(rng.normal(0, 1, n))  # a wandering series and one that follows it
    follower = 3 * driver + rng.normal(0, 0.5, n)
    assert abs(np.corrcoef(a, b)[0, 1]) > 0.9  # what a plain Pearson test would report
    path = _write(
        tmp_path / "s.sqlite",
        "economy",
        {"year": "INTEGER", "a": "REAL", "b": "REAL", "driver": "REAL", "follower": "REAL"},
        [
            (1900 + i, *map(float, row))
            for i, row in enumerate(zip(a, b, driver, follower, strict=True))
        ],
    )
    pairs = {tuple(sorted(i.columns)) for i in _insights(path) if i.kind == "correlation"}
    assert ("a", "b") not in pairs
    assert ("driver", "follower") in pairs


def test_an_event_table_with_epoch_seconds_is_bucketed_by_month(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    rows = []
    start = (date(2020, 1, 1) - date(1970, 1, 1)).days * 86400
    for i in range(3000):
        offset = float(rng.uniform(0, 730 * 86400))
        rows.append((i, int(start + offset), 20 + 10 * offset / (730 * 86400) + rng.normal(0, 2)))
    path = _write(
        tmp_path / "e.sqlite",
        "readings",
        {"reading_id": "INTEGER PRIMARY KEY", "created_at": "INTEGER", "level": "REAL"},
        rows,
    )
    table = survey(Database(path)).tables["readings"]
    assert table.columns["created_at"].time_form == "epoch_s" and not table.series
    trends = [i for i in _insights(path) if i.kind == "trend" and "level" in i.columns]
    assert trends and trends[0].direction == "increase" and "monthly mean" in trends[0].statement
    assert _reproduces(path, trends[0])


def test_bad_dates_one_row_tables_and_empty_columns_are_observations(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    rows = []
    for i in range(3000):
        day = date(2021, 1, 1).toordinal() + int(rng.integers(0, 700))
        stamp = "not a date" if i % 1000 == 7 else date.fromordinal(day).isoformat()
        level = 50 + 20 * (day - date(2021, 1, 1).toordinal()) / 700 + rng.normal(0, 3)
        rows.append((i, stamp, level, None))
    path = _write(
        tmp_path / "bad.sqlite",
        "readings",
        {"reading_id": "INTEGER PRIMARY KEY", "taken": "TEXT", "level": "REAL", "note": "TEXT"},
        rows,
    )
    _write(tmp_path / "bad.sqlite", "single", {"year": "INTEGER", "v": "REAL"}, [(2020, 1.0)])
    report = research(path, tmp_path / "out", budget_turns=30, figures=False)
    assert report.stats["source_unchanged"]
    assert any("3 of 3000 values do not read as iso dates" in o for o in report.observations)
    assert any("readings.note has no values" in o for o in report.observations)
    assert report.stats["columns"]["readings"]["note"].startswith("empty")
    assert any(i.kind == "trend" and i.columns == ["level", "taken"] for i in report.insights)


def test_events_dated_only_to_the_year_are_grouped_by_year(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = [
        (f"{year}-01-01", 20 + 0.8 * (year - 2000) + rng.normal(0, 2))
        for year in range(2000, 2012)
        for _ in range(30)
    ]
    path = _write(tmp_path / "y.sqlite", "cars", {"model_year": "TEXT", "mpg": "REAL"}, rows)
    (trend,) = [i for i in _insights(path) if i.kind == "trend" and "mpg" in i.columns]
    assert trend.support["period"] == "year"
    assert "a year" in trend.statement and "12 years" in trend.statement
    assert trend.direction == "increase" and _reproduces(path, trend)
    assert trend.value is not None and 0.6 < trend.value < 1.0


def test_a_two_level_column_tells_the_higher_level(tmp_path: Path) -> None:
    # One level higher is the other lower; which is told must not follow the hash order.
    rng = np.random.default_rng(6)
    rows = [(i, "a" if i % 2 else "b", (0 if i % 2 else 5) + rng.normal(0, 2)) for i in range(200)]
    path = _write(
        tmp_path / "g.sqlite",
        "t",
        {"id": "INTEGER PRIMARY KEY", "grade": "TEXT", "score": "REAL"},
        rows,
    )
    (diff,) = [i for i in _insights(path) if i.kind == "group_difference"]
    assert (diff.entities, diff.direction) == (["grade=b"], "higher")


def test_of_a_few_named_parents_the_one_that_differs_most_is_told(tmp_path: Path) -> None:
    # Eleven firms by name: "big" invests far more but varies a lot, "steady" a little more
    # with hardly any spread (the larger t); the largest difference is the one to report.
    rng = np.random.default_rng(7)
    names = ["big", "steady", *(f"firm {k}" for k in range(9))]
    path = _write(
        tmp_path / "f.sqlite",
        "firms",
        {"firm_id": "INTEGER PRIMARY KEY", "firm": "TEXT"},
        list(enumerate(names, 1)),
    )
    mean_sd = {"big": (600.0, 200.0), "steady": (300.0, 5.0)}
    rows = [
        (fid, year, float(rng.normal(*mean_sd.get(name, (100.0, 40.0)))))
        for fid, name in enumerate(names, 1)
        for year in range(1935, 1955)
    ]
    _write(
        tmp_path / "f.sqlite",
        "investment",
        {"firm_id": "INTEGER REFERENCES firms(firm_id)", "year": "INTEGER", "invest": "REAL"},
        rows,
    )
    found = [i for i in _insights(path) if i.kind == "relationship" and "firm" in i.columns]
    assert [(i.entities, i.direction) for i in found] == [(["firm=big"], "higher")]
    assert _reproduces(path, found[0])


def _monthly(path: Path, values: Any) -> Path:
    rows = [
        (d.strftime("%Y-%m"), float(v)) for d, v in zip(_months(len(values)), values, strict=True)
    ]
    return _write(path, "jobs", {"month": "TEXT PRIMARY KEY", "employed": "REAL"}, rows)


def test_a_fall_and_a_recovery_is_one_dated_change_not_a_step(tmp_path: Path) -> None:
    # Employment rising, falling by 8 for two years from 2008-06 and recovering to its course.
    rng = np.random.default_rng(12)
    t = np.arange(144)
    dip = ((t >= 101) & (t < 125)) * -8.0
    path = _monthly(tmp_path / "jobs.sqlite", 100 + 0.2 * t + dip + rng.normal(0, 1.5, 144))
    (change,) = [i for i in _insights(path) if i.kind == "change"]
    assert change.direction == "decrease" and "recovered" in change.statement
    assert (change.support["since"], change.support["until"]) == ("2008-06-01", "2010-06-01")
    assert change.support["shift"] == pytest.approx(-8, abs=1.5)
    assert _reproduces(path, change)
    # The rise itself is still told as the trend it is.
    assert any(i.kind == "trend" and i.direction == "increase" for i in _insights(path))


def test_a_step_that_stays_is_not_told_as_a_recovery(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    t = np.arange(120)
    path = _monthly(tmp_path / "step.sqlite", 50 + (t >= 60) * 6.0 + rng.normal(0, 1.5, 120))
    (change,) = [i for i in _insights(path) if i.kind == "change"]
    assert change.direction == "increase" and "stayed there" in change.statement
    assert change.support["since"] == "2005-01-01"


def test_no_fall_and_recovery_in_noise_or_in_a_curve(tmp_path: Path) -> None:
    found = []
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        t = np.arange(96.0)
        # Noise, and a smooth curve (a slowdown and a pick-up, no break) with noise.
        curve = 0.004 * (t - 48) ** 2
        for k, y in enumerate([rng.normal(0, 1, 96), curve + rng.normal(0, 1, 96)]):
            path = _monthly(tmp_path / f"n{seed}_{k}.sqlite", 20 + y)
            found += [
                i.statement for i in _insights(path) if i.kind == "change" and "until" in i.support
            ]
    assert found == []


def test_the_stretch_search_has_a_bound_on_the_periods_it_holds() -> None:
    from lemmata.agents.research.timeseries import MAX_SEGMENT_PERIODS, segment

    n = MAX_SEGMENT_PERIODS
    y = np.r_[np.zeros(n // 2), -3 * np.ones(n // 4), np.zeros(n - n // 2 - n // 4)]
    found = segment(np.arange(float(n)), y)
    assert found is not None and (found.start, found.end) == (n // 2, n // 2 + n // 4)
    assert segment(np.arange(n + 1.0), np.r_[y, 0.0]) is None
