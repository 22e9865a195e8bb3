"""Failure modes a search can condition on: the class, the failing sentence, its index and the
goals at the failure, from real Coq 8.16 runs and real Lean REPL transcripts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import SHARED

from lemmata.provers import failure_signature
from lemmata.provers.failure import classify_coq, classify_lean
from lemmata.provers.lean import LeanRepl, parse_response, split_transcript
from lemmata.provers.lean.protocol import goals_in_message
from lemmata.provers.result import FailureKind, FailureMode, Status

K = FailureKind
ARITH = "From Coq Require Import Arith Lia."
REALS = "From Coq Require Import Reals Lra. Open Scope R_scope."
FIXTURES = SHARED / "fixtures" / "lean-repl"
REPLAY = Path(__file__).resolve().parents[1] / "lean_replay.py"

# One real Coq failure per class: (header, statement, proof, kind, failing sentence, its index,
# the goals just before it).
COQ_CASES = {
    "wrong bullet": (
        ARITH,
        "Theorem t : True /\\ True.",
        "split. - idtac. - exact I.",
        K.STRUCTURE,
        "-",
        3,
        ("⊢ True",),
    ),
    "no such goal": (
        ARITH,
        "Theorem t : True /\\ True.",
        "split. - exact I. exact I.",
        K.STRUCTURE,
        "exact I.",
        3,
        ("⊢ True",),  # the unfocused goal the bullet should have named
    ),
    "brace closed early": (
        ARITH,
        "Theorem t : True /\\ True.",
        "split. { idtac. }",
        K.STRUCTURE,
        "}",
        3,
        ("⊢ True",),
    ),
    "name clash": (
        ARITH,
        "Theorem t : forall x y : nat, x = y -> y = x.",
        "intros x. intros x.",
        K.NAME_CLASH,
        "intros x.",
        1,
        ("x : nat\n⊢ forall y : nat, x = y -> y = x",),
    ),
    "not a product": (
        ARITH,
        "Theorem t : forall n : nat, n = n.",
        "intros n.\nintros m.",
        K.NOT_A_PRODUCT,
        "intros m.",
        1,
        ("n : nat\n⊢ n = n",),
    ),
    "unknown reference": (
        ARITH,
        "Theorem t : forall n : nat, n = n.",
        "Proof. intros n.\n  exact foo.",
        K.UNKNOWN_IDENTIFIER,
        "exact foo.",
        2,
        ("n : nat\n⊢ n = n",),
    ),
    "unification": (
        ARITH,
        "Theorem t : forall n : nat, n = n -> 1 = 2.",
        "intros n H. apply H.",
        K.TYPE_MISMATCH,
        "apply H.",
        1,
        ("n : nat\nH : n = n\n⊢ 1 = 2",),
    ),
    "no subterm to rewrite": (
        ARITH,
        "Theorem t : forall n m : nat, n = m -> 0 = 0.",
        "intros n m H. rewrite H.",
        K.TYPE_MISMATCH,
        "rewrite H.",
        1,
        ("n, m : nat\nH : n = m\n⊢ 0 = 0",),
    ),
    "lia finds no witness": (
        ARITH,
        "Theorem t : forall n : nat, n < 0.",
        "intros n. lia.",
        K.TACTIC_FAILED,
        "lia.",
        1,
        ("n : nat\n⊢ n < 0",),
    ),
    "lra finds no witness": (
        REALS,
        "Theorem t : forall x : R, x < 0.",
        "intros x. lra.",
        K.TACTIC_FAILED,
        "lra.",
        1,
        ("x : R\n⊢ x < 0",),
    ),
    "nra finds no witness": (
        REALS,
        "Theorem t : forall x : R, x * x < 0.",
        "intros x. nra.",
        K.TACTIC_FAILED,
        "nra.",
        1,
        ("x : R\n⊢ x * x < 0",),
    ),
    "no contradiction": (
        ARITH,
        "Theorem t : forall n : nat, n = 0.",
        "intros n. contradiction.",
        K.TACTIC_FAILED,
        "contradiction.",
        1,
        ("n : nat\n⊢ n = 0",),
    ),
    "goals left at Qed": (
        ARITH,
        "Theorem t : forall n : nat, n + 0 = n.",
        "intros n. induction n.\n- reflexivity.",
        K.UNSOLVED_GOALS,
        None,
        None,
        ("⊢ S n + 0 = S n",),
    ),
}


@pytest.mark.parametrize("case", COQ_CASES, ids=str)
def test_coq_failure_classes(coq, case: str) -> None:
    header, statement, proof, kind, sentence, index, goals = COQ_CASES[case]
    r = coq.check(header, statement, proof)
    fm = r.failure_mode
    assert r.status is Status.FAIL and fm is not None
    assert fm.kind is kind, fm
    assert (fm.sentence, fm.index) == (sentence, index)
    assert fm.goals == goals
    assert r.goals == goals


def test_coq_goals_at_the_failure_carry_every_hypothesis(coq) -> None:
    r = coq.check(
        ARITH,
        "Theorem t : forall a b : nat, a <= b -> b < a.",
        "intros a b Hab.\n  lia.",
    )
    fm = r.failure_mode
    assert fm.kind is K.TACTIC_FAILED and fm.tactic == "lia" and (fm.line, fm.column) == (2, 2)
    assert fm.goals == ("a, b : nat\nHab : a <= b\n⊢ b < a",)


def test_coq_timeouts_say_where(coq) -> None:
    spin = "let rec spin := idtac; spin in spin."
    r = coq.check(ARITH, "Theorem t : forall n : nat, n = n.", f"intros n. {spin}", timeout=2)
    assert r.status is Status.TIMEOUT and r.failure_mode.kind is K.TIMEOUT
    assert (r.failure_mode.sentence, r.failure_mode.index) == (spin, 1)
    assert r.failure_mode.goals == ("n : nat\n⊢ n = n",)
    # In a session Coq's own Timeout answers, and the session goes on.
    s = coq.open(ARITH, "Theorem u : forall n : nat, n = n.")
    t = s.run(spin, timeout=1)
    assert t.failure_mode.kind is K.TIMEOUT and t.failure_mode.message == "Timeout!"
    assert t.failure_mode.sentence == spin and t.failure_mode.goals == s.root.goals


def test_coq_header_errors_are_the_header(coq) -> None:
    r = coq.check("From Coq Require Import NoSuchLibrary.", "Theorem t : True.", "exact I.")
    assert r.status is Status.UNAVAILABLE and r.failure_mode.kind is K.HEADER_ERROR
    coq_text = r.failure_mode.message.split(": ", 1)[1]  # Coq's own words, after ours
    assert coq_text.startswith("Cannot find a physical path bound to logical path NoSuchLibrary")
    assert classify_coq(coq_text).kind is K.HEADER_ERROR


def test_coq_session_failures_say_where(coq) -> None:
    s = coq.open(ARITH, "Theorem add_0_r : forall n : nat, n + 0 = n.")
    s.run("intros n")
    split = s.run("induction n as [|n IH]")
    wrong = s.run("exact I")
    assert wrong.failure_mode.kind is K.TYPE_MISMATCH
    assert wrong.failure_mode.sentence == "exact I." and wrong.failure_mode.index == 2
    assert wrong.failure_mode.goals == split.goals == ("⊢ 0 + 0 = 0", "⊢ S n + 0 = S n")
    # The third sentence of a step fails: the goals it met are those after the first two.
    inner = s.run("- simpl. rewrite foo. auto.", state=split.state)
    fm = inner.failure_mode
    assert fm.kind is K.UNKNOWN_IDENTIFIER and fm.tactic == "rewrite"
    assert (fm.sentence, fm.index, fm.goals) == ("rewrite foo.", 4, ("⊢ 0 = 0",))
    assert inner.state == split.state  # and the step leaves the state it ran from
    clash = s.run("intros n", state=split.state)
    assert clash.failure_mode.kind is K.NOT_A_PRODUCT


def test_fail_is_a_proof_step_and_no_way_around_the_screen(coq) -> None:
    stmt = "Theorem t : forall x : R, x * x >= 0."
    assert coq.check(REALS, stmt, "intros x. Fail lra. nra.").status is Status.PASS
    assert coq.check(REALS, stmt, "intros x. Succeed nra. nra.").status is Status.PASS
    passing = coq.check(REALS, stmt, "intros x. Fail nra. nra.")  # nra does prove it
    assert passing.failure_mode.kind is K.TACTIC_FAILED
    assert passing.failure_mode.message == "The command has not failed!"
    assert passing.failure_mode.sentence == "Fail nra."
    refused = {
        "Fail Admitted.": K.USES_SORRY,
        "Fail Fail admit.": K.USES_SORRY,
        "exact I. Fail Qed.": K.STATEMENT_CHANGED,
        "exact I. Succeed Qed.": K.STATEMENT_CHANGED,
        "Fail Definition x := 1. exact I.": K.STATEMENT_CHANGED,
        "Fail Fail Axiom cheat : False. exact I.": K.STATEMENT_CHANGED,
    }
    for proof, kind in refused.items():
        r = coq.check(REALS, "Theorem u : True.", proof)
        assert r.status is Status.FAIL and r.failure_mode.kind is kind, proof
        assert r.failure_mode.sentence is not None and r.failure_mode.index is not None
    s = coq.open(REALS, stmt)
    assert s.run("Fail Admitted").failure_mode.kind is K.USES_SORRY
    assert s.run("Fail lra").status == "open"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("[Focus] Wrong bullet +: Expecting -.", K.STRUCTURE),
        ("[Focus] Wrong bullet -: No more goals.", K.STRUCTURE),
        ("[Focus] No such goal (2).", K.STRUCTURE),
        ("The proof is not focused", K.STRUCTURE),
        ("Incorrect number of goals (expected 2 tactics, was given 3).", K.STRUCTURE),
        ("Tactic failure: Incorrect number of goals (expected 2 tactics).", K.STRUCTURE),
        ("H is already used.", K.NAME_CLASH),
        ("The variable x is already declared.", K.NAME_CLASH),
        (
            "No quantified hypothesis named z in current goal even after head-reduction.",
            K.NOT_A_PRODUCT,
        ),
        ("The variable x was not found in the current environment.", K.UNKNOWN_IDENTIFIER),
        ("No such hypothesis: H0", K.UNKNOWN_IDENTIFIER),
        ("No such assumption.", K.TACTIC_FAILED),
        ("Tactic failure: congruence failed.", K.TACTIC_FAILED),
        ("Tactic failure: tauto failed.", K.TACTIC_FAILED),
        ("sauto failed", K.TACTIC_FAILED),
        ("Failed to progress.", K.TACTIC_FAILED),
        ("Cannot find a relation to rewrite.", K.TYPE_MISMATCH),
        ("Timeout!", K.TIMEOUT),
        (
            "Cannot find a physical path bound to logical path Arith.NoSuch with prefix Coq.",
            K.HEADER_ERROR,
        ),
        ("/tmp/lib/Bar.vo: premature end of file. Try to rebuild it.", K.HEADER_ERROR),
        ("Can't find file NoSuch.v on loadpath.", K.HEADER_ERROR),
        # Not reproduced here, but a message coqtop 8.16 carries (`strings coqtop`).
        ("Unable to locate library Foo.Bar.", K.HEADER_ERROR),
        ("(in proof t): Attempt to save an incomplete proof", K.UNSOLVED_GOALS),
    ],
)
def test_coq_messages_seen_in_8_16(text: str, kind: FailureKind) -> None:
    """Coq 8.16's words (recorded from coqtop 8.16.1) for cases the runs above don't cover."""
    assert classify_coq(text).kind is kind


# -- Lean: the REPL's own replies ------------------------------------------------------------


def reply(name: str, index: int):
    blocks = split_transcript((FIXTURES / f"{name}.expected.out").read_text())
    return parse_response(json.loads(blocks[index]))


def request(name: str, index: int) -> dict:
    return json.loads(split_transcript((FIXTURES / f"{name}.in").read_text())[index], strict=False)


def judged(name: str, index: int):
    """``LeanRepl.judge`` on a recorded reply to ``statement := proof``, with the statement
    and proof cut from the recorded command."""
    statement, proof = request(name, index)["cmd"].split(" := ", 1)
    repl = LeanRepl([sys.executable, str(REPLAY), str(FIXTURES / f"{name}.expected.out")])
    return repl.judge(reply(name, index), "t", statement, proof=proof)


@pytest.mark.parametrize(
    ("name", "index", "kind", "sentence", "at", "goals"),
    [
        (
            "Mathlib/test/placeholder_synthesis",
            1,
            K.TYPE_MISMATCH,
            "simpa [] using h _",
            1,
            ("n : ℕ\nh : n ≠ 2\n⊢ n = 2",),
        ),
        (
            "Mathlib/test/H20231115_3",
            1,
            K.UNSOLVED_GOALS,
            None,  # at the `by`: the goals are left at the end, as at Coq's Qed
            None,
            ("case zero\n⊢ 0 + 1 > 0", "case succ\nx : Nat\nhx : x + 1 > x\n⊢ x + 1 + 1 > x + 1"),
        ),
        ("no_goal_sorry_2", 0, K.STRUCTURE, "sorry", 1, ()),
        ("no_goal_sorry", 0, K.TYPE_MISMATCH, "have h : set Nat := by sorry", 0, ()),
        ("self_proof_check", 0, K.TACTIC_FAILED, "exact?", 0, ()),
        (
            "incomplete",
            1,
            K.UNSOLVED_GOALS,
            "{ apply Nat.succ }",
            1,
            ("case pos\nx : Bool\nh✝ : x = true\n⊢ Nat",),
        ),
    ],
)
def test_lean_check_failures_from_transcripts(name, index, kind, sentence, at, goals) -> None:
    r = judged(name, index)
    fm = r.failure_mode
    assert r.status is Status.FAIL and fm.kind is kind, fm
    assert (fm.sentence, fm.index, fm.goals) == (sentence, at, goals)


def test_lean_goals_before_a_tactic_come_from_tactic_info() -> None:
    """A reply with ``tactics`` (allTactics) gives the goals before the failing tactic."""
    raw = json.loads(split_transcript((FIXTURES / "self_proof_check.expected.out").read_text())[0])
    error = raw["messages"][0]
    raw["tactics"] = [  # the shape of self_proof_check's allTactics reply, at the error
        {"tactic": "exact?", "proofState": 0, "goals": "⊢ False", "pos": error["pos"]}
    ]
    repl = LeanRepl([sys.executable, str(REPLAY), str(FIXTURES / "readme.expected.out")])
    r = repl.judge(parse_response(raw), "ex", "theorem ex : False", proof="by exact?")
    assert r.failure_mode.sentence == "exact?" and r.failure_mode.goals == ("⊢ False",)


def excerpt(tmp_path: Path, name: str, indexes: list[int], *, strict: bool = True) -> list[str]:
    """A replay program for some replies of a transcript; ``strict``: it checks each request
    against the recorded one."""
    out, ins = (
        split_transcript((FIXTURES / f"{name}{ext}").read_text())
        for ext in (".expected.out", ".in")
    )
    (tmp_path / "x.expected.out").write_text("\n\n".join(out[i] for i in indexes) + "\n")
    (tmp_path / "x.in").write_text("\n\n".join(ins[i] for i in indexes) + "\n")
    argv = [sys.executable, str(REPLAY), str(tmp_path / "x.expected.out")]
    return [*argv, "--requests", str(tmp_path / "x.in")] if strict else argv


def test_lean_session_failures_from_transcripts(tmp_path: Path) -> None:
    repl = LeanRepl(excerpt(tmp_path, "invalid_tactic", [0, 1]))
    s = repl.open("", "theorem my_theorem (x : Nat) : x = x")
    bad = s.run("exact my_fake_premise")
    fm = bad.failure_mode
    assert bad.status == "error" and fm.kind is K.UNKNOWN_IDENTIFIER and fm.tactic == "exact"
    assert (fm.sentence, fm.index, fm.goals) == ("exact my_fake_premise", 0, ("x : Nat\n⊢ x = x",))
    repl.close()

    repl = LeanRepl(excerpt(tmp_path, "Mathlib/test/exact", [0, 3, 4]))
    s = repl.open("import Mathlib", "theorem test : 3 = 7")
    fm = s.run("exact?").failure_mode
    assert fm.kind is K.TACTIC_FAILED and (fm.sentence, fm.goals) == ("exact?", ("⊢ 3 = 7",))
    repl.close()


def test_lean_session_failure_index_counts_the_steps_before(tmp_path: Path) -> None:
    """app_type_mismatch2 in tactic mode: two tactics succeed, the third is refused by the
    kernel. (The transcript opened the goal with ``:= sorry``, ``open`` sends ``:= by sorry``:
    the replies are replayed without checking the requests.)"""
    repl = LeanRepl(excerpt(tmp_path, "app_type_mismatch2", [1, 2, 3, 4], strict=False))
    s = repl.open("", "example : 1 = 0")
    assert s.root.goals == ("⊢ 1 = 0",)
    s.run("cases 1")
    before = s.run("rfl")
    have = "have: true := by\n    apply ?succ\n    trivial"
    step = s.run(have)
    fm = step.failure_mode
    assert step.status == "error" and fm.kind is K.TYPE_MISMATCH
    assert (fm.sentence, fm.index, fm.goals) == (have, 2, before.goals)
    assert before.goals == ("case succ\nn✝ : Nat\n⊢ n✝ + 1 = 0",)
    repl.close()


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # Lean's wording where no transcript has the case (from Lean 4's sources and logs).
        (
            "Tactic `introN` failed: There are no additional binders or `let` bindings in the "
            "goal to introduce\n\nx : Nat\n⊢ True",
            K.NOT_A_PRODUCT,
        ),
        ("tactic 'introN' failed, insufficient number of binders", K.NOT_A_PRODUCT),
        ("'t' has already been declared", K.NAME_CLASH),
        ("unknown module prefix 'Foo'\n\nNo directory 'Foo' or file 'Foo.olean'", K.HEADER_ERROR),
        ("unknown package 'Mathlib'", K.HEADER_ERROR),
        (
            "linarith failed to find a contradiction\ncase a\nx : ℝ\na✝ : x ≥ 1\n⊢ False",
            K.TACTIC_FAILED,
        ),
        ("omega could not prove the goal:\na possible counterexample", K.TACTIC_FAILED),
        (
            "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000)",
            K.TIMEOUT,
        ),
        # The goal after the verdict may hold any word: the first line decides.
        ("unsolved goals\ntimeout : Nat\n⊢ timeout = 0", K.UNSOLVED_GOALS),
    ],
)
def test_lean_messages_without_a_transcript(text: str, kind: FailureKind) -> None:
    assert classify_lean(text).kind is kind


@pytest.mark.parametrize(
    ("name", "index", "kind"),
    [
        ("no_goal_sorry_2", 0, K.STRUCTURE),
        ("no_goal_sorry", 0, K.TYPE_MISMATCH),  # "type expected"; its 2nd: "Case tag ..."
        ("dup_msg", 2, K.UNKNOWN_IDENTIFIER),
        ("unfinished_tactic_block", 0, K.UNSOLVED_GOALS),
        ("app_type_mismatch", 0, K.UNSOLVED_GOALS),  # (kernel) declaration has metavariables
        ("app_type_mismatch2", 0, K.TYPE_MISMATCH),
        ("app_type_mismatch2", 6, K.TYPE_MISMATCH),  # Tactic `apply` failed: could not unify
        ("self_proof_rw", 0, K.TACTIC_FAILED),  # fail to show termination
        ("Mathlib/test/exact", 4, K.TACTIC_FAILED),
        ("unknown_tactic", 1, K.SYNTAX_ERROR),
        ("line_breaks", 0, K.UNSOLVED_GOALS),
    ],
)
def test_lean_transcript_messages_by_class(name: str, index: int, kind: FailureKind) -> None:
    r = reply(name, index)
    text = r.message if hasattr(r, "message") else r.errors[0].text
    assert classify_lean(text).kind is kind
    if name == "no_goal_sorry":
        assert classify_lean(r.errors[1].text).kind is K.STRUCTURE


def test_goals_in_lean_messages() -> None:
    tactic_error = reply("app_type_mismatch2", 6).message
    assert goals_in_message(tactic_error) == ("n✝ : Nat\n⊢ true = true",)
    assert goals_in_message("type expected, got\n  (set Nat : ?m.3 PUnit)") == ()


# -- signatures ------------------------------------------------------------------------------


def test_signatures_ignore_numbers_and_fresh_names(coq) -> None:
    a = coq.check("", "Theorem t : 1 = 2.", "reflexivity.").failure_mode
    b = coq.check("", "Theorem t : 3 = 5.", "reflexivity.").failure_mode
    assert a.message != b.message and failure_signature(a) == failure_signature(b)
    clash = "Theorem t : forall a b : nat, a = b."
    h0 = coq.check("", clash, "intros H0. intros H0.").failure_mode
    h1 = coq.check("", clash, "intros H1. intros H1.").failure_mode
    assert failure_signature(h0) == failure_signature(h1)
    assert failure_signature(h0) != failure_signature(a)
    lean = [
        classify_lean("unsolved goals\nn✝ : ℕ\na✝ : n✝ = n✝\n⊢ n✝ + 1 = n✝ + 1"),
        classify_lean("unsolved goals\nm✝¹ : ℕ\nh✝ : m✝¹ = m✝¹\n⊢ m✝¹ + 2 = m✝¹ + 2"),
        classify_lean("Lean error:\n<input>:1:1: unknown tactic"),
        classify_lean("Lean error:\n<input>:3:7: unknown tactic"),
    ]
    assert failure_signature(lean[0]) == failure_signature(lean[1])
    assert failure_signature(lean[2]) == failure_signature(lean[3])
    assert failure_signature(lean[0]) != failure_signature(lean[2])


def test_signatures_differ_across_kinds() -> None:
    same_text = "x"
    kinds = [K.STRUCTURE, K.NAME_CLASH, K.TACTIC_FAILED, K.TYPE_MISMATCH, K.VACUOUS]
    sigs = {failure_signature(FailureMode(k, same_text)) for k in kinds}
    assert len(sigs) == len(kinds)
    assert failure_signature(FailureMode(K.VACUOUS, "hypotheses contradict")).startswith("vacuous:")
