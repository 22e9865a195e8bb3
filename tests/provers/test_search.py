"""The refinement search (provers/refine/search.py) on real Coq: what it proves, how it
answers failures, how it repairs drafts, its budgets, its trace, and its answers to bad input.

Every search is small (at most 30 verifier calls, 30 seconds, no Hammer/Interval to load),
and one coqtop serves them all, as one serves a batch of theorems.
Tests that must not depend on how the offline policy orders its tactics (the lead tunes it)
use a small scripted :class:`Policy` of their own; the rest assert what a user relies on: it
is proved, and the proof passes a fresh check under the header the result names.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lemmata.provers import CoqTop
from lemmata.provers.refine.backend import header_for, proof_text
from lemmata.provers.refine.policy import Action, NodeView
from lemmata.provers.refine.search import SearchConfig, SearchResult, search
from lemmata.provers.refine.trace import ProblemTrace, read_trace
from lemmata.provers.result import FailureMode

REALS = "Require Import Reals. Open Scope R_scope."
INTS = "Require Import ZArith. Open Scope Z_scope."
SMALL = SearchConfig(budget_calls=30, budget_seconds=30, automation=False)
# Attempt statuses that are verifier runs of a tactic on a goal (not repairs, not checks).
RUNS = ("error", "open", "duplicate", "timeout", "finished")

R1 = "Theorem r1 : forall x : R, 0 <= x -> x <= 1 -> x * x <= 1."
FALSE = "Theorem f : forall n : nat, n * n = n + 1."  # false at n = 0


def run(coq: Any, statement: str, header: str = "", **kw: Any) -> SearchResult:
    """A search that keeps to its budget of calls, whatever happens."""
    config = kw.pop("config", SMALL)
    r = search(coq, statement, header, config=config, **kw)
    assert r.calls <= config.budget_calls, (r.calls, config.budget_calls)
    return r


def rechecks(coq: Any, statement: str, header: str, r: SearchResult) -> bool:
    """The proof found passes a whole check under the header plus what the search added."""
    full, added = header_for("coq", header, SMALL.imports, SMALL.automation)
    assert r.header_additions == added
    assert r.proof is not None
    return coq.check(full, statement, r.proof).ok


def only(trace_file: Path) -> ProblemTrace:
    traces = read_trace(trace_file)
    assert len(traces) == 1
    return traces[0]


class Script:
    """A policy that proposes a fixed list of tactics by the goal's head (``"*"``: any other
    goal) and never reacts, so that a test controls the order of the search exactly."""

    name = "script"

    def __init__(self, table: dict[str, list[tuple[str, float]]]) -> None:
        self.table = table

    def propose(self, node: NodeView) -> list[Action]:
        acts = self.table.get(node.goal.head, self.table.get("*", []))
        return [Action(tactic, "close", prior) for tactic, prior in acts]

    def react(self, node: NodeView, action: Action, failure: FailureMode) -> list[Action]:
        return []


@pytest.fixture(scope="module")
def coq(coqtop_path: str) -> Any:
    """One coqtop for the module, as a batch run uses one for many theorems (each search opens
    and closes its own session on it); loading Reals once keeps the module quick."""
    with CoqTop(coqtop_path, timeout_s=20) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def r1(coq: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[SearchResult, Path]:
    """The nonlinear bound on [0, 1], searched once with its trace, for several tests."""
    path = tmp_path_factory.mktemp("r1") / "r1.jsonl"
    return run(coq, R1, REALS, id="r1", trace=path), path


@pytest.fixture(scope="module")
def unprovable(coq: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[SearchResult, Path]:
    path = tmp_path_factory.mktemp("false") / "false.jsonl"
    return run(coq, FALSE, id="false", trace=path), path


# -- proofs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "header"),
    [
        pytest.param("Theorem n1 : forall n m : nat, n < m -> n + 1 <= m.", "", id="nat-lia"),
        pytest.param("Theorem z1 : forall a b : Z, a < b -> a + 1 <= b.", INTS, id="Z-lia"),
        pytest.param("Theorem e1 : exists n : nat, 3 * n = 9.", "", id="existential"),
        pytest.param("Theorem a1 : forall x : R, Rabs (x - 1) <= 2 -> x <= 3.", REALS, id="Rabs"),
    ],
)
def test_small_goals_are_proved_and_the_proof_rechecks(
    coq: Any, statement: str, header: str
) -> None:
    r = run(coq, statement, header)
    assert r.status == "proved" and r.proved, r.failure
    assert r.failure is None and r.vacuous is False
    assert rechecks(coq, statement, header, r)


def test_a_conjunction_is_split_and_its_parts_closed_by_different_tactics(
    coq: Any, tmp_path: Path
) -> None:
    # Neither tauto nor nra proves the whole: P is no arithmetic, x * x > 0 no logic.
    statement = "Theorem c2 : forall (P : Prop) (x : R), P -> 0 < x -> P /\\ x * x > 0."
    path = tmp_path / "c2.jsonl"
    r = run(coq, statement, REALS, trace=path)
    assert r.status == "proved", r.failure
    assert r.proof is not None and "split" in r.proof
    assert rechecks(coq, statement, REALS, r)
    trace = only(path)
    steps = [trace.attempts[i] for i in sorted(trace.on_path())]
    closers = [a["tactic"] for a in steps if (a["goals_after"] or 0) < a["goals_before"]]
    assert len(closers) == 2 and closers[0] != closers[1], steps


def test_a_failed_lra_is_answered_by_a_follow_up_that_proves_it(
    coq: Any, r1: tuple[SearchResult, Path]
) -> None:
    r, path = r1
    assert r.status == "proved" and r.vacuous is False
    assert rechecks(coq, R1, REALS, r)
    attempts = only(path).attempts
    lra = [i for i, a in enumerate(attempts) if a["tactic"] == "lra" and a["status"] == "error"]
    assert lra, "lra was never tried and failed on the nonlinear goal"
    failed = attempts[lra[0]]
    assert failed["failure"]["kind"] == "tactic_failed"
    after = [a for a in attempts[lra[0] + 1 :] if a["node"] == failed["node"]]
    assert after and after[0]["reacting_to"] == "lra"
    on_path = [attempts[i] for i in only(path).on_path()]
    assert any(a["node"] == failed["node"] and a["reacting_to"] == "lra" for a in on_path)


# -- drafts ---------------------------------------------------------------------------------


def test_a_drafts_failing_step_is_replaced_in_place_and_its_good_step_kept(
    coq: Any, tmp_path: Path
) -> None:
    statement = "Theorem d1 : forall x : R, 0 < x -> x * x + x > 0."
    path = tmp_path / "d1.jsonl"
    r = run(coq, statement, REALS, draft="intros. lia.", trace=path)
    assert r.status == "proved"
    assert rechecks(coq, statement, REALS, r)
    assert r.proof is not None and r.proof.startswith("intros.\n")
    attempts = only(path).attempts
    assert (attempts[0]["tactic"], attempts[0]["family"]) == ("intros.", "draft")
    assert attempts[0]["status"] == "open"
    failing = next(i for i, a in enumerate(attempts) if a["tactic"] == "lia.")
    assert attempts[failing]["status"] == "error"
    assert attempts[failing]["failure"]["kind"] == "tactic_failed"
    # The replacement runs where lia failed: on the very goal it failed on, after intros.
    goal = attempts[failing]["goal"]
    finished = [a for a in attempts if a["status"] == "finished"]
    assert len(finished) == 1 and finished[0]["goal"] == goal
    assert finished[0]["tactic"] != "lia." and r.proof.endswith(finished[0]["tactic"] + ".")


def test_the_path_of_a_repaired_draft_spells_its_proof(coq: Any, tmp_path: Path) -> None:
    path = tmp_path / "d1.jsonl"
    r = run(
        coq,
        "Theorem d1 : forall x : R, 0 < x -> x * x + x > 0.",
        REALS,
        draft="intros. lia.",
        trace=path,
    )
    trace = only(path)
    steps = [trace.attempts[i]["tactic"] for i in sorted(trace.on_path())]
    assert r.status == "proved" and proof_text("coq", tuple(steps)) == r.proof


@pytest.mark.parametrize(
    ("statement", "header", "draft", "kind"),
    [
        pytest.param(
            "Theorem b : forall x : R, 0 < x -> x > 0 /\\ x + 1 > 0.",
            REALS,
            "intros. split. + lra. + + lra.",
            "structure",
            id="doubled-bullet",
        ),
        pytest.param(
            "Theorem b : forall x : R, 0 < x -> x > 0 /\\ x + 1 > 0.",
            REALS,
            "intros. split. { lra. } } lra.",
            "structure",
            id="stray-brace",
        ),
        pytest.param(
            "Theorem u : forall n : nat, n + 0 = n.",
            "",
            "intros. apply no_such_lemma.",
            "unknown_identifier",
            id="unknown-lemma",
        ),
    ],
)
def test_a_draft_with_a_bad_bullet_or_an_unknown_lemma_is_repaired(
    coq: Any, tmp_path: Path, statement: str, header: str, draft: str, kind: str
) -> None:
    path = tmp_path / "t.jsonl"
    r = run(coq, statement, header, draft=draft, trace=path)
    assert r.status == "proved", r.failure
    assert rechecks(coq, statement, header, r)
    kinds = [
        a["failure"]["kind"]
        for a in only(path).attempts
        if a["family"] == "draft" and a["status"] == "error"
    ]
    assert kind in kinds


def test_a_bullet_of_the_wrong_kind_is_repaired(coq: Any) -> None:
    statement = "Theorem b : forall x : R, 0 < x -> x > 0 /\\ x + 1 > 0."
    r = run(coq, statement, REALS, draft="intros. split. - lra. + lra.")
    assert r.status == "proved", r.failure
    # The bullet Coq asked for replaces the wrong one; the rest of the draft is kept.
    assert r.proof is not None and r.proof.split() == [
        "intros.",
        "split.",
        "-",
        "lra.",
        "-",
        "lra.",
    ]


@pytest.mark.parametrize("draft", ["intros. idtac. split; lra.", "- intros. split; lra."])
def test_a_draft_step_that_changes_nothing_does_not_end_the_search(coq: Any, draft: str) -> None:
    statement = "Theorem b : forall x : R, 0 < x -> x > 0 /\\ x + 1 > 0."
    assert coq.check(header_for("coq", REALS, True, False)[0], statement, draft).ok
    r = run(coq, statement, REALS, draft=draft)
    assert r.status == "proved", (r.calls, r.failure)


# -- budgets --------------------------------------------------------------------------------


def test_an_unprovable_statement_fails_within_the_budget_with_a_summary(
    unprovable: tuple[SearchResult, Path],
) -> None:
    r, path = unprovable
    assert r.status == "failed" and r.proof is None and r.vacuous is None
    assert r.calls <= SMALL.budget_calls
    assert r.failure is not None and f"within {r.calls} verifier calls" in r.failure.message
    assert r.failure_counts and sum(r.failure_counts.values()) >= 3
    result = only(path).result
    assert result is not None and result["status"] == "failed" and result["calls"] == r.calls


def test_a_tiny_time_budget_ends_in_timeout(coq: Any) -> None:
    # Less than opening the statement takes: the time is spent before any tactic runs (a
    # larger budget races a frontier that a warm coqtop empties in a few milliseconds).
    config = SearchConfig(budget_calls=30, budget_seconds=0.001, automation=False)
    r = run(coq, FALSE, config=config)
    assert r.status == "timeout" and r.proof is None
    assert r.elapsed_s >= 0.001


def test_the_final_check_stays_within_the_budget(coq: Any) -> None:
    policy = Script({"forall": [("intros", 0.9)], "*": [("lia", 0.9)]})
    config = SearchConfig(budget_calls=3, budget_seconds=30, automation=False)
    statement = "Theorem o : forall n m : nat, n < m -> n + 1 <= m."
    r = search(coq, statement, config=config, policy=policy)
    assert r.calls <= 3, (r.status, r.calls)


# -- deduplication --------------------------------------------------------------------------


def _repeated_runs(trace: ProblemTrace) -> list[tuple[str, str]]:
    """(goal, tactic) pairs run more than once; ``lia.`` and ``lia`` are the same tactic."""
    runs = Counter(
        (a["goal"], a["goals_before"], a["tactic"].rstrip(". "))
        for a in trace.attempts
        if a["status"] in RUNS
    )
    return [(goal, tactic) for (goal, _, tactic), n in runs.items() if n > 1]


def test_no_tactic_is_run_twice_on_a_goal(unprovable: tuple[SearchResult, Path]) -> None:
    trace = only(unprovable[1])
    assert len(trace.attempts) >= 20  # enough tries for a repeat to show
    assert _repeated_runs(trace) == []


def test_a_failed_draft_step_is_not_retried_in_another_spelling(coq: Any, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    policy = Script({"forall": [("intros", 0.9)], "*": [("lia", 0.9)]})
    run(coq, FALSE, draft="intros. lia.", policy=policy, trace=path)
    assert _repeated_runs(only(path)) == []


def test_dropping_the_last_draft_step_and_cutting_the_draft_are_not_both_searched(
    coq: Any, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    policy = Script({"forall": [("intros", 0.9)], "/\\": [("split", 0.9)], "*": [("lia", 0.9)]})
    statement = "Theorem dc : forall n : nat, n = n /\\ n * n = n + 1."
    run(coq, statement, draft="intros. lia.", policy=policy, trace=path)
    assert _repeated_runs(only(path)) == []


# -- states: going back to another branch ------------------------------------------------------


def test_after_a_dead_end_the_search_goes_back_and_proves(coq: Any, tmp_path: Path) -> None:
    # exfalso leads to False, which nothing proves; nra at the node before it does.
    policy = Script(
        {
            "forall": [("intros", 0.95)],
            "False": [("lra", 0.9)],
            "*": [("exfalso", 0.9), ("nra", 0.4)],
        }
    )
    statement = "Theorem s : forall x : R, 0 < x -> x * x > 0."
    path = tmp_path / "s.jsonl"
    r = run(coq, statement, REALS, policy=policy, trace=path)
    assert r.status == "proved"
    assert r.proof is not None and "exfalso" not in r.proof
    assert rechecks(coq, statement, REALS, r)
    nodes = [a["node"] for a in only(path).attempts if a["status"] in RUNS]
    went_back = [i for i in range(1, len(nodes)) if nodes[i] < nodes[i - 1]]
    assert went_back, nodes


def test_going_back_to_try_another_witness_proves_it(coq: Any, tmp_path: Path) -> None:
    policy = Script({"exists": [("exists 2", 0.9), ("exists 3", 0.5)], "*": [("lia", 0.9)]})
    path = tmp_path / "w.jsonl"
    r = run(coq, "Theorem w : exists n : nat, n + 2 = 5.", policy=policy, trace=path)
    assert r.status == "proved", [(a["tactic"], a["status"]) for a in only(path).attempts]


# -- vacuity --------------------------------------------------------------------------------


def test_contradictory_hypotheses_are_reported_vacuous(
    coq: Any, r1: tuple[SearchResult, Path]
) -> None:
    statement = "Theorem v : forall x : R, x > 1 -> x < 0 -> x = 5."
    r = run(coq, statement, REALS)
    assert r.status == "proved" and r.vacuous is True
    assert rechecks(coq, statement, REALS, r)
    assert r1[0].vacuous is False


# -- bad input ------------------------------------------------------------------------------


def test_a_statement_that_does_not_elaborate_is_an_error_value(coq: Any, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    r = run(coq, "Theorem bad : forall x : R, x + true = 0.", REALS, trace=path)
    assert r.status == "error" and r.proof is None
    assert r.failure is not None and "does not elaborate" in r.failure.message
    assert "true" in r.failure.message
    assert only(path).result["status"] == "error"  # type: ignore[index]


def test_a_header_that_fails_is_a_header_error(coq: Any) -> None:
    r = run(coq, "Theorem h : 1 = 1.", "Require Import NoSuchLib.")
    assert r.status == "error" and r.proof is None
    assert r.failure is not None and r.failure.kind.value == "header_error"
    assert "NoSuchLib" in r.failure.message


def test_budgets_below_one_call_or_zero_seconds_are_refused() -> None:
    with pytest.raises(ValueError, match="budget_calls must be at least 1, got 0"):
        SearchConfig(budget_calls=0)
    with pytest.raises(ValueError, match="budget_seconds must be positive"):
        SearchConfig(budget_seconds=0)


# -- the trace ------------------------------------------------------------------------------


def test_the_trace_records_the_problem_its_attempts_and_the_result(
    r1: tuple[SearchResult, Path],
) -> None:
    r, path = r1
    trace = only(path)
    assert trace.id == "r1" and trace.problem["type"] == "problem"
    assert trace.problem["statement"] == R1 and trace.problem["header"] == REALS
    assert trace.problem["config"]["budget_calls"] == SMALL.budget_calls
    assert trace.attempts and all(a["type"] == "attempt" for a in trace.attempts)
    assert all(a["problem"] == "r1" for a in trace.attempts)
    assert trace.result is not None and trace.result["type"] == "result"
    assert trace.solved and trace.result["calls"] == r.calls
    assert trace.result["proof"] == r.proof
    # The path's attempts, in order, spell the proof; the last one leaves no goal.
    path_steps = [trace.attempts[i] for i in sorted(trace.on_path())]
    assert proof_text("coq", tuple(a["tactic"] for a in path_steps)) == r.proof
    assert [a["status"] for a in path_steps][-1] == "finished"
    assert all(a["status"] == "open" for a in path_steps[:-1])
    calls = [a["calls"] for a in trace.attempts]
    assert calls == sorted(calls) and calls[-1] == r.calls


def test_read_trace_groups_searches_written_to_one_file(coq: Any, tmp_path: Path) -> None:
    path = tmp_path / "both.jsonl"
    a = run(coq, "Theorem n1 : forall n : nat, n + 0 = n.", id="first", trace=path)
    b = run(coq, "Theorem h : 1 = 1.", "Require Import NoSuchLib.", id="second", trace=path)
    traces = read_trace(path)
    assert [t.id for t in traces] == ["first", "second"]
    assert traces[0].solved and not traces[1].solved
    assert traces[0].result["calls"] == a.calls  # type: ignore[index]
    assert traces[1].result["status"] == b.status == "error"  # type: ignore[index]
    assert traces[1].attempts == [] and traces[1].on_path() == set()
    assert all(x["problem"] == "first" for x in traces[0].attempts)
