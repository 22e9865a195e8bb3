"""The designed-study generator (lemmata.agents.research.synthetic4): trials, differences in
differences, observational comparisons and surveys, with planted facts that the written data
hold and studies of noise beside them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lemmata.agents.research.profile import survey
from lemmata.agents.research.synthetic4 import DESIGNS, generate
from lemmata.environments.database import Database, quote_ident


def _rows(path: Path, table: str) -> list[dict]:
    con = sqlite3.connect(path)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(f"SELECT * FROM {quote_ident(table)}")]
    finally:
        con.close()


def _value(text: str) -> object:
    try:
        return int(text)
    except ValueError:
        return text


@pytest.mark.parametrize("design", DESIGNS)
def test_each_design_writes_linked_tables_with_categories_and_its_facts_hold(
    tmp_path: Path, design: str
) -> None:
    s = generate(tmp_path / "s.sqlite", seed=21, design=design)
    with Database(s.path) as db:
        sv = survey(db)
    assert set(sv.tables) == set(s.tables) and s.checklist
    assert any(c.role == "categorical" for t in sv.tables.values() for c in t.columns.values())
    if len(s.tables) > 1:
        assert sv.links, "a study of several tables declares its keys"
    for item in s.checklist:
        rows = _rows(s.path, item.table)
        if item.kind == "correlation":
            a, b = item.columns
            pairs = [(r[a], r[b]) for r in rows if r[a] is not None and r[b] is not None]
            rho = stats.spearmanr(*zip(*pairs, strict=True))[0]
            assert rho > 0, item
        elif item.kind == "share":
            (ca, va), (cb, vb) = (e.split("=") for e in item.entities)
            inside = [
                r[ca] == _value(va) for r in rows if r[ca] is not None and r[cb] == _value(vb)
            ]
            rest = [r[ca] == _value(va) for r in rows if r[ca] is not None and r[cb] != _value(vb)]
            assert np.mean(inside) > np.mean(rest), item
        elif item.kind == "group_difference" and len(item.columns) == 2:
            y, g = item.columns
            level = _value(item.entities[0].split("=")[1])
            inside = [r[y] for r in rows if r[g] == level and r[y] is not None]
            rest = [r[y] for r in rows if r[g] != level and r[g] is not None and r[y] is not None]
            assert (np.mean(inside) > np.mean(rest)) == (item.direction == "higher"), item


def test_a_seed_gives_one_study_and_a_study_of_noise_has_nothing_planted(tmp_path: Path) -> None:
    a = generate(tmp_path / "a.sqlite", seed=7)
    b = generate(tmp_path / "b.sqlite", seed=7)
    assert a.checklist == b.checklist and a.path.read_bytes() == b.path.read_bytes()
    null = generate(tmp_path / "null.sqlite", seed=7, planted=False)
    assert null.checklist == [] and null.tables == a.tables and null.design == a.design
    assert not null.is_planted_or_derived(a.checklist[0].columns)
    assert a.is_planted_or_derived(a.checklist[0].columns)


def test_small_and_large_studies_and_every_design_are_drawn(tmp_path: Path) -> None:
    studies = [generate(tmp_path / f"{seed}.sqlite", seed) for seed in range(24)]
    assert {s.design for s in studies} == set(DESIGNS)
    assert min(s.rows for s in studies) <= 120 and max(s.rows for s in studies) >= 1000


def test_an_unknown_design_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown design 'cohort'"):
        generate(tmp_path / "x.sqlite", seed=1, design="cohort")
