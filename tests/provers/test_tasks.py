"""Reading Coq and Lean proving tasks out of people's words (used by the agent's router); sum
identities are tested in ``test_identity_text.py``."""

from __future__ import annotations

import pytest

from lemmata.provers.tasks import coq_from_text, identity_from_text, lean_from_text, split_identity


def test_coq_statements_with_and_without_a_proof() -> None:
    stmt = coq_from_text("Prove in Coq: forall n : nat, n + 0 = n")
    assert stmt == {"statement": "Theorem goal : forall n : nat, n + 0 = n.", "backend": "coq"}
    given = coq_from_text(
        "Require Import Arith. Lemma plus_0 : forall n : nat, n + 0 = n. "
        "Proof. induction n; auto. Qed."
    )
    assert given is not None
    assert given["statement"] == "Lemma plus_0 : forall n : nat, n + 0 = n."
    assert given["proof"] == "Proof. induction n; auto. Qed."
    assert given["header"] == "Require Import Arith."
    dotted = coq_from_text("Theorem r : 1.5 <= 2.0. ")
    assert dotted is not None and dotted["statement"] == "Theorem r : 1.5 <= 2.0."


def test_lean_statements() -> None:
    found = lean_from_text("Does this Lean proof go through? theorem t : 1 + 1 = 2 := by norm_num")
    assert found == {
        "statement": "theorem t : 1 + 1 = 2 :=",
        "backend": "lean",
        "proof": "by norm_num",
    }
    open_goal = lean_from_text("Find a proof: theorem t (n : ℕ) : n * 1 = n := by sorry")
    assert open_goal == {"statement": "theorem t (n : ℕ) : n * 1 = n :=", "backend": "lean"}


@pytest.mark.parametrize(
    "text",
    [
        "Prove your worth to the team",
        "What is the sum of my expenses this month?",
        "Remember the theorem we talked about?",
        "Write a poem about the number 2",
    ],
)
def test_words_without_a_task_give_nothing(text: str) -> None:
    assert identity_from_text(text) is None
    assert coq_from_text(text) is None
    assert lean_from_text(text) is None


def test_the_identity_reader_is_reachable_from_tasks() -> None:
    found = identity_from_text("Show that the sum of k for k from 1 to n equals n(n+1)/2.")
    assert found == {"statement": "Sum(k, (k, 1, n)) = n*(n+1)/2", "method": "wz"}
    assert split_identity(found["statement"]) == ("Sum(k, (k, 1, n))", "n*(n+1)/2")
