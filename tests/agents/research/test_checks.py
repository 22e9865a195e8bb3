"""The explorer's registry of checks (lemmata.agents.research.checks): one check per kind, the
evidence-SQL-to-insight step, real zeros, and errors told apart from what the data holds."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from lemmata.agents.research import checks
from lemmata.agents.research.checks import CHECKS, CheckContext, DataProblem, Finding
from lemmata.agents.research.explore import Explorer
from lemmata.agents.research.profile import survey
from lemmata.agents.research.types import Hypothesis
from lemmata.environments.database import Database, quote_ident


def _sensors(path: Path) -> Path:
    """Readings where every reading of sensor kind 'off' is exactly 0.0."""
    rng = np.random.default_rng(3)
    rows = [(i, "off", 0.0) for i in range(40)]
    rows += [(40 + i, "on" if i % 2 else "idle", float(rng.normal(10, 1))) for i in range(80)]
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE "readings" ("id" INTEGER PRIMARY KEY, "kind" TEXT, "level" REAL)')
    con.executemany('INSERT INTO "readings" VALUES (?, ?, ?)', rows)
    con.commit()
    con.close()
    return path


@pytest.fixture
def explorer(tmp_path: Path) -> Explorer:
    db = Database(_sensors(tmp_path / "sensors.sqlite"))
    return Explorer(db, survey(db))


def test_every_kind_the_explorer_proposes_has_a_check(explorer: Explorer) -> None:
    kinds = {h.kind for h in explorer.initial()}
    assert kinds and kinds <= set(CHECKS)
    assert explorer.test(Hypothesis(kind="other", table="readings", columns=["level"])).observation


def test_a_zero_from_the_evidence_sql_is_a_value_and_a_null_is_none(explorer: Explorer) -> None:
    ctx: CheckContext = explorer.context

    def finding(sql: str) -> Finding:
        return Finding(
            kind="group_difference",
            table="readings",
            columns=["level", "kind"],
            evidence_sql=sql,
            statement=lambda v: f"mean level {v}",
            score=1.0,
            support={},
        )

    ins = ctx.confirm(finding('SELECT AVG("level") FROM "readings" WHERE "kind" = \'off\''))
    assert ins is not None and ins.value == 0.0 and ins.statement == "mean level 0.0"
    assert ctx.confirm(finding('SELECT AVG("level") FROM "readings" WHERE 0')) is None


def test_a_level_whose_mean_is_zero_is_reported_with_its_zero(explorer: Explorer) -> None:
    out = explorer.test(
        Hypothesis(kind="group_difference", table="readings", columns=["level", "kind"])
    )
    (ins,) = out.insights
    assert ins.entities == ["kind=off"] and ins.direction == "lower"
    assert ins.value == 0.0 and "mean 0 against" in ins.statement


def test_what_the_data_holds_is_an_observation(explorer: Explorer, tmp_path: Path) -> None:
    # An unknown column, a column of the wrong role, the wrong number of columns: a model's
    # proposal can name any of these.
    for columns, says in [
        (["pressure"], "no column 'pressure'"),
        (["kind"], "readings.kind is categorical, not numeric"),
        (["level", "kind", "id"], "takes 1 columns"),
    ]:
        out = explorer.test(Hypothesis(kind="distribution", table="readings", columns=columns))
        assert says in out.observation and not out.insights
    out = explorer.test(Hypothesis(kind="share", table="nowhere", columns=["kind"]))
    assert "no table 'nowhere'" in out.observation
    con = sqlite3.connect(tmp_path / "few.sqlite")
    con.execute("CREATE TABLE t (x REAL)")
    con.executemany("INSERT INTO t VALUES (?)", [(float(v),) for v in np.linspace(3, 9, 12) ** 2])
    con.commit()
    db = Database(tmp_path / "few.sqlite")
    few = Explorer(db, survey(db)).test(Hypothesis(kind="distribution", table="t", columns=["x"]))
    assert "too few values" in few.observation


def test_a_coding_error_in_a_check_is_raised_not_recorded(
    explorer: Explorer, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = Hypothesis(kind="distribution", table="readings", columns=["level"])

    def broken(ctx: CheckContext, hyp: Hypothesis) -> checks.Outcome:
        return ctx.table(hyp.table).num["levle"]  # a typo: KeyError

    def mistyped(ctx: CheckContext, hyp: Hypothesis) -> checks.Outcome:
        (a, b) = hyp.columns  # a check written for two columns: ValueError in our code
        return checks.Outcome()

    def data_limit(ctx: CheckContext, hyp: Hypothesis) -> checks.Outcome:
        raise DataProblem("readings.level: too few values")

    monkeypatch.setitem(CHECKS, "distribution", broken)
    with pytest.raises(KeyError):
        explorer.test(h)
    monkeypatch.setitem(CHECKS, "distribution", mistyped)
    with pytest.raises(ValueError):
        explorer.test(h)
    monkeypatch.setitem(CHECKS, "distribution", data_limit)
    assert "too few values" in explorer.test(h).observation


def _survey_rows(path: Path, n: int, seed: int, effect: float) -> Path:
    """People with a 1-5 rating, a 1-4 region code held in a lookup table, and a measure that
    falls weakly with the rating (``effect`` per step of it, against noise of 1)."""
    rng = np.random.default_rng(seed)
    rating = rng.integers(1, 6, n)
    region = rng.integers(1, 5, n)
    hours = 5 - effect * rating + rng.normal(0, 1, n)
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE "regions" ("region" INTEGER PRIMARY KEY, "name" TEXT)')
    con.executemany('INSERT INTO "regions" VALUES (?, ?)', [(i, f"r{i}") for i in range(1, 5)])
    con.execute(
        'CREATE TABLE "people" ("rating" INTEGER, "hours" REAL, '
        '"region" INTEGER REFERENCES "regions" ("region"))'
    )
    rows = [(int(a), float(b), int(c)) for a, b, c in zip(rating, hours, region, strict=True)]
    con.executemany('INSERT INTO "people" VALUES (?, ?, ?)', rows)
    con.commit()
    con.close()
    return path


def _correlations(path: Path) -> list[list[str]]:
    db = Database(path)
    ex = Explorer(db, survey(db))
    return [
        sorted(i.columns)
        for h in ex.initial()
        if h.kind == "correlation"
        for i in ex.test(h).insights
    ]


def test_a_rating_is_a_scale_for_correlations_and_weak_ones_count_in_large_samples(
    tmp_path: Path,
) -> None:
    # r is about -0.1 over 6000 rows: weak, and far beyond chance.
    path = _survey_rows(tmp_path / "people.sqlite", 6000, seed=1, effect=0.07)
    assert survey(Database(path)).tables["people"].columns["rating"].role == "categorical"
    assert _correlations(path) == [["hours", "rating"]]


def test_no_correlation_with_a_scale_in_noise(tmp_path: Path) -> None:
    for seed in range(3):
        assert _correlations(_survey_rows(tmp_path / f"{seed}.sqlite", 6000, seed, 0.0)) == []


def test_what_counts_as_a_scale() -> None:
    from lemmata.agents.research.checks.base import is_scale

    assert is_scale([1, 2, 3, 4, 5, None, 3])
    assert not is_scale([1, 2])  # two levels: a binary label
    assert not is_scale([1, 2, 4, 7])  # gaps: codes, not a scale
    assert not is_scale(["1", "2", "3"]) and not is_scale([0.5, 1.5, 2.5])


def _columns(path: Path, table: str, data: Mapping[str, Sequence[object]]) -> Path:
    names = list(data)
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE {quote_ident(table)} ({', '.join(map(quote_ident, names))})")
    con.executemany(
        f'INSERT INTO "{table}" VALUES ({", ".join("?" for _ in names)})',
        list(zip(*data.values(), strict=True)),
    )
    con.commit()
    con.close()
    return path


def test_a_skewed_column_is_correlated_by_rank_and_the_sql_gives_spearmans_rho(
    tmp_path: Path,
) -> None:
    from scipy import stats

    # Time in affairs: most rows 0, a long tail; it rises with years married, while a few
    # very large values among the shortest marriages pull Pearson's r the other way.
    rng = np.random.default_rng(5)
    years = rng.choice([0.5, 2.5, 6.0, 9.0, 13.0, 16.5, 23.0], 3000)
    any_time = rng.random(3000) < 0.15 + 0.015 * years
    hours = np.where(any_time, rng.exponential(1.0, 3000), 0.0)
    hours[np.argsort(years)[:15]] = 60.0
    path = _columns(
        tmp_path / "marriages.sqlite",
        "marriages",
        {"years": [float(v) for v in years], "hours": [float(v) for v in hours]},
    )
    db = Database(path)
    ex = Explorer(db, survey(db))
    (h,) = [h for h in ex.initial() if h.kind == "correlation"]
    (ins,) = ex.test(h).insights
    rho = stats.spearmanr(years, hours)[0]
    assert stats.pearsonr(years, hours)[0] < 0 < rho
    assert ins.direction == "positive" and ins.support["test"] == "Spearman"
    assert ins.value == pytest.approx(rho) and "Spearman rho" in ins.statement


def test_a_moderate_correlation_in_a_few_hundred_rows_is_held_to_the_databases_bar(
    tmp_path: Path,
) -> None:
    from scipy import stats

    # r near -0.24 over 340 rows of four measures: p ~ 1e-5 misses a fixed bar of 1e-6 but
    # clears Bonferroni at 0.1% over the database's six correlation hypotheses.
    rng = np.random.default_rng(11)
    length = rng.normal(44, 5, 340)
    depth = 17 - 0.11 * (length - 44) + rng.normal(0, 1.9, 340)
    data = {
        "length": length,
        "depth": depth,
        "flipper": rng.normal(200, 14, 340),
        "mass": rng.normal(4200, 800, 340),
    }
    path = _columns(
        tmp_path / "birds.sqlite", "birds", {k: list(map(float, v)) for k, v in data.items()}
    )
    r, p = stats.pearsonr(length, depth)
    assert -0.3 < r < -0.2 and 1e-6 < p < 0.001 / 6
    assert _correlations(path) == [["depth", "length"]]


def test_no_correlation_among_a_few_dozen_rows_of_noise(tmp_path: Path) -> None:
    found = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        data = {
            f"m{i}": [float(v) for v in rng.lognormal(0, 1 if i % 2 else 0.1, 60)] for i in range(6)
        }
        found += _correlations(_columns(tmp_path / f"noise{seed}.sqlite", "t", data))
    assert found == []


def _field_trial(path: Path, year_effect: float, seed: int = 2) -> Path:
    """Yields of 10 varieties at 6 sites in two years: the sites differ by far more than the
    years, and each year's effect is the same at every site."""
    rng = np.random.default_rng(seed)
    site_mean = dict(zip("ABCDEF", [22.0, 30.0, 34.0, 38.0, 44.0, 52.0], strict=True))
    rows: dict[str, list[object]] = {"yield": [], "variety": [], "year": [], "site": []}
    for site, base in site_mean.items():
        for variety in range(10):
            for year in (1931, 1932):
                effect = year_effect if year == 1931 else 0.0
                rows["yield"].append(float(base + effect + rng.normal(0, 3)))
                rows["variety"].append(f"v{variety}")
                rows["year"].append(year)
                rows["site"].append(site)
    return _columns(path, "trial", rows)


