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


def test_coq_tasks_with_prose_definitions_and_drafts_around_the_statement() -> None:
    # a keyword in the person's question is not the statement
    asked = coq_from_text(
        "Is Remark a keyword too? verify: Remark le_refl' : forall n : nat, n <= n. "
        "Proof. auto. Qed."
    )
    assert asked is not None and asked["statement"] == "Remark le_refl' : forall n : nat, n <= n."
    # a bare statement ends at its full stop: the request after it is not part of it
    bare = coq_from_text("lemma: forall n : nat, n * 1 = n. can you prove it")
    assert bare is not None and bare["statement"] == "Theorem goal : forall n : nat, n * 1 = n."
    # the definition the statement uses is its header
    defined = coq_from_text(
        "Does this compile? Definition double (n : nat) : nat := n + n. "
        "Lemma d0 : double 0 = 0. Proof. reflexivity. Qed."
    )
    assert defined is not None
    assert defined["header"] == "Definition double (n : nat) : nat := n + n."
    # a draft that ends in Admitted is the proof to finish when the person asks for that, and
    # no proof otherwise
    draft = "Lemma z : forall n : nat, 0 + n = n. Proof. intros n. Admitted."
    finish = coq_from_text("Please finish my partial proof: " + draft)
    assert finish is not None and finish["proof"] == "Proof. intros n. Admitted."
    plain = coq_from_text("Prove this: " + draft)
    assert plain is not None and "proof" not in plain


def test_lean_imports_are_the_header_and_a_comment_is_no_proof() -> None:
    found = lean_from_text("Lean 4: import Mathlib theorem t (a : ℤ) : a + 0 = a := by simp")
    assert found is not None and found["header"] == "import Mathlib"
    asked = lean_from_text("lean: theorem t (p : Prop) : p → p := -- prove this please")
    assert asked == {"statement": "theorem t (p : Prop) : p → p :=", "backend": "lean"}


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        # an em dash before the request, a middle dot for a product
        (
            "∑_{k=0}^{n} C(n,k)·3^k = 4^n — can you show it?",
            "Sum(binomial(n,k)*3**k, (k, 0, n)) = 4**n",
        ),
        # Python's math.comb
        (
            "sum(comb(n, k) for k in range(n + 1)) == 2**n -- for all n",
            "Sum(binomial(n, k), (k, 0, n)) = 2**n",
        ),
        # the range first, the summand straight after it
        ("Σ k=1..n k^3 = (n(n+1)/2)^2", "Sum(k**3, (k, 1, n)) = (n*(n+1)/2)**2"),
        # a factorial on the right-hand side
        (
            "sum_{k=0}^{n} k * k! = (n+1)! - 1",
            "Sum(k * factorial(k), (k, 0, n)) = factorial(n+1) - 1",
        ),
    ],
)
def test_sum_identities_in_more_notations(text: str, statement: str) -> None:
    found = identity_from_text(text)
    assert found is not None and found["statement"] == statement, found


def test_a_statement_in_code_marks_ends_at_the_closing_mark() -> None:
    found = coq_from_text(
        "Could you prove `forall (A : Type) (l : list A), rev (rev l) = l` for me? It's for a talk."
    )
    assert found is not None
    assert found["statement"] == "Theorem goal : forall (A : Type) (l : list A), rev (rev l) = l."
    found = coq_from_text("prove in Coq forall n : nat, n * 1 = n for me")
    assert found is not None and found["statement"] == "Theorem goal : forall n : nat, n * 1 = n."
