"""The SQLite log: its error's code follows the convention of every other Lemmata error; its
schema refuses a newer file and reopens its own unchanged; an item comes back as it went in;
the retrieval channels' queries stay within the namespace."""

from __future__ import annotations

import re

import pytest

from lemmata.errors import LemmataError
from lemmata.memory import StoreError
from lemmata.memory.log import ItemRow, MemoryLog
from lemmata.memory.rows import to_node
from lemmata.memory.types import Episode, Fact, Namespace, Procedure

ALICE = Namespace(user="alice", agent="bot")
BOB = Namespace(user="bob", agent="bot")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Error")).lower()


def test_store_error_code_is_the_snake_case_class_name_without_error():
    # the convention of lemmata.errors: DataSourceError -> data_source, ModelOutputError ->
    # model_output, SnapshotError -> snapshot
    import lemmata.errors as errors

    for name in ("DataSourceError", "ModelOutputError", "SnapshotError", "ConfigError"):
        assert getattr(errors, name).code == _snake(name)
    assert StoreError.code == _snake("StoreError") == "store"
    assert issubclass(StoreError, LemmataError)


def test_a_file_that_is_not_a_memory_raises_store_error_with_its_code(tmp_path):
    bad = tmp_path / "memory.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a usable memory file") as caught:
        MemoryLog(bad)
    assert caught.value.code == "store"
    assert re.fullmatch(r"[a-z][a-z0-9_]*", caught.value.code)


def test_a_file_from_a_newer_lemmata_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "memory.sqlite3"
    log = MemoryLog(path)
    log.set_meta("schema", "99")
    log.close()
    with pytest.raises(StoreError, match="newer Lemmata"):
        MemoryLog(path)
    import sqlite3

    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()[0] == "99"


def _store(log: MemoryLog, ns: Namespace, *rows: ItemRow) -> None:
    log.add_episodes(ns, [Episode(content="turn one"), Episode(content="turn two")], ["ep1", "ep2"])
    with log.transaction() as db:
        for row in rows:
            if row.subgoal_id:
                log.ensure_subgoal(db, ns, row.subgoal_id, row.subgoal_text or "")
            assert log.insert_item(db, ns, row)


def test_an_item_comes_back_as_it_went_in_and_a_reopened_file_keeps_it(tmp_path):
    path = tmp_path / "memory.sqlite3"
    log = MemoryLog(path)
    fact = ItemRow(
        id="fa_1",
        kind="fact",
        session="s1",
        text="Alice moved to Lisbon.",
        norm="alice moved to lisbon",
        valid_from="2024-03-01T00:00:00",
        sources=["ep1", "ep2"],
        tags=["lisbon"],
        entities=["alice", "claim:alice|lives in"],
    )
    proc = ItemRow(
        id="pr_1",
        kind="procedure",
        session="s1",
        text="To book a flight: Search; Book.",
        norm="to book a flight search book",
        subgoal_id="sg_1",
        subgoal_text="book a flight",
        steps=["Search", "Book"],
        outcome=1.0,
        sources=["ep2"],
    )
    _store(log, ALICE, fact, proc)
    log.close()
    log = MemoryLog(path)  # the schema installs again over its own file: nothing changes
    rows = log.items(ALICE, ["fa_1", "pr_1"])
    nodes = {r["id"]: to_node(r, log.terms_of(ALICE, ["fa_1"])) for r in rows}
    got = nodes["fa_1"]
    assert isinstance(got, Fact) and sorted(got.sources) == ["ep1", "ep2"]
    assert got.entities == ("alice",) and got.tags == ("lisbon",)
    assert got.valid_from is not None and got.valid_from.year == 2024
    steps = nodes["pr_1"]
    assert isinstance(steps, Procedure) and steps.steps == ("Search", "Book")
    assert steps.subgoal == "book a flight" and steps.sources == ("ep2",)
    assert log.item_count(ALICE) == 2 and log.get_meta("schema") == "2"
    assert log.integrity() == "ok"


def test_the_channels_queries_stay_within_the_namespace(tmp_path):
    log = MemoryLog(tmp_path / "memory.sqlite3")
    for ns, fid in ((ALICE, "fa_a"), (BOB, "fa_b")):
        row = ItemRow(
            id=fid,
            kind="fact",
            session="s1",
            text="Miso the cat sleeps on the piano.",
            norm="miso the cat sleeps on the piano",
            sources=["ep1"],
            tags=["piano"],
            entities=["miso"],
        )
        _store(log, ns, row)
    assert [i for i, _ in log.search_text(ALICE, ["piano", "miso"], 5)] == ["fa_a"]
    assert [i for i, _ in log.search_terms(BOB, ["piano"], 5, max_df=10)] == ["fa_b"]
    assert log.siblings(ALICE, ["fa_a"], 5) == []  # its one source episode has no other item


def test_a_session_waiting_for_a_fuller_batch_is_not_due(tmp_path):
    """has_due follows Memory.consolidate's batching rule: a session with fewer pending
    episodes than the batch is due only once its newest episode has waited long enough."""
    import time

    log = MemoryLog(tmp_path / "memory.sqlite3")
    short = [Episode(content="one", session="a"), Episode(content="two", session="a")]
    log.add_episodes(ALICE, short, ["a1", "a2"])
    now = time.time()
    assert log.has_due(ALICE, now, "offline")  # no batching: any pending episode is due
    assert not log.has_due(ALICE, now, "offline", batch_episodes=3, batch_wait_s=300)
    assert log.has_due(ALICE, now + 301, "offline", batch_episodes=3, batch_wait_s=300)
    assert log.has_due(ALICE, now, "offline", batch_episodes=2, batch_wait_s=300)
    # a second, fuller session makes the namespace due although the first still waits
    full = [Episode(content=f"b{i}", session="b") for i in range(3)]
    log.add_episodes(ALICE, full, ["b0", "b1", "b2"])
    assert log.has_due(ALICE, now, "offline", batch_episodes=3, batch_wait_s=300)
    assert not log.has_due(BOB, now + 301, "offline", batch_episodes=3, batch_wait_s=300)