def test_a_difference_between_two_seasons_is_seen_within_sites(tmp_path: Path) -> None:
    path = _field_trial(tmp_path / "trial.sqlite", year_effect=4.0)
    db = Database(path)
    ex = Explorer(db, survey(db))
    h = next(h for h in ex.initial() if h.kind == "group_difference" and h.columns[1] == "year")
    (ins,) = ex.test(h).insights
    assert ins.entities == ["year=1931"] and ins.direction == "higher"
    assert ins.support["blocks"] == ["site"] and "within each site" in ins.statement
    # Told alone, the years differ by less than the sites' spread: no difference.
    from lemmata.agents.research.checks.stats import best_level

    t = ex.context.table("trial")
    assert best_level(t.num["yield"], t.raw["year"])[4] > 1e-3  # type: ignore[index]


def test_no_season_difference_within_sites_when_there_is_none(tmp_path: Path) -> None:
    for seed in range(3):
        path = _field_trial(tmp_path / f"trial{seed}.sqlite", year_effect=0.0, seed=seed)
        db = Database(path)
        ex = Explorer(db, survey(db))
        found = [
            i.entities
            for h in ex.initial()
            if h.kind == "group_difference"
            for i in ex.test(h).insights
        ]
        assert [e for e in found if e[0].startswith("year")] == []


