"""The wide-table generator (lemmata.agents.research.synthetic3): the shape econometric data
sets have, planted relations that the written data hold, and tables of noise beside them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lemmata.agents.research.profile import survey
from lemmata.agents.research.synthetic3 import CORRELATIONS, DOMAINS, GAPS, generate
from lemmata.environments.database import Database, quote_ident


def _column(path: Path, table: str, name: str) -> np.ndarray:
    con = sqlite3.connect(path)
    try:
        rows = con.execute(f"SELECT {quote_ident(name)} FROM {quote_ident(table)}").fetchall()
    finally:
        con.close()
    return np.array([np.nan if r[0] is None else r[0] for r in rows], dtype=float)


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_a_table_is_wide_with_dummies_logs_and_gaps(tmp_path: Path, domain: str) -> None:
    g = generate(tmp_path / "wide.sqlite", seed=5, domain=domain)
    with Database(g.path) as db:
        s = survey(db)
    table = s.tables[g.table]
    roles = [c.role for c in table.columns.values()]
    assert g.columns == len(table.columns) >= 20
    assert roles.count("numeric") >= 15 and roles.count("categorical") >= 3
    assert sum(c.nulls > 0 for c in table.columns.values()) >= 1
    # A column and its logarithm or square are listed as related, and they are.
    assert g.related
    a, b = sorted(next(iter(g.related)))
    x, y = _column(g.path, g.table, a), _column(g.path, g.table, b)
    ok = np.isfinite(x) & np.isfinite(y)
    assert abs(stats.spearmanr(x[ok], y[ok])[0]) > 0.999


def test_every_planted_relation_is_in_the_written_data(tmp_path: Path) -> None:
    g = generate(tmp_path / "wide.sqlite", seed=3, domain="housing")
    assert len(g.checklist) == CORRELATIONS + GAPS + 1
    for item in g.checklist:
        a, b = item.columns
        x, y = _column(g.path, g.table, a), _column(g.path, g.table, b)
        ok = np.isfinite(x) & np.isfinite(y)
        if item.kind == "correlation":
            rho, p = stats.spearmanr(x[ok], y[ok])
            assert p < 1e-3 and (rho > 0) == (item.direction == "positive"), item
        else:
            level = float(item.entities[0].split("=")[1])
            inside = ok & (y == level)
            diff = np.median(x[inside]) - np.median(x[ok & ~inside])
            assert stats.mannwhitneyu(x[inside], x[ok & ~inside]).pvalue < 1e-2, item
            assert (diff > 0) == (item.direction == "higher"), item


def test_a_seed_gives_one_table_and_a_table_of_noise_has_nothing_planted(tmp_path: Path) -> None:
    a = generate(tmp_path / "a.sqlite", seed=11)
    b = generate(tmp_path / "b.sqlite", seed=11)
    assert a.checklist == b.checklist and a.path.read_bytes() == b.path.read_bytes()
    null = generate(tmp_path / "null.sqlite", seed=11, planted=False)
    assert null.checklist == [] and null.columns == a.columns
    assert null.is_planted_or_derived(sorted(next(iter(null.related))))
    assert not null.is_planted_or_derived(a.checklist[0].columns)


def test_an_unknown_domain_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown domain 'farms'"):
        generate(tmp_path / "x.sqlite", seed=1, domain="farms")
