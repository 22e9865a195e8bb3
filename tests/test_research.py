"""The research agent offline: read-only data access, the survey, the explorer on generated
databases with planted insights, the report, budgets and resuming, the scorer, bad input."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from lemmata.agents.research import Insight, research
from lemmata.agents.research.ddrbench import load_ddr_bench
from lemmata.agents.research.score import is_true, matches, score
from lemmata.agents.research.synthetic import generate
from lemmata.agents.research.types import DIRECTIONS, KINDS, ChecklistItem
from lemmata.environments.database import Database, load_folder
from lemmata.errors import DataSourceError, UsageError


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("gen") / "shop.sqlite", seed=9)


@pytest.fixture(scope="module")
def shop_report(shop, tmp_path_factory):
    before = _sha(shop.path)
    report = research(shop.path, tmp_path_factory.mktemp("out"), budget_turns=60)
    assert _sha(shop.path) == before
    return report


# -- read-only access -------------------------------------------------------------------------


def test_database_runs_only_reading_statements(shop):
    before = _sha(shop.path)
    t = shop.checklist[0].table
    with Database(shop.path, timeout_s=0.5) as db:
        for sql in [
            f"DELETE FROM {t}",
            f"DROP TABLE {t}",
            f"UPDATE {t} SET rowid = 0",
            "PRAGMA query_only = OFF",
            "ATTACH DATABASE 'x.db' AS x",
            f"SELECT 1; DELETE FROM {t}",
        ]:
            result = db.query(sql)
            assert not result.ok, sql
        assert "not DELETE" in db.query(f"DELETE FROM {t}").error
        slow = db.query(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        )
        assert "ran past 0.5 s" in slow.error
        assert db.query(f"SELECT nope FROM {t}").error.startswith("no such column")
        # A connection of our own cannot write either: the file is opened with mode=ro.
        with pytest.raises(sqlite3.OperationalError):
            db._con.set_authorizer(None)
            db._con.execute(f"DELETE FROM {t}")
    assert _sha(shop.path) == before


def test_missing_and_corrupt_sources_are_clear_errors(tmp_path):
    with pytest.raises(DataSourceError, match="does not exist"):
        Database(tmp_path / "nope.sqlite")
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database at all" * 100)
    before = _sha(bad)
    with pytest.raises(DataSourceError, match="not a readable SQLite database"):
        research(bad, tmp_path / "out")
    assert _sha(bad) == before
    with pytest.raises(DataSourceError, match="no .csv or .parquet"):
        research(tmp_path / "out", tmp_path / "out2")


def test_csv_folder_with_bad_row_empty_file_and_mixed_types(tmp_path):
    import numpy as np

    folder = tmp_path / "csv"
    folder.mkdir()
    rng = np.random.default_rng(1)
    lines = ["sale_id,store,amount,units,day"]
    for i in range(400):
        store = str(rng.choice(["a", "b", "c"]))
        amount = rng.normal(100, 10) + (30 if store == "b" else 0)
        units = "unknown" if i % 50 == 0 else str(int(rng.integers(1, 30)))
        lines.append(f"{i},{store},{amount:.2f},{units},2023-{1 + i % 12:02d}-{1 + i % 28:02d}")
    lines.insert(5, "999,b,1,2,2023-01-01,EXTRA")
    (folder / "sales.csv").write_text("\n".join(lines) + "\n")
    (folder / "empty.csv").write_text("")
    (folder / "returns.csv").write_text("return_id,sale_id\n")
    sums = {p.name: _sha(p) for p in folder.iterdir()}
    report = research(folder, tmp_path / "out", figures=False)
    assert {p.name: _sha(p) for p in folder.iterdir()} == sums
    notes = "\n".join(report.observations)
    assert "empty.csv: the file is empty" in notes
    assert "1 row(s) did not match the header" in notes and "EXTRA" in notes
    assert "table returns is empty" in notes
    assert "sales.units mixes types" in notes and "'unknown'" in notes
    found = [i for i in report.insights if i.kind == "group_difference"]
    assert found and found[0].entities == ["store=b"] and found[0].direction == "higher"
    assert report.stats["evidence_database"].endswith("data.sqlite")


def test_load_folder_never_leaves_a_half_written_database(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.csv").write_text("x,y\n1,2\n")
    (folder / "b.parquet").write_bytes(b"not parquet")
    with pytest.raises(DataSourceError, match=r"b\.parquet"):
        load_folder(folder, tmp_path / "data.sqlite")
    assert not (tmp_path / "data.sqlite").exists()


# -- the explorer on planted insights -----------------------------------------------------------


def test_finds_the_planted_insights_of_a_generated_database(shop, shop_report):
    result = score(shop_report.insights, shop.checklist)
    assert result.recall >= 0.8, result.missed
    assert set(result.by_kind) == set(KINDS) - {"other"}


def test_entity_task_finds_the_entity_facts(shop, tmp_path):
    report = research(shop.path, tmp_path / "out", entity=shop.entity, figures=False)
    result = score(report.insights, shop.entity_checklist)
    assert result.recall >= 2 / 3, result.missed
    first = report.insights[0]
    assert shop.entity in first.entities  # facts about the entity come first


def test_pure_noise_yields_next_to_nothing(tmp_path):
    null = generate(tmp_path / "null.sqlite", seed=7, planted=False)
    report = research(null.path, tmp_path / "out", figures=False)
    assert [i.statement for i in report.insights if i.kind != "other"] == []
    assert null.checklist == [] and report.stats["stopped"] == "exhausted"


def test_every_insight_is_reproduced_by_its_evidence_sql(shop, shop_report):
    with Database(shop.path) as db:
        for ins in shop_report.insights:
            assert is_true(ins, db), ins.evidence_sql
    keys = [i.key() for i in shop_report.insights]
    assert len(keys) == len(set(keys))


def test_report_files(shop_report):
    out = shop_report.out_dir
    data = json.loads((out / "report.json").read_text())
    assert set(data) >= {"insights", "stats"}
    for ins in data["insights"]:
        assert {
            "statement",
            "kind",
            "table",
            "columns",
            "entities",
            "direction",
            "value",
            "evidence_sql",
        } <= set(ins)
        assert ins["kind"] in KINDS
        assert ins["direction"] is None or ins["direction"] in DIRECTIONS
        assert all("=" in e for e in ins["entities"])
    assert data["stats"]["source_unchanged"] is True
    assert data["stats"]["insights"] == len(data["insights"])
    md = (out / "report.md").read_text()
    figures = [i["figure"] for i in data["insights"] if i["figure"]]
    assert len(figures) >= len(data["insights"]) - 1
    for fig in figures:
        assert f"]({fig})" in md
        assert (out / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert md.count("```sql") == len(data["insights"])


# -- budgets and resuming -----------------------------------------------------------------------


def test_stops_on_its_turn_budget_and_resumes_from_the_checkpoint(shop, tmp_path):
    out = tmp_path / "out"
    first = research(shop.path, out, budget_turns=2, figures=False)
    assert first.stats["stopped"] == "budget_turns" and first.stats["turns"] == 2
    assert first.stats["hypotheses_tested"] == 16 and first.stats["hypotheses_left"] > 0
    resumed = research(shop.path, out, budget_turns=100, resume=True, figures=False)
    assert resumed.stats["resumed_from_turn"] == 2
    assert resumed.stats["stopped"] == "exhausted"
    fresh = research(shop.path, tmp_path / "fresh", budget_turns=100, figures=False)
    assert resumed.stats["hypotheses_tested"] == fresh.stats["hypotheses_tested"]
    assert sorted(i.key() for i in resumed.insights) == sorted(i.key() for i in fresh.insights)
    # Without --resume the checkpoint is started afresh.
    again = research(shop.path, out, budget_turns=1, figures=False)
    assert again.stats["turns"] == 1 and again.stats["resumed_from_turn"] is None


def test_seconds_budget(shop, tmp_path):
    report = research(shop.path, tmp_path / "out", budget_seconds=1e-6, figures=False)
    assert report.stats["stopped"] == "budget_seconds" and report.stats["turns"] == 1


def test_bad_arguments(shop, tmp_path):
    with pytest.raises(UsageError, match="column=value"):
        research(shop.path, tmp_path / "o", entity="patient 42")
    with pytest.raises(UsageError, match="at least 1"):
        research(shop.path, tmp_path / "o", budget_turns=0)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        research(shop.path, tmp_path / "file")


def test_unknown_entity_column_is_an_observation(shop, tmp_path):
    report = research(shop.path, tmp_path / "o", entity="planet_id=3", figures=False)
    assert any("no table has a column planet_id" in o for o in report.observations)
    assert report.insights


# -- scoring -------------------------------------------------------------------------------------


def _ins(**kw) -> Insight:
    base = dict(
        statement="s",
        kind="group_difference",
        table="visits",
        columns=["cost", "department"],
        entities=["department=oncology"],
        direction="higher",
        value=110.0,
        evidence_sql="SELECT 110.0",
    )
    return Insight(**(base | kw))


ITEM = ChecklistItem(
    id="g",
    kind="group_difference",
    table="visits",
    columns=["cost", "department"],
    entities=["department=oncology"],
    direction="higher",
    value=100.0,
    tolerance=0.15,
)


@pytest.mark.parametrize(
    "change, expected",
    [
        ({}, True),
        ({"table": "VISITS", "columns": ["visits.cost", "Department"]}, True),
        ({"direction": "lower"}, False),
        ({"value": 120.0}, False),
        ({"kind": "relationship"}, False),
        ({"entities": ["department=cardiology"]}, False),
        ({"columns": ["cost"]}, False),
        ({"table": "labs"}, False),
    ],
)
def test_checklist_matching(change, expected):
    assert matches(_ins(**change), ITEM) is expected


def test_one_insight_matches_one_item():
    twin = ITEM.model_copy(update={"id": "g2"})
    result = score([_ins()], [ITEM, twin])
    assert result.recall == 0.5 and result.missed == ["g2"]


def test_entity_values_compare_as_numbers():
    item = ChecklistItem(id="o", kind="outlier", table="t", columns=["x"], entities=["id=42"])
    assert matches(_ins(kind="outlier", table="t", columns=["x"], entities=["id=42.0"]), item)


def test_ddr_bench_loader(tmp_path):
    qa = tmp_path / "qa.json"
    qa.write_text(
        json.dumps(
            {
                "results": [
                    {
                        "entity_id": 5,
                        "qa_pairs": [
                            {
                                "question": "Which service?",
                                "answer": "Cardiology service",
                                "source_text": "x",
                            }
                        ],
                    }
                ]
            }
        )
    )
    items = load_ddr_bench(qa)["5"]
    assert matches(_ins(statement="Patient 5 was on the cardiology service."), items[0])
    assert not matches(_ins(statement="Patient 5 is female."), items[0])
    qa.write_text(json.dumps({"results": [{"entity_id": 5, "qa_pairs": [{"question": "q"}]}]}))
    with pytest.raises(DataSourceError, match=r"results\[0\]\.qa_pairs\[0\] has no answer"):
        load_ddr_bench(qa)
    qa.write_text("{not json")
    with pytest.raises(DataSourceError, match="is not JSON"):
        load_ddr_bench(qa)


def test_two_columns_that_both_follow_time_are_not_reported_as_correlated(shop, shop_report):
    # seed 9 plants a trend in labs.cholesterol and a step change in labs.sodium: they
    # correlate (r = -0.48) only because both move with taken_on
    pairs = [set(i.columns) for i in shop_report.insights if i.kind == "correlation"]
    assert {"cholesterol", "sodium"} not in pairs
    assert any("follow time" in o and "cholesterol" in o for o in shop_report.observations)
    planted = next(c for c in shop.checklist if c.kind == "correlation")
    assert set(planted.columns) in pairs  # the planted correlation is still found