def _small_table(path: Path, n: int, seed: int, r: float, d: float) -> Path:
    """``n`` units (states, strikes): two measures correlated at about ``r``, a third
    measure whose 'south' units are higher by ``d`` standard deviations, and noise."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1, n)
    b = r * a + np.sqrt(1 - r * r) * rng.normal(0, 1, n)
    region = np.array(
        ["south" if i % 3 == 0 else "north" if i % 3 == 1 else "west" for i in range(n)]
    )
    c = rng.normal(0, 1, n) + d * (region == "south")
    data: dict[str, Sequence[object]] = {
        "unit": [f"u{i}" for i in range(n)],
        "region": list(region),
        "a": [float(v) for v in 10 + a],
        "b": [float(v) for v in 50 + 5 * b],
        "c": [float(v) for v in 100 + 10 * c],
        "noise": [float(v) for v in rng.normal(0, 1, n)],
    }
    return _columns(path, "units", data)


def _found(path: Path, kind: str) -> list[tuple[list[str], list[str]]]:
    db = Database(path)
    ex = Explorer(db, survey(db))
    return [
        (sorted(i.columns), i.entities)
        for h in ex.initial()
        if h.kind == kind
        for i in ex.test(h).insights
    ]


def test_a_moderate_correlation_among_sixty_units_is_told(tmp_path: Path) -> None:
    from scipy import stats

    # r about -0.45 over 60 rows: p ~ 1e-4, short of 1e-6 and of 0.1% over the database's
    # hypotheses, but clear of 5% over them in a table of sixty units.
    path = _small_table(tmp_path / "units.sqlite", 60, seed=4, r=-0.45, d=0.0)
    data = sqlite3.connect(path).execute('SELECT "a", "b" FROM "units"').fetchall()
    r, p = stats.pearsonr(*zip(*data, strict=True))
    assert -0.6 < r < -0.3 and 1e-6 < p < 0.05 / 6
    assert _found(path, "correlation") == [(["a", "b"], [])]


def test_a_large_difference_among_fifty_units_is_told(tmp_path: Path) -> None:
    from lemmata.agents.research.checks.stats import best_level

    missed_by_the_plain_bar = 0
    for seed in range(5):
        # 17 'south' units of 51, 1.5 standard deviations higher: a Welch test at 1e-6
        # sees it in some samples only.
        path = _small_table(tmp_path / f"units{seed}.sqlite", 51, seed=seed, r=0.0, d=1.5)
        db = Database(path)
        t = Explorer(db, survey(db)).context.table("units")
        plain = best_level(t.num["c"], t.raw["region"])
        missed_by_the_plain_bar += plain is None or plain[4] > 1e-6
        assert _found(path, "group_difference") == [(["c", "region"], ["region=south"])]
    assert missed_by_the_plain_bar >= 2


def test_few_findings_among_a_few_dozen_units_of_noise(tmp_path: Path) -> None:
    # The small-table bars spend 5% a kind over the database's hypotheses: of 40 tables of
    # noise, at most the budget of 0.1 false findings a database.
    found = []
    for seed in range(40):
        path = _small_table(tmp_path / f"n{seed}.sqlite", 50, seed=seed, r=0.0, d=0.0)
        found += _found(path, "correlation") + _found(path, "group_difference")
    assert len(found) <= 4


def test_in_a_small_table_of_related_columns_a_moderate_correlation_is_ranked_not_cut(
    tmp_path: Path,
) -> None:
    from scipy import stats

    from lemmata.agents.research.checks.stats import holm_passes

    # Fifty-one units whose five measures follow one factor closely, and a sixth that
    # follows it moderately: its weakest pair (r ~ 0.4, p ~ 0.004) misses Bonferroni at 5%
    # over the 15 pairs, but the 14 stronger pairs ahead of it make Holm's bar 5%.
    rng = np.random.default_rng(17)
    z = rng.normal(0, 1, 51)
    data = {f"c{i}": z + rng.normal(0, 0.6, 51) for i in range(5)}
    data["u"] = 0.45 * z + rng.normal(0, 1, 51)
    pairs = {
        (a, b): stats.pearsonr(data[a], data[b])
        for i, a in enumerate(data)
        for b in list(data)[i + 1 :]
    }
    weakest = max(pairs, key=lambda k: pairs[k][1])
    r, p = pairs[weakest]
    assert "u" in weakest and r >= 0.3 and 0.05 / 15 < p < 0.05
    assert holm_passes(p, [q for k, (_, q) in pairs.items() if k != weakest], 15, 0.05)
    path = _columns(
        tmp_path / "units.sqlite", "units", {k: list(map(float, v)) for k, v in data.items()}
    )
    found = _correlations(path)
    assert sorted(weakest) in found and len(found) == 15


def test_the_step_down_bar_adds_nothing_among_units_of_noise(tmp_path: Path) -> None:
    # Holm spends what Bonferroni spends when nothing is related: 40 noise tables of 50
    # units and eight measures (28 pairs each) give at most the 0.1 a database.
    found = []
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        data = {f"m{i}": [float(v) for v in rng.normal(0, 1, 50)] for i in range(8)}
        found += _correlations(_columns(tmp_path / f"n{seed}.sqlite", "t", data))
    assert len(found) <= 4


def test_a_yes_no_column_with_filled_in_fractions_is_compared_as_yes_against_no(
    tmp_path: Path,
) -> None:
    # A physical limitation recorded 0/1, its missing answers filled in with group shares
    # (0.14, 0.03): a grouping, not a measure; visits are compared for 1 against 0.
    rng = np.random.default_rng(3)
    n = 3000
    limited = (rng.random(n) < 0.15).astype(float)
    filled = rng.random(n) < 0.06
    limited[filled] = rng.choice([0.1442925, 0.0327869, 0.0221239], int(filled.sum()))
    visits = rng.poisson(2.5 + 2.0 * (limited == 1.0)).astype(float)
    path = _columns(
        tmp_path / "visits.sqlite",
        "visits",
        {"visits": list(visits), "limited": list(limited), "age": list(rng.normal(40, 9, n))},
    )
    db = Database(path)
    s = survey(db)
    column = s.tables["visits"].columns["limited"]
    assert column.role == "categorical" and "0/1 indicator" in column.evidence
    assert _found(path, "group_difference") == [(["limited", "visits"], ["limited=1.0"])]
    # A measure that merely lies between 0 and 1 stays a measure.
    share = _columns(tmp_path / "share.sqlite", "t", {"x": list(rng.random(200))})
    assert survey(Database(share)).tables["t"].columns["x"].role == "numeric"


@pytest.mark.parametrize(("benign", "rows", "told"), [(357, 569, True), (1740, 3000, False)])
def test_a_two_level_columns_clear_majority_is_a_share(
    tmp_path: Path, benign: int, rows: int, told: bool
) -> None:
    from lemmata.agents.research.checks.share import least_share

    # 357 benign tumours of 569 (63%) is a clear majority of two levels (Cohen's w 0.25);
    # 1740 of 3000 (58%, w 0.16) is as far from chance (p ~ 1e-18) but no more than a tilt.
    rng = np.random.default_rng(0)
    diagnosis = ["benign"] * benign + ["malignant"] * (rows - benign)
    path = _columns(
        tmp_path / "t.sqlite",
        "tumours",
        {"diagnosis": diagnosis, "radius": [float(v) for v in rng.normal(14, 3, rows)]},
    )
    found = _found(path, "share")
    assert found == ([(["diagnosis"], ["diagnosis=benign"])] if told else [])
    # Three levels keep the bar they had (1.3 / 3 = 43%), two ask 60% rather than 65%.
    assert least_share(3) == pytest.approx(1.3 / 3, abs=0.01) and least_share(2) == 0.6


def _cross_section(path: Path, n: int, seed: int, r: float, d: float, measures: int = 10) -> Path:
    """``n`` independent units (people) with ``measures`` measures and three 0/1 flags: the
    first two measures correlated at about ``r``, the third higher by ``d`` standard
    deviations where ``f0`` = 1; the rest noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (n, measures))
    x[:, 1] = r * x[:, 0] + np.sqrt(1 - r * r) * x[:, 1]
    flags = (rng.random((n, 3)) < 0.4).astype(int)
    x[:, 2] += d * flags[:, 0]
    data: dict[str, Sequence[object]] = {
        f"m{i}": [float(v) for v in 50 + 10 * x[:, i]] for i in range(measures)
    }
    data |= {f"f{i}": [int(v) for v in flags[:, i]] for i in range(3)}
    return _columns(path, "people", data)


