"""Shapes of real data that the explorer used to miss (the second batch of real data sets):
twenty units, a skewed measure, a plurality among a few dozen rows, the other end of three
groups, a panel of series in long form, a series that grows faster and faster, and a 0/1
outcome among a few dozen units. Each is asserted on what the report says; each has a noise
counterpart that must stay quiet."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from lemmata.agents.research.run import research
from lemmata.agents.research.types import Insight
from lemmata.environments.database import quote_ident

pytestmark = pytest.mark.filterwarnings("ignore")


def _table(path: Path, table: str, data: Mapping[str, Sequence[object]]) -> Path:
    names = list(data)
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE {quote_ident(table)} ({', '.join(map(quote_ident, names))})")
    con.executemany(
        f"INSERT INTO {quote_ident(table)} VALUES ({', '.join('?' for _ in names)})",
        list(zip(*data.values(), strict=True)),
    )
    con.commit()
    con.close()
    return path


def _insights(path: Path, kind: str) -> list[Insight]:
    report = research(path, path.with_suffix(".out"), budget_turns=60, figures=False)
    return [i for i in report.insights if i.kind == kind]


def _twenty(seed: int, r: float) -> dict[str, list[float]]:
    """Twenty men measured (weight, waist) and the exercises they did (chins)."""
    rng = np.random.default_rng(seed)
    weight = rng.normal(0, 1, 20)
    waist = r * weight + np.sqrt(1 - r * r) * rng.normal(0, 1, 20)
    return {
        "weight": [round(180 + 25 * v, 1) for v in weight],
        "waist": [round(35 + 3 * v, 1) for v in waist],
        "chins": [round(9 + 5 * v, 1) for v in rng.normal(0, 1, 20)],
    }


def test_a_strong_correlation_among_twenty_units_is_told(tmp_path: Path) -> None:
    # Twenty rows used to be "too few pairs" (30 were needed) whatever the correlation.
    path = _table(tmp_path / "men.sqlite", "athletes", _twenty(3, 0.85))
    found = _insights(path, "correlation")
    assert [sorted(i.columns) for i in found] == [["waist", "weight"]]
    assert found[0].direction == "positive" and "n = 20" in found[0].statement


def test_no_correlation_among_twenty_units_of_noise(tmp_path: Path) -> None:
    found = []
    for seed in range(20):
        path = _table(tmp_path / f"noise{seed}.sqlite", "athletes", _twenty(seed, 0.0))
        found += _insights(path, "correlation")
    assert len(found) <= 2


def test_a_skewed_measure_is_compared_by_rank(tmp_path: Path) -> None:
    from scipy import stats

    # The population of a voter's town: lognormal, a few cities carry the mean. The smaller
    # towns of one party's voters are plain by rank, while Welch's test on the means is not.
    rng = np.random.default_rng(2)
    vote = np.array([1] * 400 + [0] * 550)
    popul = np.exp(rng.normal(3.2 - 0.9 * vote, 2.0))
    path = _table(
        tmp_path / "voters.sqlite",
        "voters",
        {"vote": [int(v) for v in vote], "popul": [float(v) for v in popul]},
    )
    assert stats.ttest_ind(popul[vote == 1], popul[vote == 0], equal_var=False).pvalue > 1e-6
    found = [i for i in _insights(path, "group_difference") if "popul" in i.columns]
    assert len(found) == 1
    told = found[0]
    # Told from either level: lower where vote = 1, or higher where vote = 0.
    assert (told.entities, told.direction) in ((["vote=1"], "lower"), (["vote=0"], "higher"))
    assert "Mann-Whitney" in told.support["test"]


def test_a_skewed_measure_of_sixteen_units_in_two_groups_is_compared_by_rank(
    tmp_path: Path,
) -> None:
    # Doses that inhibit sixteen bacteria: 9 gram-negative in the hundreds, 7 gram-positive
    # far below 1; a mean carried by a few large values, and a group of seven.
    rng = np.random.default_rng(4)
    dose = list(np.exp(rng.normal(4.5, 2.0, 9))) + list(np.exp(rng.normal(-4.0, 2.0, 7)))
    path = _table(
        tmp_path / "burtin.sqlite",
        "antibiotics",
        {
            "bacteria": [f"b{i}" for i in range(16)],
            "penicillin": [float(v) for v in dose],
            "gram": ["negative"] * 9 + ["positive"] * 7,
        },
    )
    found = _insights(path, "group_difference")
    assert [(i.entities, i.direction) for i in found] in (
        [(["gram=negative"], "higher")],
        [(["gram=positive"], "lower")],
    )


def test_a_plurality_among_sixty_rows_is_a_share_and_an_even_split_is_not(
    tmp_path: Path,
) -> None:
    # 28 of 63 over four levels: p = 5e-5 against an even split, short of 1e-6.
    race = ["Black"] * 28 + ["Latino"] * 19 + ["White"] * 14 + ["Asian"] * 2
    path = _table(tmp_path / "deaths.sqlite", "deaths", {"race": race, "n": list(range(63))})
    found = _insights(path, "share")
    assert [i.entities for i in found] == [["race=Black"]]
    even = ["a"] * 17 + ["b"] * 16 + ["c"] * 15 + ["d"] * 15
    path = _table(tmp_path / "even.sqlite", "deaths", {"race": even, "n": list(range(63))})
    assert _insights(path, "share") == []


def test_both_ends_of_three_groups_are_told(tmp_path: Path) -> None:
    # Alcohol of three cultivars: one clearly highest, one clearly lowest; only the larger
    # of the two differences used to be told.
    rng = np.random.default_rng(0)
    means = {"class_0": 13.75, "class_1": 12.28, "class_2": 13.15}
    sizes = {"class_0": 59, "class_1": 71, "class_2": 48}
    cultivar = [c for c, n in sizes.items() for _ in range(n)]
    alcohol = [float(rng.normal(means[c], 0.5)) for c in cultivar]
    path = _table(tmp_path / "wine.sqlite", "wines", {"cultivar": cultivar, "alcohol": alcohol})
    found = {(tuple(i.entities), i.direction) for i in _insights(path, "group_difference")}
    assert found == {(("cultivar=class_0",), "higher"), (("cultivar=class_1",), "lower")}


def _panel(seed: int, rising: str | None) -> dict[str, list[object]]:
    """Five stocks' monthly prices in long form (symbol, date, price) over ten years; the
    stock ``rising`` grows about ninefold, the others vary about a level."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list[object]] = {"symbol": [], "date": [], "price": []}
    for symbol in ("AAA", "BBB", "CCC", "DDD", "EEE"):
        walk = rng.normal(50, 4.0, 120)
        if symbol == rising:
            walk = 25 * np.exp(np.linspace(0, 2.2, 120)) * np.exp(rng.normal(0, 0.08, 120))
        for i, v in enumerate(walk):
            rows["symbol"].append(symbol)
            rows["date"].append(date(2000 + i // 12, i % 12 + 1, 1).isoformat())
            rows["price"].append(round(float(v), 2))
    return rows


def test_the_trend_of_one_series_of_a_panel_is_told_with_its_level(tmp_path: Path) -> None:
    path = _table(tmp_path / "stocks.sqlite", "stocks", _panel(0, rising="CCC"))
    found = [i for i in _insights(path, "trend") if i.entities]
    assert [(i.entities, i.direction) for i in found] == [(["symbol=CCC"], "increase")]
    assert "where symbol = CCC" in found[0].statement
    # Its evidence query reads that stock's rows only.
    assert "\"symbol\" = 'CCC'" in found[0].evidence_sql


def test_no_trend_in_a_panel_of_flat_series(tmp_path: Path) -> None:
    # Flat series (noise about a level): no level's trend is told.
    rng = np.random.default_rng(7)
    rows: dict[str, list[object]] = {"symbol": [], "date": [], "price": []}
    for symbol in ("AAA", "BBB", "CCC"):
        for i, v in enumerate(rng.normal(50, 5, 120)):
            rows["symbol"].append(symbol)
            rows["date"].append(date(2000 + i // 12, i % 12 + 1, 1).isoformat())
            rows["price"].append(round(float(v), 2))
    path = _table(tmp_path / "flat.sqlite", "stocks", rows)
    assert [i for i in _insights(path, "trend") if i.entities] == []


def test_a_series_growing_faster_and_faster_is_a_trend(tmp_path: Path) -> None:
    # Exponential growth (about fiftyfold in ten years): a step at the knee may leave less
    # error than a line, but the series rises on both sides of it, so the step does not
    # explain the rise. (Read as a step, a third of these series were told nothing.)
    months = [date(2000 + i // 12, i % 12 + 1, 1).strftime("%Y-%m") for i in range(120)]
    for seed in range(6):
        rng = np.random.default_rng(seed)
        values = 20 * np.exp(np.linspace(0, 4.0, 120)) * np.exp(rng.normal(0, 0.2, 120))
        path = _table(
            tmp_path / f"growth{seed}.sqlite", "prices", {"month": months, "price": list(values)}
        )
        found = _insights(path, "trend")
        assert [(i.columns, i.direction) for i in found] == [(["price", "month"], "increase")]


def test_a_yes_no_outcome_among_thirty_units_is_correlated_with_a_measure(
    tmp_path: Path,
) -> None:
    # 32 students: whether the grade improved (0/1) rises with the grade point average.
    rng = np.random.default_rng(1)
    gpa = rng.normal(3.1, 0.45, 32)
    grade = (gpa + rng.normal(0, 0.3, 32) > 3.3).astype(int)
    path = _table(
        tmp_path / "spector.sqlite",
        "students",
        {"GPA": [round(float(v), 2) for v in gpa], "GRADE": [int(v) for v in grade]},
    )
    found = _insights(path, "correlation")
    assert [(sorted(i.columns), i.direction) for i in found] == [(["GPA", "GRADE"], "positive")]


def test_a_medium_difference_among_seventy_units_is_told(tmp_path: Path) -> None:
    # 69 transplant recipients: those who died were older, by about 0.77 standard deviations
    # (Welch p 0.004); the small-table floor asked for a large effect (0.8) and missed it.
    rng = np.random.default_rng(11)
    died = np.array([1] * 45 + [0] * 24)
    age = rng.normal(0, 1, 69)
    age = (age - age.mean()) / age.std() + 0.9 * died
    a, b = age[died == 1], age[died == 0]
    d = (a.mean() - b.mean()) / np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    assert 0.5 < d < 0.8
    path = _table(
        tmp_path / "heart.sqlite",
        "transplants",
        {"censors": [int(v) for v in died], "age": [round(45 + 9 * float(v), 1) for v in age]},
    )
    found = [i for i in _insights(path, "group_difference") if "age" in i.columns]
    assert [(i.entities, i.direction) for i in found] in (
        [(["censors=1"], "higher")],
        [(["censors=0"], "lower")],
    )


def _output(seed: int, years: int, strike: int | None) -> dict[str, list[object]]:
    """A growing annual output series (a trend against AR(1) noise), with one strike year
    far below its neighbours when ``strike`` is given."""
    rng = np.random.default_rng(seed)
    noise = np.zeros(years)
    for i in range(1, years):
        noise[i] = 0.5 * noise[i - 1] + rng.normal(0, 1)
    output = 100 + 2.0 * np.arange(years) + 3 * noise
    if strike is not None:
        output[strike] -= 30
    return {
        "year": list(range(1950, 1950 + years)),
        "output": [round(float(v), 1) for v in output],
    }


def test_a_strike_year_in_a_short_growing_series_is_told_against_its_neighbours(
    tmp_path: Path,
) -> None:
    # Thirty years: too few rows for the pooled robust z (50), and the trend spreads the
    # pooled values so that the strike year is not far from their median anyway.
    path = _table(tmp_path / "output.sqlite", "production", _output(4, 30, strike=14))
    found = _insights(path, "outlier")
    assert [(i.entities, i.direction) for i in found] == [(["year=1964"], "lower")]
    assert "neighbours" in found[0].statement


def test_a_growing_series_without_a_strike_and_a_seasonal_one_have_no_outlier(
    tmp_path: Path,
) -> None:
    path = _table(tmp_path / "calm.sqlite", "production", _output(4, 30, strike=None))
    assert _insights(path, "outlier") == []
    # Five years of months with a strong December: every December is the season, not an
    # outlier.
    rng = np.random.default_rng(2)
    months = [f"{1990 + i // 12}-{i % 12 + 1:02d}" for i in range(60)]
    sales = [200 + 0.5 * i + (60 if i % 12 == 11 else 0) + rng.normal(0, 4) for i in range(60)]
    path = _table(
        tmp_path / "retail.sqlite",
        "retail",
        {"month": months, "sales": [round(v, 1) for v in sales]},
    )
    assert _insights(path, "outlier") == []
