"""Changes in a series' course: a step that stays, a turn (a line broken at two periods: the
peak, slump and recovery of a recession) and a smooth curve, which is neither."""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from lemmata.agents.research import timeseries as ts
from lemmata.agents.research.explore import Explorer
from lemmata.agents.research.profile import survey
from lemmata.agents.research.timeseries import turn
from lemmata.agents.research.types import Insight
from lemmata.environments.database import Database


def _monthly(path: Path, values: np.ndarray, start: int = 2000) -> Path:
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE "jobs" ("month" TEXT PRIMARY KEY, "employed" REAL)')
    rows = [
        (date(start + i // 12, i % 12 + 1, 1).strftime("%Y-%m"), float(v))
        for i, v in enumerate(values)
    ]
    con.executemany('INSERT INTO "jobs" VALUES (?, ?)', rows)
    con.commit()
    con.close()
    return path


def _changes(path: Path) -> list[Insight]:
    db = Database(path)
    explorer = Explorer(db, survey(db))
    return [i for h in explorer.initial() if h.kind == "change" for i in explorer.test(h).insights]


def _recession(seed: int, n: int = 120) -> np.ndarray:
    """Jobs rising until month 27, falling steeply to month 46, then recovering more slowly
    than they fell (the shape of US payrolls in 2006-2015), with noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=float)
    course = 100 + 0.1 * t - 0.6 * np.clip(t - 27, 0, 19) + 0.3 * np.clip(t - 46, 0, None)
    return course + rng.normal(0, 0.3, n)


def test_a_smooth_u_shaped_curve_is_no_change(tmp_path: Path) -> None:
    # A slowdown and a pick-up without a break: a step cut into it ("fell ... and stayed
    # there") fits better than a line, but a quadratic fits better still.
    found = []
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        t = np.arange(96.0)
        for k, centre in enumerate((48, 30)):  # symmetric, and lopsided
            y = 20 + 0.004 * (t - centre) ** 2 + rng.normal(0, 1, 96)
            found += [i.statement for i in _changes(_monthly(tmp_path / f"u{seed}{k}.db", y))]
    assert found == []


def test_a_slump_and_a_slow_recovery_is_a_dated_turn(tmp_path: Path) -> None:
    for seed in range(3):
        path = _monthly(tmp_path / f"r{seed}.sqlite", _recession(seed), start=2006)
        (change,) = _changes(path)
        assert change.direction == "decrease" and "turned" in change.statement
        assert change.support["since"] in ("2008-03-01", "2008-04-01", "2008-05-01")
        assert change.support["until"] in ("2009-10-01", "2009-11-01", "2009-12-01")
        assert change.support["change"] == pytest.approx((0.1 - 0.6) * 19, rel=0.15)
        value = sqlite3.connect(path).execute(change.evidence_sql).fetchone()[0]
        assert value == pytest.approx(change.value)


def test_a_step_that_stays_is_still_a_step(tmp_path: Path) -> None:
    rng = np.random.default_rng(13)
    t = np.arange(120)
    path = _monthly(tmp_path / "step.sqlite", 50 + (t >= 60) * 6.0 + rng.normal(0, 1.5, 120))
    (change,) = _changes(path)
    assert change.direction == "increase" and "stayed there" in change.statement


def test_the_broken_line_finds_its_breaks_and_nothing_in_noise_or_a_curve() -> None:
    t = np.arange(120.0)
    found = turn(t, _recession(0))
    assert found is not None and (found.start, found.end) == pytest.approx((27, 46), abs=1)
    assert found.slope == pytest.approx(-0.5, abs=0.05)  # 0.1 - 0.6 a month
    assert found.sse < 0.1 * min(found.line_sse, found.curve_sse)
    rng = np.random.default_rng(4)
    curve = turn(t, 0.003 * (t - 60) ** 2 + rng.normal(0, 1, 120))
    assert curve is not None and curve.sse > 0.8 * curve.curve_sse
    noise = turn(t, rng.normal(0, 1, 120))
    assert noise is None or noise.p * noise.tried > 0.05
    assert turn(np.arange(8.0), np.arange(8.0)) is None  # too short to break twice


def _several(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[Insight]:
    from lemmata.agents.research.checks import temporal

    monkeypatch.setattr(temporal, "SEVERAL_CHANGES", True)
    return _changes(path)


def test_a_series_with_two_level_shifts_reports_both_dates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jobs at 100, up to 104 from January 2003, back down to 101 from January 2006.
    rng = np.random.default_rng(7)
    y = np.r_[np.full(36, 100.0), np.full(36, 104.0), np.full(36, 101.0)] + rng.normal(0, 1, 108)
    found = _several(monkeypatch, _monthly(tmp_path / "two.db", y))
    # Each dated to within a month, the rise first and then the fall, each with its levels.
    found.sort(key=lambda i: i.support["since"])
    months = [date.fromisoformat(i.support["since"]) for i in found]
    assert [(d.year * 12 + d.month) for d in months] == pytest.approx(
        [2003 * 12 + 1, 2006 * 12 + 1], abs=1
    )
    assert [i.direction for i in found] == ["increase", "decrease"]
    assert found[0].support["before_mean"] == pytest.approx(100, abs=0.5)
    assert found[0].support["after_mean"] == pytest.approx(104, abs=0.5)
    assert found[1].support["after_mean"] == pytest.approx(101, abs=0.5)
    assert all(i.support["since"] in i.statement for i in found)


def test_no_level_shift_in_autocorrelated_noise_or_a_smooth_curve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = []
    t = np.arange(108.0)
    for seed in range(4):
        rng = np.random.default_rng(200 + seed)
        noise = np.zeros(108)
        e = rng.normal(0, 1, 108)
        for j in range(1, 108):
            noise[j] = 0.6 * noise[j - 1] + e[j]
        curve = 20 + 0.004 * (t - 40) ** 2 + rng.normal(0, 1, 108)
        for name, y in (("ar", 50 + noise), ("curve", curve)):
            path = _monthly(tmp_path / f"{name}{seed}.db", y)
            found += [i.statement for i in _several(monkeypatch, path)]
    assert found == []


def test_with_autocorrelation_allowed_for_a_random_walk_is_no_trend_and_a_line_still_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The switch is off by default (it costs real-data changes, see its comment); on, the
    # Mann-Kendall p of a wandering series is taken on its effective sample size.
    rng = np.random.default_rng(5)
    t = np.arange(60.0)
    walks = [np.cumsum(rng.normal(size=60)) for _ in range(40)]
    line = 0.08 * t + rng.normal(size=60)
    naive = [ts.trend(t, w).p < 1e-3 for w in walks]
    monkeypatch.setattr(ts, "AUTOCORRELATED", True)
    robust = [ts.trend(t, w).p < 1e-3 for w in walks]
    assert sum(naive) >= 15 and sum(robust) <= 4
    assert ts.trend(t, line).p < 1e-6


def _walk(rng: np.random.Generator, n: int, drift: float = 0.0) -> np.ndarray:
    return 100 + np.cumsum(rng.normal(drift, 1.0, n))


def _ar(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    e = rng.normal(size=n)
    x = np.zeros(n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def test_a_random_walk_wanders_and_noise_a_trend_or_a_step_do_not() -> None:
    rng = np.random.default_rng(21)
    t = np.arange(80.0)
    walks = [ts.wanders(_walk(rng, 80)) for _ in range(20)]
    noise = [ts.wanders(_ar(rng, 80, 0.5)) for _ in range(20)]
    trends = [ts.wanders(0.1 * t + _ar(rng, 80, 0.5)) for _ in range(20)]
    steps = [ts.wanders(5.0 * (t >= 40) + _ar(rng, 80, 0.5)) for _ in range(20)]
    assert sum(walks) >= 17
    assert sum(noise) <= 2 and sum(trends) <= 2 and sum(steps) <= 3
    assert not ts.wanders(_walk(rng, 10))  # too short to tell


def _table(path: Path, columns: dict[str, np.ndarray], start: int = 1990) -> Path:
    con = sqlite3.connect(path)
    names = ", ".join(f'"{c}" REAL' for c in columns)
    con.execute(f'CREATE TABLE "macro" ("year" INTEGER PRIMARY KEY, {names})')
    n = len(next(iter(columns.values())))
    rows = [(start + i, *(float(v[i]) for v in columns.values())) for i in range(n)]
    con.executemany(f'INSERT INTO "macro" VALUES ({", ".join("?" * (len(columns) + 1))})', rows)
    con.commit()
    con.close()
    return path


def _insights(path: Path) -> list[Insight]:
    db = Database(path)
    explorer = Explorer(db, survey(db))
    return [i for h in explorer.initial() for i in explorer.test(h).insights]


def test_random_walks_have_no_trend_change_or_relation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two unrelated walks of 60 years in each of eight tables: each wanders far and long, so
    # a line, levels and each other's course all fit them. Judged as walks (the switch is off
    # by default: see its comment), they give at most what the database's 5% bars allow by
    # chance; judged as noise around a course, many.
    from lemmata.agents.research.checks import correlation, temporal

    def found(run: str) -> list[str]:
        out = []
        for seed in range(8):
            rng = np.random.default_rng(300 + seed)
            walks = {"output": _walk(rng, 60), "prices": _walk(rng, 60)}
            path = _table(tmp_path / f"{run}{seed}.db", walks)
            kinds = ("trend", "change", "correlation")
            out += [i.statement for i in _insights(path) if i.kind in kinds]
        return out

    monkeypatch.setattr(temporal, "RANDOM_WALKS", True)
    assert len(found("walks")) <= 2
    monkeypatch.setattr(temporal, "RANDOM_WALKS", False)
    monkeypatch.setattr(correlation, "WANDERING", 1.0)
    assert len(found("noise")) >= 10


def test_a_drifting_walk_is_a_trend_and_a_jump_in_a_walk_is_a_dated_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lemmata.agents.research.checks import temporal

    monkeypatch.setattr(temporal, "RANDOM_WALKS", True)
    rng = np.random.default_rng(8)
    drifting = _walk(rng, 60, drift=0.8)
    jumped = _walk(rng, 60) + 12.0 * (np.arange(60) >= 35)
    path = _table(tmp_path / "d.db", {"output": drifting, "prices": jumped})
    found = _insights(path)
    trends = [i for i in found if i.kind == "trend" and i.columns[0] == "output"]
    assert [i.direction for i in trends] == ["increase"]
    assert trends[0].support["wanders"] and trends[0].support["drift_p"] < 1e-4
    changes = [i for i in found if i.kind == "change" and i.columns[0] == "prices"]
    assert [(i.direction, i.support["since"]) for i in changes] == [("increase", "2025-01-01")]


def test_walks_with_shared_shocks_are_related_by_their_changes(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    shocks = rng.normal(size=(2, 60))
    a = 100 + np.cumsum(shocks[0])
    b = 50 + np.cumsum(0.7 * shocks[0] + 0.7 * shocks[1])
    path = _table(tmp_path / "c.db", {"output": a, "hours": b})
    (found,) = [i for i in _insights(path) if i.kind == "correlation"]
    assert found.direction == "positive" and found.support["on_changes"]
    # Its value is the correlation of the changes, which its evidence query computes.
    r = float(np.corrcoef(np.diff(a), np.diff(b))[0, 1])
    assert found.value == pytest.approx(r, abs=1e-6)
    value = sqlite3.connect(path).execute(found.evidence_sql).fetchone()[0]
    assert value == pytest.approx(r, abs=1e-6)