def test_a_table_of_units_is_told_from_events_series_and_children(tmp_path: Path) -> None:
    people = _cross_section(tmp_path / "people.sqlite", 300, seed=0, r=0.0, d=0.0)
    db = Database(people)
    assert CheckContext(db, survey(db)).units("people")
    # Dated rows are events; rows that refer to a parent are not independent of each other.
    path = _survey_rows(tmp_path / "linked.sqlite", 300, seed=1, effect=0.0)
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE "visits" ("day" TEXT, "cost" REAL)')
    days = [f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(300)]
    con.executemany(
        'INSERT INTO "visits" VALUES (?, ?)', [(d, float(i)) for i, d in enumerate(days)]
    )
    con.execute('CREATE TABLE "owners" ("owner_id" INTEGER PRIMARY KEY, "age" REAL)')
    con.executemany('INSERT INTO "owners" VALUES (?, ?)', [(i, 30.0 + i % 7) for i in range(60)])
    con.execute(
        'CREATE TABLE "pets" ("owner_id" INTEGER REFERENCES "owners" ("owner_id"), "w" REAL)'
    )
    con.executemany('INSERT INTO "pets" VALUES (?, ?)', [(i % 60, float(i)) for i in range(300)])
    con.commit()
    con.close()
    db = Database(path)
    ctx = CheckContext(db, survey(db))
    assert not ctx.units("visits") and not ctx.units("pets") and ctx.units("owners")
    # A region code labelled by a lookup table is no parent: the people are units still.
    assert ctx.units("people")


