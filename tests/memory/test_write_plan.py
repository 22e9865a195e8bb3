"""The write planner decides duplicates, contradictions and supersession from data alone:
no log, no index, no embedder, no model (a judge function stands in where one is asked)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

from lemmata.memory.extract import DraftFact, DraftProcedure
from lemmata.memory.rows import ItemRow
from lemmata.memory.text import normalise
from lemmata.memory.types import Namespace
from lemmata.memory.write_plan import (
    Existing,
    StoredFact,
    Supersession,
    lookups,
    plan_writes,
)

NS = Namespace(user="alice", agent="bot")
NOW = "2025-01-01T00:00:00"


def _fact(statement: str, source: str, when: str | None = None, **kw) -> DraftFact:
    return DraftFact(
        statement,
        [source],
        kw.pop("tags", []),
        kw.pop("entities", []),
        valid_from=datetime.fromisoformat(when) if when else None,
        **kw,
    )


def _plan(facts, existing=None, procedures=(), **kw):
    return plan_writes(
        NS,
        facts,
        ["s1"] * len(facts),
        list(procedures),
        ["s1"] * len(procedures),
        existing or Existing(),
        origin="offline",
        now=NOW,
        **kw,
    )


@pytest.fixture(autouse=True)
def no_database(monkeypatch):
    """Planning never opens a database: any attempt fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the planner opened a database")

    monkeypatch.setattr(sqlite3, "connect", refuse)


def test_a_fact_already_stored_is_merged_into_the_stored_one_not_inserted():
    text = "Alice adopted a cat named Miso."
    existing = Existing(by_norm={normalise(text): ["fa_stored"]})
    plan = _plan([_fact(text, "ep2"), _fact("Bob plays chess.", "ep3")], existing)
    assert plan.fact_ids[0] == "fa_stored"
    assert [r.text for r in plan.rows] == ["Bob plays chess."]
    assert [(m.item_id, m.sources) for m in plan.merged] == [("fa_stored", ["ep2"])]
    assert plan.duplicates == 1
    assert ("duplicate", "fa_stored") in [(a.op, a.item_id) for a in plan.audits]


def test_a_fact_repeated_within_the_batch_is_one_row_with_both_sources():
    plan = _plan([_fact("Alice likes tea.", "ep1"), _fact("alice likes TEA!", "ep2")])
    assert len(plan.rows) == 1 and plan.rows[0].sources == ["ep1", "ep2"]
    assert plan.fact_ids == [plan.rows[0].id, plan.rows[0].id]
    assert plan.duplicates == 1 and not plan.merged


def test_a_fact_with_no_words_is_rejected_and_keeps_its_place():
    plan = _plan([_fact("...", "ep1"), _fact("Alice likes tea.", "ep2")])
    assert plan.rejected == 1 and plan.fact_ids[0] == ""
    assert plan.fact_ids[1] == plan.rows[0].id and plan.drafts == [1]


def test_a_newer_contradicting_fact_supersedes_the_stored_one():
    key = "claim:alice|lives in"
    old = StoredFact("fa_porto", "Alice lives in Porto.", valid_from="2023-01-01T00:00:00")
    plan = _plan(
        [_fact("Alice moved to Lisbon.", "ep9", "2024-03-01T00:00:00")],
        Existing(by_claim={key: [old]}),
    )
    new = plan.rows[0]
    assert plan.closes == [Supersession("fa_porto", "2024-03-01T00:00:00", new.id)]
    assert new.valid_to is None and key in new.entities


def test_an_older_contradicting_fact_enters_history_already_superseded():
    key = "claim:alice|lives in"
    newer = StoredFact("fa_lisbon", "Alice lives in Lisbon.", valid_from="2024-03-01T00:00:00")
    plan = _plan(
        [_fact("Alice lives in Porto.", "ep1", "2023-01-01T00:00:00")],
        Existing(by_claim={key: [newer]}),
    )
    row = plan.rows[0]
    assert not plan.closes
    assert (row.valid_to, row.superseded_by) == ("2024-03-01T00:00:00", "fa_lisbon")


def test_a_fact_with_no_time_supersedes_from_now():
    old = StoredFact("fa_porto", "Alice lives in Porto.")
    plan = _plan(
        [_fact("Alice moved to Lisbon.", "ep9")],
        Existing(by_claim={"claim:alice|lives in": [old]}),
    )
    assert plan.closes == [Supersession("fa_porto", NOW, plan.rows[0].id)]


def test_a_compatible_claim_supersedes_nothing():
    old = StoredFact("fa_tea", "Alice likes tea.")
    plan = _plan(
        [_fact("Alice likes coffee.", "ep2")], Existing(by_claim={"claim:alice|like": [old]})
    )
    assert not plan.closes and plan.rows[0].valid_to is None


