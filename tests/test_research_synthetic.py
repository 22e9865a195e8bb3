"""The second generator of databases with planted insights (other schema shapes), the original
generator left as it was, and the research agent on the second generator's databases."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from lemmata.agents.research import research
from lemmata.agents.research.evaluate import evaluate_generated
from lemmata.agents.research.profile import survey
from lemmata.agents.research.score import score
from lemmata.agents.research.synthetic import generate as generate_original
from lemmata.agents.research.synthetic2 import generate
from lemmata.agents.research.timeforms import detect_time
from lemmata.agents.research.types import KINDS
from lemmata.environments.database import Database


def _dump_sha(path) -> str:
    con = sqlite3.connect(path)
    try:
        return hashlib.sha256("\n".join(con.iterdump()).encode()).hexdigest()[:16]
    finally:
        con.close()


@pytest.fixture(scope="module")
def shaped(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("gen2") / "shaped.sqlite", seed=4)


def _schema(path) -> dict[str, list[tuple[str, str, bool]]]:
    con = sqlite3.connect(path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: [(r[1], r[2], bool(r[5])) for r in con.execute(f'PRAGMA table_info("{t}")')]
            for t in tables
        }
    finally:
        con.close()


def test_original_generator_is_unchanged():
    """The databases of the original generator's seeds, hashed before the second one was added
    (dumps of seeds 0 and 1000, planted and null)."""
    import tempfile
    from pathlib import Path

    expected = {
        (0, True): "951bd0a7aa488cf7",
        (0, False): "8806cf1d9e9f9bd5",
        (1000, True): "fdf09194798b4bad",
        (1000, False): "ffa69f6460ffc51d",
    }
    with tempfile.TemporaryDirectory() as tmp:
        for (seed, planted), sha in expected.items():
            g = generate_original(Path(tmp) / f"{seed}{planted}.sqlite", seed, planted=planted)
            assert _dump_sha(g.path) == sha, (seed, planted)


def test_the_second_generator_is_deterministic_and_differs_from_the_first(tmp_path):
    a = generate(tmp_path / "a.sqlite", seed=11)
    b = generate(tmp_path / "b.sqlite", seed=11)
    assert _dump_sha(a.path) == _dump_sha(b.path)
    assert [i.model_dump() for i in a.checklist] == [i.model_dump() for i in b.checklist]
    assert set(_schema(a.path)) != set(_schema(generate_original(tmp_path / "c", seed=11).path))


def test_the_second_generator_writes_the_promised_shapes(shaped):
    schema = _schema(shaped.path)
    con = sqlite3.connect(shaped.path)
    rows = {t: con.execute(f'SELECT * FROM "{t}"').fetchall() for t in schema}
    con.close()

    def values(table: str, column: str) -> list:
        i = [c[0] for c in schema[table]].index(column)
        return [r[i] for r in rows[table]]

    # Text time keys: months (YYYY-MM or month names), quarters, slashed dates.
    monthly = next(t for t in schema if t.endswith("_monthly"))
    assert dict((c, ty) for c, ty, _ in schema[monthly])["month"] == "TEXT"
    assert detect_time(values(monthly, "month")).name in {"year_month", "month_name"}
    wide = next(t for t in schema if "_by_" in t)
    assert detect_time(values(wide, "quarter")).name == "quarter"
    # One row per period: unique months, and a wide table of one column per level.
    assert len(set(values(monthly, "month"))) == len(rows[monthly]) >= 30
    assert len(schema[wide]) >= 3 and all(ty == "REAL" for _, ty, _ in schema[wide][1:])
    # Integer codes with a lookup table of labels.
    lookups = [t for t in schema if t.endswith("_codes")]
    assert len(lookups) == 2
    for lookup in lookups:
        code = schema[lookup][0][0]
        assert schema[lookup][0][1] == "INTEGER" and schema[lookup][0][2]
        users = [t for t in schema if t != lookup and code in {c for c, _, _ in schema[t]}]
        assert users and set(values(users[0], code)) <= set(values(lookup, code))
    # NULLs in measures and categories; measures in two units.
    with Database(shaped.path) as db:
        nulls = {
            (t, c): db.scalar(f'SELECT COUNT(*) FROM "{t}" WHERE "{c}" IS NULL')
            for t in schema
            for c, _, _ in schema[t]
        }
    assert sum(1 for n in nulls.values() if n) >= 8
    event = shaped.checklist[0].table
    milli = [c for c, ty, _ in schema[event] if c.endswith("_milli")]
    assert milli and all(ty == "INTEGER" for c, ty, _ in schema[event] if c in milli)
    assert any(c.startswith("avg_") for c, _, _ in schema[monthly])


def test_checklist_items_point_at_real_columns(shaped):
    schema = _schema(shaped.path)
    assert sorted({i.kind for i in shaped.checklist}) == sorted(set(KINDS) - {"other"})
    assert {i.table for i in shaped.checklist} >= {t for t in schema if "_by_" in t}
    everywhere = {c for t in schema.values() for c, _, _ in t}
    for item in shaped.checklist + shaped.entity_checklist:
        columns = {c for c, _, _ in schema[item.table]}
        # A relationship names the parent's column; everything else is in the item's table.
        assert item.columns[0] in columns, item.id
        assert set(item.columns) <= (everywhere if item.kind == "relationship" else columns)
        for entity in item.entities:
            assert entity.split("=")[0] in everywhere, item.id
        assert item.value is not None
    # The survey reads the codes as categories and the text keys as time.
    with Database(shaped.path) as db:
        s = survey(db)
    group = next(i for i in shaped.checklist if i.kind == "group_difference")
    assert s.tables[group.table].columns[group.columns[1]].role == "categorical"
    trend_tables = {i.table for i in shaped.checklist if i.kind == "trend"}
    assert all(s.tables[t].series for t in trend_tables)


def test_null_database_has_no_checklist(tmp_path):
    null = generate(tmp_path / "null.sqlite", seed=4, planted=False)
    assert null.checklist == [] and null.entity_checklist == []


def test_agent_finds_most_planted_facts_of_the_second_generator(shaped, tmp_path):
    report = research(shaped.path, tmp_path / "out", budget_turns=60, figures=False)
    found = score(report.insights, shaped.checklist)
    assert found.recall >= 0.8, found.missed  # 1.0 measured on seeds 4 and 8
    # The trend of a wide table's column over 12-20 quarters (a short series, which a fixed
    # p < 1e-4 bar missed).
    wide = next(i for i in shaped.checklist if i.kind == "trend" and "_by_" in i.table)
    assert wide.id in found.matched
    entity = research(
        shaped.path, tmp_path / "entity", entity=shaped.entity, budget_turns=60, figures=False
    )
    found = score(entity.insights, shaped.entity_checklist)
    assert found.recall >= 0.6
    # The entity's trend over dates written 2021/03/15 (its evidence SQL reads them).
    assert not [m for m in found.missed if m.startswith("trend:")]


def test_evaluate_generated_runs_either_style(tmp_path):
    suite = evaluate_generated([8], tmp_path, style="shapes", null_databases=True)
    assert suite.recall >= 0.75
    assert suite.null_insights == [0]
    with pytest.raises(ValueError, match="original or shapes"):
        evaluate_generated([8], tmp_path, style="nope")