def test_a_weak_correlation_and_a_small_difference_among_hundreds_of_units_are_told(
    tmp_path: Path,
) -> None:
    from scipy import stats

    # r about 0.2 among 450 people (p ~ 1e-5) and a difference of 0.45 standard deviations
    # (p ~ 1e-5): both short of the fixed bar of 1e-6, both clear of the family-wise bar over
    # the database's hypotheses, as a study of 450 people reports them.
    path = _cross_section(tmp_path / "people.sqlite", 450, seed=3, r=0.2, d=0.45)
    rows = sqlite3.connect(path).execute('SELECT "m0", "m1" FROM "people"').fetchall()
    r, p = stats.pearsonr(*zip(*rows, strict=True))
    assert 0.15 < r < 0.3 and 1e-6 < p < 1e-3
    assert _found(path, "correlation") == [(["m0", "m1"], [])]
    assert (["f0", "m2"], ["f0=1"]) in _found(path, "group_difference")


def test_few_findings_among_tables_of_units_of_noise(tmp_path: Path) -> None:
    # The bound: at most 0.1 false findings a table of noise (each kind's bar spends
    # 2.5% of a table's chance of one).
    found = []
    for seed in range(40):
        path = _cross_section(tmp_path / f"noise{seed}.sqlite", 400, seed=100 + seed, r=0, d=0)
        found += _found(path, "correlation") + _found(path, "group_difference")
    assert len(found) <= 4


def test_a_wide_tables_one_related_pair_is_found_on_a_short_budget(tmp_path: Path) -> None:
    from lemmata.agents.research.run import research

    # Forty measures offer 780 pairs and 160 other hypotheses; twelve turns test 96 of them.
    # The related pair is the last two columns: a screen puts it first.
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, (300, 40))
    x[:, 39] = 0.5 * x[:, 38] + np.sqrt(0.75) * x[:, 39]
    data = {f"m{i}": [float(v) for v in 10 + x[:, i]] for i in range(40)}
    path = _columns(tmp_path / "wide.sqlite", "wide", data)
    report = research(path, tmp_path / "out", budget_turns=12, figures=False)
    pairs = [sorted(i.columns) for i in report.insights if i.kind == "correlation"]
    assert pairs == [["m38", "m39"]]


def test_integer_codes_of_a_few_values_are_compared_as_groups(tmp_path: Path) -> None:
    # Six regions numbered 0-5 (a measure by its values): one region lives longer.
    rng = np.random.default_rng(7)
    region = rng.integers(0, 6, 600)
    life = rng.normal(70, 5, 600) + 6 * (region == 4)
    path = _columns(
        tmp_path / "regions.sqlite",
        "countries",
        {"region": [int(v) for v in region], "life": [float(v) for v in life]},
    )
    assert survey(Database(path)).tables["countries"].columns["region"].role == "numeric"
    assert (["life", "region"], ["region=4"]) in _found(path, "group_difference")
    # A count with a tail of rare values is not taken for codes.
    counts = [int(v) for v in rng.poisson(2, 600)]
    path = _columns(tmp_path / "counts.sqlite", "t", {"kids": counts, "life": list(life)})
    assert _found(path, "group_difference") == []