@pytest.mark.parametrize("newest_first", [False, True])
def test_contradicting_facts_of_one_batch_leave_the_later_one_current(newest_first):
    porto = _fact("Alice lives in Porto.", "ep1", "2023-01-01T00:00:00")
    lisbon = _fact("Alice moved to Lisbon.", "ep2", "2024-03-01T00:00:00")
    plan = _plan([lisbon, porto] if newest_first else [porto, lisbon])
    rows = {r.text: r for r in plan.rows}
    assert not plan.closes  # nothing stored is touched
    assert rows["Alice moved to Lisbon."].valid_to is None
    assert rows["Alice lives in Porto."].valid_to == "2024-03-01T00:00:00"
    assert rows["Alice lives in Porto."].superseded_by == rows["Alice moved to Lisbon."].id


def _near_pair(distance: float = 0.05, terms: frozenset[str] = frozenset({"caroline"})):
    red = StoredFact("fa_red", "Caroline drives a red car.", "2023-01-01T00:00:00", 0.9, terms)
    blue = _fact("Caroline drives a blue car.", "ep2", "2024-01-01T00:00:00", entities=["caroline"])
    return blue, Existing(near=[[("fa_red", distance)]], current={"fa_red": red})


def test_a_near_pair_no_rule_decides_is_counted_as_ambiguous_without_a_judge():
    blue, existing = _near_pair()
    plan = _plan([blue], existing)
    assert plan.ambiguous == 1 and not plan.closes and plan.rows[0].valid_to is None


def test_a_near_pair_goes_to_the_judge_and_its_contradiction_supersedes():
    blue, existing = _near_pair()
    asked: list[tuple[str, str]] = []

    def judge(old: StoredFact, new: ItemRow) -> str:
        asked.append((old.id, new.text))
        return "contradiction"

    plan = _plan([blue], existing, judge=judge)
    assert asked == [("fa_red", "Caroline drives a blue car.")]
    assert plan.closes == [Supersession("fa_red", "2024-01-01T00:00:00", plan.rows[0].id)]
    assert plan.ambiguous == 0


def test_a_judged_near_duplicate_is_kept_with_the_higher_credibility():
    blue, existing = _near_pair()
    blue.credibility = 0.5
    plan = _plan([blue], existing, judge=lambda old, new: "duplicate")
    assert plan.rows[0].credibility == 0.9 and not plan.closes
    assert [(a.op, a.detail["of"]) for a in plan.audits] == [("near_duplicate", "fa_red")]


@pytest.mark.parametrize(
    "distance, terms",
    [(0.2, frozenset({"caroline"})), (0.05, frozenset({"bob"}))],
    ids=["not near enough", "no shared entity"],
)
def test_the_judge_is_not_asked_about_a_pair_that_is_not_ambiguous(distance, terms):
    blue, existing = _near_pair(distance, terms)
    plan = _plan([blue], existing, judge=lambda old, new: pytest.fail("asked"))
    assert plan.ambiguous == 0 and len(plan.rows) == 1


def test_a_pair_a_rule_decided_is_not_ambiguous():
    old = StoredFact("fa_porto", "Alice lives in Porto.", terms=frozenset({"alice"}))
    new = _fact("Alice moved to Lisbon.", "ep2", entities=["alice"])
    existing = Existing(
        by_claim={"claim:alice|lives in": [old]},
        near=[[("fa_porto", 0.01)]],
        current={"fa_porto": old},
    )
    plan = _plan([new], existing, judge=lambda o, n: pytest.fail("asked"))
    assert len(plan.closes) == 1 and plan.ambiguous == 0


def test_procedures_follow_the_facts_with_their_draft_positions():
    proc = DraftProcedure("book a flight", ["Search two sites.", "Book the cheapest."], ["ep1"])
    plan = _plan([_fact("Alice likes tea.", "ep1")], procedures=[proc, proc])
    kinds = [r.kind for r in plan.rows]
    assert kinds == ["fact", "procedure", "procedure"] and plan.drafts == [0, 1, 2]
    assert plan.procedure_ids[0] == plan.procedure_ids[1] == plan.rows[1].id
    assert plan.rows[1].subgoal_id is not None and plan.rows[1].text.startswith("To book a flight")


def test_lookups_names_what_the_plan_reads():
    facts = [
        _fact("Alice moved to Lisbon.", "ep1"),
        _fact("Alice moved to Lisbon!", "ep2"),
        _fact("Bob drives a car.", "ep3"),
    ]
    need = lookups(facts, [[("fa_a", 0.01), ("fa_b", 0.3)], [], [("fa_a", 0.05)]])
    assert need.norms == [normalise("Alice moved to Lisbon."), normalise("Bob drives a car.")]
    assert need.claim_keys == ["claim:alice|lives in"]
    assert need.near_ids == ["fa_a"]


def test_the_same_batch_gives_the_same_ids():
    facts = lambda: [_fact("Alice likes tea.", "ep1"), _fact("Bob plays chess.", "ep2")]  # noqa: E731
    assert _plan(facts()).fact_ids == _plan(facts()).fact_ids
    other = plan_writes(
        Namespace(user="bob", agent="bot"),
        facts(),
        ["s1", "s1"],
        [],
        [],
        Existing(),
        origin="offline",
        now=NOW,
    )
    assert set(other.fact_ids).isdisjoint(_plan(facts()).fact_ids)
