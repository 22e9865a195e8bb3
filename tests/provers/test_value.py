"""The value model (provers/refine/value.py), trained on the traces of real searches on real
Coq: its features, what it learns from them, saving and loading it, and the shipped model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lemmata.provers import CoqTop
from lemmata.provers.refine.backend import scope_of
from lemmata.provers.refine.goal import parse_goal
from lemmata.provers.refine.policy import Action, NodeView
from lemmata.provers.refine.search import SearchConfig, search
from lemmata.provers.refine.trace import ProblemTrace, read_trace
from lemmata.provers.refine.value import (
    DEFAULT_MODEL,
    FEATURE_DIM,
    ValueScorer,
    featurize,
    load_scorer,
    train,
)
from lemmata.provers.result import FailureKind, FailureMode

REALS = "Require Import Reals. Open Scope R_scope."
PROBLEMS = [
    ("bound", "Theorem bound : forall x : R, 0 <= x -> x <= 1 -> x * x <= 1.", REALS),
    ("subst", "Theorem subst : forall x y : R, x = y -> y = 2 -> x * x = 4.", REALS),
    ("abs", "Theorem abs : forall x : R, Rabs (x - 1) <= 2 -> x <= 3.", REALS),
    ("succ", "Theorem succ : forall n m : nat, n < m -> n + 1 <= m.", ""),
]
# Attempts the model ranks: tactic runs (not whole-proof checks, repairs or model requests).
RANKED = ("error", "open", "duplicate", "timeout", "finished")


@pytest.fixture(scope="module")
def traces(coqtop_path: str, tmp_path_factory: pytest.TempPathFactory) -> list[ProblemTrace]:
    path = tmp_path_factory.mktemp("traces") / "run.jsonl"
    config = SearchConfig(budget_calls=30, budget_seconds=30, automation=False)
    with CoqTop(coqtop_path, timeout_s=20) as coq:
        for pid, statement, header in PROBLEMS:
            search(coq, statement, header, id=pid, config=config, trace=path)
    found = read_trace(path)
    assert [t.id for t in found] == [p[0] for p in PROBLEMS]
    return found


@pytest.fixture(scope="module")
def trained(
    traces: list[ProblemTrace], tmp_path_factory: pytest.TempPathFactory
) -> tuple[ValueScorer, Path, Any]:
    out = tmp_path_factory.mktemp("model") / "value.pt"
    scorer, report = train(traces, out, epochs=40, seed=0)
    return scorer, out, report


def ranked(trace: ProblemTrace) -> list[tuple[int, dict[str, Any]]]:
    return [(i, a) for i, a in enumerate(trace.attempts) if a["status"] in RANKED]


def score(scorer: ValueScorer, trace: ProblemTrace, rec: dict[str, Any]) -> float:
    """The scorer's rating of a recorded attempt, asked as the search asks it: the node (its
    goal, open goals and failure) and the action."""
    condition = rec.get("condition")
    node = NodeView(
        "coq",
        parse_goal(rec["goal"], scope_of(trace.problem["header"])),
        rec["goals_before"],
        FailureMode(FailureKind(condition), "") if condition else None,
    )
    action = Action(rec["tactic"], rec["family"], rec["prior"], rec["reacting_to"])
    return scorer(node, action, rec["depth"])


def test_every_recorded_attempt_has_the_declared_number_of_features(
    traces: list[ProblemTrace],
) -> None:
    rows = [featurize(a) for t in traces for _, a in ranked(t)]
    assert rows and all(len(x) == FEATURE_DIM for x in rows)
    assert len(featurize({})) == FEATURE_DIM  # a record missing every field still featurizes
    # Two different actions at one node are told apart.
    first = ranked(traces[0])
    node = first[-1][1]["node"]
    here = [featurize(a) for _, a in first if a["node"] == node]
    assert len(here) >= 2 and here[0] != here[-1]


def test_the_model_ranks_what_proved_above_what_failed_at_the_same_node(
    traces: list[ProblemTrace], trained: tuple[ValueScorer, Path, Any]
) -> None:
    scorer = trained[0]
    pairs = 0
    for t in traces:
        assert t.solved, t.id
        path = t.on_path()
        for i, good in ranked(t):
            if i not in path:
                continue
            for _, bad in ranked(t):
                if bad["node"] == good["node"] and bad["status"] == "error":
                    pairs += 1
                    assert score(scorer, t, good) > score(scorer, t, bad), (good, bad)
    assert pairs >= 3  # lra failed before nra, split_Rabs... proved: enough to mean something
    scores = [score(scorer, t, a) for t in traces for _, a in ranked(t)]
    assert all(0.0 < s < 1.0 for s in scores)


def test_the_report_counts_what_it_learned_from(
    traces: list[ProblemTrace], trained: tuple[ValueScorer, Path, Any]
) -> None:
    report = trained[2]
    attempts = sum(len(ranked(t)) for t in traces)
    assert report.examples == attempts and report.problems == len(PROBLEMS)
    assert 0 < report.positives < attempts
    assert str(report).startswith(f"trained on {attempts} attempts")
    assert str(trained[1]) in str(report)


def test_a_saved_model_loads_and_scores_the_same(
    traces: list[ProblemTrace], trained: tuple[ValueScorer, Path, Any]
) -> None:
    scorer, out, _ = trained
    loaded = load_scorer(out)
    assert loaded.name == "value:value.pt"
    for t in traces:
        for _, a in ranked(t):
            assert score(loaded, t, a) == pytest.approx(score(scorer, t, a), abs=1e-6)


def test_a_missing_or_damaged_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.pt"
    with pytest.raises(ValueError, match="nowhere.pt: no such value model"):
        load_scorer(missing)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"this is not a torch file\n" * 20)
    with pytest.raises(ValueError, match="garbage.pt: not a value model.*lemmata prove-train"):
        load_scorer(garbage)


def test_a_model_of_another_feature_version_is_refused(tmp_path: Path) -> None:
    import torch

    old = tmp_path / "old.pt"
    torch.save({"version": 0, "dim": FEATURE_DIM - 1, "state_dict": {}}, old)
    with pytest.raises(ValueError, match="old.pt: value model of another feature version"):
        load_scorer(old)


def test_training_on_traces_without_attempts_says_so(traces: list[ProblemTrace]) -> None:
    empty = [ProblemTrace(t.problem, [], t.result) for t in traces]
    with pytest.raises(ValueError, match="no attempts to learn from"):
        train(empty)


@pytest.mark.skipif(
    not DEFAULT_MODEL.exists(), reason=f"the shipped value model is not there yet: {DEFAULT_MODEL}"
)
def test_the_shipped_model_loads_and_scores(traces: list[ProblemTrace]) -> None:
    from lemmata.provers.refine.value import default_scorer

    scorer = default_scorer()
    scores = [score(scorer, t, a) for t in traces for _, a in ranked(t)]
    assert scores and all(0.0 < s < 1.0 for s in scores)
    assert len(set(scores)) > 1  # it tells attempts apart


def test_a_failure_class_added_after_the_shipped_weights_reads_as_other() -> None:
    # The taxonomy grows (the soundness verdicts came after the shipped weights); the features
    # must keep their width, or the shipped model stops loading.
    from lemmata.provers.refine import value

    assert set(value._KINDS) <= {k.value for k in FailureKind}
    assert "other" in value._KINDS
    base: dict[str, Any] = {"features": {}, "family": "closer", "tactic": "lia."}
    new_kinds = [k.value for k in FailureKind if k.value not in value._KINDS]
    new_kinds.append("a_class_of_a_later_version")
    for kind in new_kinds:
        got = featurize({**base, "condition": kind})
        assert len(got) == FEATURE_DIM
        assert got == featurize({**base, "condition": "other"})