def test_in_a_small_study_the_highest_and_the_lowest_of_five_breeds_are_told(
    tmp_path: Path,
) -> None:
    # Five breeds of twenty cows: one's milk far richer, one's far leaner than the rest.
    rng = np.random.default_rng(2)
    breeds = ["ayrshire", "canadian", "guernsey", "holstein", "jersey"]
    shift = {"holstein": -1.0, "jersey": 1.0}
    breed = [b for b in breeds for _ in range(20)]
    fat = [float(4.2 + shift.get(b, 0.0) + rng.normal(0, 0.35)) for b in breed]
    path = _columns(tmp_path / "cows.sqlite", "cows", {"breed": breed, "butterfat": fat})
    found = _found(path, "group_difference")
    assert sorted(e for _, [e] in found) == ["breed=holstein", "breed=jersey"]


def _pair_at_p(rng: np.random.Generator, n: int, target_p: float) -> tuple[list, list]:
    """Two measures of ``n`` rows whose Pearson correlation has p-value ``target_p`` exactly."""
    from scipy import stats

    t = stats.t.isf(target_p / 2, n - 2)
    r = t / np.sqrt(n - 2 + t * t)
    a = rng.normal(size=n)
    a = (a - a.mean()) / a.std()
    e = rng.normal(size=n)
    e -= e.mean() + (e @ a) / n * a  # no correlation with a at all
    e /= e.std()
    return list(a), list(r * a + np.sqrt(1 - r * r) * e)


def _survey_table(path: Path, seed: int, target_p: float) -> Path:
    """A cross section of 400 people: ten pairs of measures strongly related, two measures
    whose Pearson correlation has p-value ``target_p`` exactly, ten unrelated ones, and a
    wage with its logarithm beside it."""
    rng = np.random.default_rng(seed)
    n = 400
    data: dict[str, list[float]] = {}
    for j in range(10):
        x = rng.normal(size=n)
        data[f"x{j}"] = list(x)
        data[f"y{j}"] = list(0.6 * x + 0.8 * rng.normal(size=n))
    data["target_a"], data["target_b"] = _pair_at_p(rng, n, target_p)
    for j in range(10):
        data[f"noise{j}"] = list(rng.normal(size=n))
    wage = np.exp(2.5 + 0.5 * rng.normal(size=n))
    data["wage"] = list(wage)
    data["lwage"] = list(np.log(wage))
    return _columns(path, "people", data)


def test_a_moderate_correlation_in_a_related_wide_table_clears_the_step_up_bar(
    tmp_path: Path,
) -> None:
    from scipy import stats

    from lemmata.agents.research.checks.stats import holm_passes, step_up_bar

    path = _survey_table(tmp_path / "people.sqlite", seed=2, target_p=1.5e-4)
    db = Database(path)
    ex = Explorer(db, survey(db))
    ex.initial()
    m = ex.context.family["correlation"]
    con = sqlite3.connect(path)
    a, b = np.array(con.execute('SELECT "target_a", "target_b" FROM "people"').fetchall()).T
    p = float(stats.pearsonr(a, b)[1])
    # Where the test stands: past Holm's step-down bar over the table's 528 questions (ten
    # strong pairs rejected first), inside the step-up bar those ten discoveries open.
    strong = [1e-12] * 10
    assert not holm_passes(p, strong, m, 0.025)
    assert p <= step_up_bar([*strong, p], m, 0.025)
    out = ex.test(Hypothesis(kind="correlation", table="people", columns=["target_a", "target_b"]))
    assert [i.direction for i in out.insights] == ["positive"], out.observation
    # An unrelated pair of the same table is not told.
    none = ex.test(Hypothesis(kind="correlation", table="people", columns=["noise0", "noise1"]))
    assert none.insights == []


def test_a_wage_and_its_logarithm_are_one_variable_to_the_explorer(tmp_path: Path) -> None:
    path = _survey_table(tmp_path / "people.sqlite", seed=2, target_p=1.5e-4)
    db = Database(path)
    ex = Explorer(db, survey(db))
    hyps = ex.initial()
    pairs = {frozenset(h.columns) for h in hyps if h.kind == "correlation"}
    # Their agreement is no finding, and their correlations with another column count once.
    assert frozenset(["wage", "lwage"]) not in pairs
    assert {frozenset(["wage", "x0"]), frozenset(["lwage", "x0"])} <= pairs
    measures = 20 + 2 + 10 + 2
    assert ex.context.family["correlation"] == (measures - 1) * (measures - 2) // 2


