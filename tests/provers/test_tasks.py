"""Reading proving tasks out of people's words (used by the agent's router)."""

from __future__ import annotations

import pytest
import sympy as sp

from lemmata.provers.tasks import coq_from_text, identity_from_text, lean_from_text, split_identity


@pytest.mark.parametrize(
    ("text", "lhs", "rhs"),
    [
        ("prove that sum_{k=0}^{n} binomial(n,k) = 2^n", "Sum(binomial(n,k), (k, 0, n))", "2**n"),
        (
            "Show that the sum of binomial(n, k) for k from 0 to n is 2^n.",
            "Sum(binomial(n, k), (k, 0, n))",
            "2**n",
        ),
        ("Sum(k, (k, 0, n)) = n*(n+1)/2", "Sum(k, (k, 0, n))", "n*(n+1)/2"),
        ("∑_{k=0}^{n} k = n(n+1)/2 for all n", "Sum(k, (k, 0, n))", "n*(n+1)/2"),
        (r"verify \sum_{k=0}^{n} \binom{n}{k}^2 = \binom{2n}{n}", None, None),
    ],
)
def test_identities_in_several_notations(text: str, lhs: str | None, rhs: str | None) -> None:
    found = identity_from_text(text)
    assert found is not None and found["method"] == "wz"
    parts = split_identity(found["statement"])
    assert parts is not None
    if lhs is not None:
        assert parts == (lhs, rhs)
    # whatever the notation, the two sides parse as sympy expressions
    n = sp.Symbol("n")
    for side in parts:
        sp.sympify(side, locals={"n": n})


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