def test_twins_and_the_step_up_bar() -> None:
    from lemmata.agents.research.checks.stats import comparisons, step_up_bar, twins

    rng = np.random.default_rng(1)
    x = rng.exponential(size=50) + 0.1
    noisy = x + rng.normal(scale=0.5, size=50)
    gaps = x.copy()
    gaps[3] = np.nan
    got = twins({"x": x, "xsq": x * x, "lx": np.log(x), "noisy": noisy, "gaps": gaps})
    assert got == {"x": "x", "xsq": "x", "lx": "x", "noisy": "noisy", "gaps": "gaps"}
    # With nothing to discover it is Bonferroni's bar; each discovery loosens the next one's.
    assert step_up_bar([0.3, 0.6], m=100, rate=0.05) == pytest.approx(0.0005)
    assert step_up_bar([1e-9] * 9 + [0.004], m=100, rate=0.05) == pytest.approx(0.004)
    assert step_up_bar([1e-9] * 9 + [0.006], m=100, rate=0.05) == pytest.approx(0.0005)
    # A column of two levels makes one comparison, not two; of three, three.
    assert comparisons(["a", "b", "a", None]) == 1
    assert comparisons(["a", "b", "c"]) == 3


def _small_related_table(path: Path, seed: int, target_p: float, n: int = 80) -> Path:
    """``n`` units (fewer than a small table's 200 rows): five pairs of measures strongly
    related, two measures whose Pearson correlation has p-value ``target_p`` exactly, and
    four unrelated ones."""
    rng = np.random.default_rng(seed)
    data: dict[str, list[float]] = {}
    for j in range(5):
        x = rng.normal(size=n)
        data[f"x{j}"] = list(x)
        data[f"y{j}"] = list(0.6 * x + 0.8 * rng.normal(size=n))
    data["target_a"], data["target_b"] = _pair_at_p(rng, n, target_p)
    for j in range(4):
        data[f"noise{j}"] = list(rng.normal(size=n))
    return _columns(path, "units", data)


def _target(path: Path) -> tuple[list[str], int, str]:
    db = Database(path)
    ex = Explorer(db, survey(db))
    ex.initial()
    out = ex.test(Hypothesis(kind="correlation", table="units", columns=["target_a", "target_b"]))
    return (
        [str(i.direction) for i in out.insights],
        ex.context.family["correlation"],
        out.observation,
    )


@pytest.mark.parametrize("step_up", [True, False])
def test_in_a_small_related_table_a_moderate_correlation_clears_the_step_up_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step_up: bool
) -> None:
    from scipy import stats

    from lemmata.agents.research.checks.stats import holm_passes, step_up_bar

    monkeypatch.setattr(checks.base, "SMALL_STEP_UP", step_up)
    path = _small_related_table(tmp_path / "units.sqlite", seed=3, target_p=1e-3)
    con = sqlite3.connect(path)
    a, b = np.array(con.execute('SELECT "target_a", "target_b" FROM "units"').fetchall()).T
    r, p = (float(v) for v in stats.pearsonr(a, b))
    found, m, said = _target(path)
    # Where the test stands: r over the small table's floor, past Holm's step-down bar at 5%
    # over the database's questions (five strong pairs rejected first), inside the step-up
    # bar those five discoveries open.
    strong = [1e-9] * 5
    assert r >= 0.3 and not holm_passes(p, strong, m, 0.05)
    assert p <= step_up_bar([*strong, p], m, 0.05)
    assert found == (["positive"] if step_up else []), said


def test_the_step_up_bar_keeps_a_small_tables_effect_floor(tmp_path: Path) -> None:
    from scipy import stats

    from lemmata.agents.research.checks.stats import step_up_bar

    # 190 units: p = 1e-3 is r ~ 0.24, under the floor of 0.3, though inside the step-up bar.
    path = _small_related_table(tmp_path / "units.sqlite", seed=3, target_p=1e-3, n=190)
    con = sqlite3.connect(path)
    a, b = np.array(con.execute('SELECT "target_a", "target_b" FROM "units"').fetchall()).T
    r, p = (float(v) for v in stats.pearsonr(a, b))
    found, m, said = _target(path)
    assert r < 0.3 and p <= step_up_bar([1e-9] * 5 + [p], m, 0.05)
    assert found == [], said


def _answers(path: Path, n: int, seed: int, gap: float) -> Path:
    """A survey of ``n`` respondents in four regions, answering yes/no/unsure to three
    questions; ``q1``'s share of yes is ``gap`` higher in region 'north'."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east", "west"], size=n)
    data: dict[str, list[object]] = {"region": list(region)}
    for q in range(1, 4):
        p_yes = 0.35 + (gap if q == 1 else 0.0) * (region == "north")
        u = rng.random(n)
        data[f"q{q}"] = [
            "yes" if a < p else "unsure" if a < p + 0.15 else "no"
            for a, p in zip(u, p_yes, strict=True)
        ]
    data["age"] = [float(v) for v in rng.normal(45, 12, n)]
    return _columns(path, "respondents", data)


@pytest.mark.parametrize("n", [400, 2000])
def test_a_share_that_differs_by_region_is_told_with_its_region(tmp_path: Path, n: int) -> None:
    path = _answers(tmp_path / "s.sqlite", n, seed=1, gap=0.25 if n < 1000 else 0.16)
    found = [f for f in _found(path, "share") if len(f[0]) == 2]
    assert found == [(["q1", "region"], ["q1=yes", "region=north"])]
    db = Database(path)
    ex = Explorer(db, survey(db))
    (ins,) = [
        i
        for h in ex.initial()
        if h.kind == "share" and len(h.columns) == 2
        for i in ex.test(h).insights
    ]
    # The value is the share of yes among the north's respondents, as its SQL computes it.
    rows = (
        sqlite3.connect(path)
        .execute("SELECT q1 FROM respondents WHERE region = 'north'")
        .fetchall()
    )
    assert ins.value == pytest.approx(sum(r[0] == "yes" for r in rows) / len(rows))
    assert ins.direction == "higher" and "north" in ins.statement


def test_no_share_by_group_among_answers_of_noise(tmp_path: Path) -> None:
    told = 0
    for seed in range(10):
        path = _answers(tmp_path / f"n{seed}.sqlite", 300, seed=seed, gap=0.0)
        told += len([f for f in _found(path, "share") if len(f[0]) == 2])
    assert told <= 1


def test_a_share_by_group_is_matched_from_the_other_level_of_either_column() -> None:
    from lemmata.agents.research.score import matches
    from lemmata.agents.research.types import ChecklistItem, Insight

    # "no is more common among the untreated" says "yes is more common among the treated".
    told = Insight(
        statement="x",
        kind="share",
        table="t",
        columns=["improved", "arm"],
        entities=["improved=no", "arm=control"],
        direction="higher",
        value=0.6,
        evidence_sql="SELECT 0.6",
        support={"other_level": "arm=treated", "other_answer": "improved=yes", "rest_share": 0.4},
    )
    item = ChecklistItem(
        id="a",
        kind="share",
        table="t",
        columns=["improved", "arm"],
        entities=["improved=yes", "arm=treated"],
        direction="higher",
    )
    assert matches(told, item)
    assert not matches(told, item.model_copy(update={"direction": "lower"}))
    lower = item.model_copy(
        update={"entities": ["improved=yes", "arm=control"], "direction": "lower"}
    )
    assert matches(told, lower)


def _households(path: Path, seed: int, effect: float, households: int = 300) -> Path:
    """Respondents (one to three per household) whose hours are ``effect`` standard
    deviations apart in urban households, which a parent table records."""
    rng = np.random.default_rng(seed)
    urban = (rng.random(households) < 0.5).astype(int)
    con = sqlite3.connect(path)
    con.execute(
        'CREATE TABLE "households" ("household_id" INTEGER PRIMARY KEY, "urban" INTEGER, "size" INTEGER)'
    )
    con.executemany(
        'INSERT INTO "households" VALUES (?, ?, ?)',
        [(i + 1, int(urban[i]), int(rng.integers(1, 7))) for i in range(households)],
    )
    con.execute(
        'CREATE TABLE "respondents" ("respondent_id" INTEGER PRIMARY KEY, '
        '"household_id" INTEGER REFERENCES "households"("household_id"), "hours" REAL, "age" REAL)'
    )
    rows, rid = [], 1
    for h in range(households):
        for _ in range(int(rng.integers(1, 4))):
            rows.append(
                (
                    rid,
                    h + 1,
                    float(38 + 8 * (rng.normal() + effect * urban[h])),
                    float(rng.normal(45, 12)),
                )
            )
            rid += 1
    con.executemany('INSERT INTO "respondents" VALUES (?, ?, ?, ?)', rows)
    con.commit()
    con.close()
    return path


def test_a_difference_across_a_key_is_tested_among_the_parents(tmp_path: Path) -> None:
    # Half a standard deviation among 200 households' respondents falls short of the child
    # rows' fixed bar (p < 1e-6); the households compared as units clear theirs.
    path = _households(tmp_path / "h.sqlite", seed=4, effect=0.5, households=200)
    found = _found(path, "relationship")
    assert (["hours", "urban"], ["urban=1"]) in found or (["hours", "urban"], ["urban=0"]) in found
    told = 0
    for seed in range(6):
        path = _households(tmp_path / f"n{seed}.sqlite", seed=seed, effect=0.0)
        told += len(_found(path, "relationship"))
    assert told <= 1


def test_a_yes_no_outcome_that_differs_by_arm_is_told_as_its_share_and_as_a_difference(
    tmp_path: Path,
) -> None:
    # 300 patients in two arms, 0/1 deaths: 30% under control, 15% under treatment (a trial's
    # documented fact is often "fewer deaths under treatment": the 0/1 column's mean by arm).
    rng = np.random.default_rng(5)
    arm = [int(v) for v in rng.integers(0, 2, 300)]
    died = [int(rng.random() < (0.15 if a else 0.30)) for a in arm]
    path = _columns(
        tmp_path / "t.sqlite",
        "trial",
        {"arm": arm, "died": died, "age": [float(v) for v in rng.normal(50, 9, 300)]},
    )
    groups = _found(path, "share")
    told = {tuple(c) for c, _ in groups}
    assert ("arm", "died") in told
    db = Database(path)
    ex = Explorer(db, survey(db))
    insights = [
        i
        for h in ex.initial()
        if h.kind == "share" and len(h.columns) == 2
        for i in ex.test(h).insights
    ]
    deaths = [i for i in insights if i.kind == "group_difference" and i.columns == ["died", "arm"]]
    assert deaths and {deaths[0].direction, deaths[0].entities[0]} in (
        {"lower", "arm=1"},
        {"higher", "arm=0"},
    )
