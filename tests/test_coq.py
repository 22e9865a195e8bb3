"""CoqTop against real Coq: verdicts, failure modes from Coq's own messages, sessions."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from lemmata.provers.coq import CoqTop, parse_output, split_sentences
from lemmata.provers.coq.sentences import SentenceError
from lemmata.provers.result import FailureKind, Status

ARITH = "From Coq Require Import Arith Lia."
ADD0 = "Theorem add_0_r : forall n : nat, n + 0 = n."


def test_a_correct_proof_passes(coq) -> None:
    r = coq.check(
        ARITH,
        ADD0,
        "Proof.\n  intros n. induction n as [|n IH].\n  - reflexivity.\n  - simpl. rewrite IH. reflexivity.\nQed.",
    )
    assert r.status is Status.PASS and r.ok
    assert r.backend == "coq" and r.version.startswith("8.")
    assert r.axioms == () and r.failure_mode is None and r.elapsed_s > 0


@pytest.mark.parametrize(
    ("statement", "proof", "kind", "tactic", "where"),
    [
        ("Theorem t : 1 = 2.", "reflexivity.", FailureKind.TYPE_MISMATCH, "reflexivity", (1, 0)),
        (
            "Theorem t : 1 = 1.",
            "intros.\n  exact foo.",
            FailureKind.UNKNOWN_IDENTIFIER,
            "exact",
            (2, 8),
        ),
        (ADD0, "intros n. induction n.\n- reflexivity.", FailureKind.UNSOLVED_GOALS, None, None),
        (
            "Theorem t : forall n : nat, n = n.",
            "intros n m).",
            FailureKind.SYNTAX_ERROR,
            "intros",
            (1, 10),
        ),
        (
            "Theorem t : forall n : nat, n < 0.",
            "intros; lia.",
            FailureKind.TACTIC_FAILED,
            "intros",
            (1, 8),
        ),
        (
            "Theorem t : forall n : nat, n = 0.",
            "intros n. discriminate.",
            FailureKind.TACTIC_FAILED,
            "discriminate",
            (1, 10),
        ),
    ],
)
def test_failure_modes_from_real_coq_messages(coq, statement, proof, kind, tactic, where) -> None:
    r = coq.check(ARITH, statement, proof)
    assert r.status is Status.FAIL
    assert r.failure_mode.kind is kind, r.failure_mode
    assert r.failure_mode.tactic == tactic
    if where is not None:
        assert (r.failure_mode.line, r.failure_mode.column) == where
        assert r.messages and r.messages[0].severity == "error"


def test_unsolved_goals_are_reported(coq) -> None:
    r = coq.check(ARITH, ADD0, "intros n. induction n.\n- reflexivity.")
    assert r.goals and "S n + 0 = S n" in r.goals[-1]


@pytest.mark.parametrize(
    ("proof", "kind"),
    [
        ("admit.", FailureKind.USES_SORRY),
        ("intros. Admitted.", FailureKind.USES_SORRY),
        ("intros n. give_up.", FailureKind.USES_SORRY),
        ("trivial. Qed. Theorem add_0_r : True.", FailureKind.STATEMENT_CHANGED),
        ("Abort. Theorem add_0_r : True. exact I.", FailureKind.STATEMENT_CHANGED),
        ("Restart. auto.", FailureKind.STATEMENT_CHANGED),
        ("Axiom cheat : False. destruct cheat.", FailureKind.STATEMENT_CHANGED),
    ],
)
def test_proofs_that_cheat_fail(coq, proof, kind) -> None:
    r = coq.check(ARITH, ADD0, proof)
    assert r.status is Status.FAIL and r.failure_mode.kind is kind


def test_axioms_outside_the_standard_library_fail(coq) -> None:
    r = coq.check("Axiom cheat : forall P : Prop, P.", "Theorem t : 1 = 2.", "apply cheat.")
    assert r.status is Status.FAIL and r.failure_mode.kind is FailureKind.BAD_AXIOM
    assert r.axioms == ("Top.cheat",)
    classical = coq.check(
        "From Coq Require Import Classical.",
        "Theorem em : forall P : Prop, P \\/ ~ P.",
        "intro P. apply classic.",
    )
    assert classical.status is Status.PASS
    assert classical.axioms == ("Coq.Logic.Classical_Prop.classic",)


def test_a_header_that_does_not_load(coq) -> None:
    r = coq.check("From Coq Require Import NoSuchLibrary.", "Theorem t : True.", "exact I.")
    assert r.status is Status.UNAVAILABLE and r.failure_mode.kind is FailureKind.HEADER_ERROR
    assert "NoSuchLibrary" in r.failure_mode.message
    assert coq.check(ARITH, "Theorem t : True.", "exact I.").status is Status.PASS


def test_bad_statements(coq) -> None:
    assert (
        coq.check("", "Theorem t : Tru.", "exact I.").failure_mode.kind
        is FailureKind.UNKNOWN_IDENTIFIER
    )
    assert (
        coq.check("", "Definition t := 1.", "auto.").failure_mode.kind is FailureKind.SYNTAX_ERROR
    )
    assert (
        coq.check("", "Theorem t : True", "exact I.").failure_mode.kind is FailureKind.SYNTAX_ERROR
    )
    assert (
        coq.check("", "Theorem t : True.", "exact I").failure_mode.kind is FailureKind.SYNTAX_ERROR
    )


def test_a_looping_proof_times_out_and_coqtop_is_kept(coq) -> None:
    coq.check(ARITH, "Theorem warm : True.", "exact I.")
    starts = coq.process.starts
    start = time.monotonic()
    r = coq.check(ARITH, "Theorem t : True.", "let rec spin := idtac; spin in spin.", timeout=2)
    assert r.status is Status.TIMEOUT and r.failure_mode.kind is FailureKind.TIMEOUT
    assert r.failure_mode.sentence == "let rec spin := idtac; spin in spin."
    assert time.monotonic() - start < 3  # within the limit plus a second
    # Coq's own Timeout stopped it: the same coqtop, header loaded, checks the next proof.
    assert coq.check(ARITH, ADD0, "induction n; simpl; auto.").status is Status.PASS
    assert coq.process.starts == starts


def test_a_killed_coqtop_is_a_crash_and_comes_back(coq) -> None:
    coq.check(ARITH, "Theorem warm : True.", "exact I.")
    killer = threading.Timer(0.5, lambda: coq.process._proc.kill())
    killer.start()
    r = coq.check(ARITH, "Theorem t : True.", "let rec spin := idtac; spin in spin.", timeout=10)
    killer.join()
    assert r.status is Status.CRASH and r.failure_mode.kind is FailureKind.CRASH
    assert coq.check(ARITH, "Theorem t : True.", "exact I.").status is Status.PASS


def test_the_header_is_loaded_once_and_reused(coq) -> None:
    for i in range(5):
        assert coq.check(ARITH, f"Theorem t{i} : {i} + 0 = {i}.", "lia.").ok
    assert coq.process.starts == 1
    assert not Path(".lia.cache").exists()  # lia's cache stays off: nothing written where we run
    assert coq.check("", "Theorem u : True.", "exact I.").ok  # another header: a fresh start
    assert coq.process.starts == 2


def test_recycling_after_n_checks(coqtop_path) -> None:
    with CoqTop(coqtop_path, recycle_after=2) as coq:
        for i in range(5):
            assert coq.check("", f"Theorem t{i} : True.", "exact I.").ok
        assert coq.process.starts == 3


def test_fresh_process_mode_gives_the_same_verdicts(coqtop_path) -> None:
    with CoqTop(coqtop_path, reuse=False) as coq:
        assert coq.check(ARITH, ADD0, "induction n; simpl; auto.").ok
        assert coq.check(ARITH, ADD0, "reflexivity.").status is Status.FAIL
        assert coq.process.starts == 2 and not coq.process.alive


def test_session_goals_backtracking_and_bullets(coq) -> None:
    s = coq.open(ARITH, ADD0)
    assert s.root.goals == ("⊢ forall n : nat, n + 0 = n",)
    intro = s.run("intros n")
    assert intro.goals == ("n : nat\n⊢ n + 0 = n",)
    split = s.run("induction n as [|n IH]")
    assert split.goals == ("⊢ 0 + 0 = 0", "⊢ S n + 0 = S n")
    wrong = s.run("exact I")
    assert wrong.status == "error" and wrong.failure_mode.kind is FailureKind.TYPE_MISMATCH
    assert wrong.state == split.state  # a failed tactic leaves the state it ran from
    base = s.run("- reflexivity", state=split.state)
    assert base.goals == ("⊢ S n + 0 = S n",) and base.status == "open"
    done = s.run("- simpl. rewrite IH. reflexivity.")
    assert done.finished
    assert s.proof_of(done.state) == [
        "intros n.",
        "induction n as [|n IH].",
        "- reflexivity.",
        "- simpl. rewrite IH. reflexivity.",
    ]
    other = s.run("destruct n", state=intro.state)  # back to an earlier state
    assert len(other.goals) == 2
    assert s.run("Qed").failure_mode.kind is FailureKind.STATEMENT_CHANGED
    s.close()
    assert coq.check(ARITH, "Theorem after : True.", "exact I.").ok


def test_session_timeout_is_reported_and_the_session_goes_on(coq) -> None:
    s = coq.open(ARITH, ADD0)
    t = s.run("let rec spin := idtac; spin in spin", timeout=1)
    assert t.status == "timeout" and t.failure_mode.kind is FailureKind.TIMEOUT
    assert t.goals == s.root.goals  # the state it ran from
    assert coq.process.starts == 1  # Coq's own Timeout stopped it: no restart
    assert s.run("intros n; induction n; simpl; auto").finished


def test_sentence_splitter() -> None:
    text = 'Proof. (* a . comment *) rewrite Nat.add_comm. { auto. } 2: { lia. }\n- exact "x. y".\n** trivial. Qed.'
    assert [s.text for s in split_sentences(text)] == [
        "Proof.",
        "rewrite Nat.add_comm.",
        "{",
        "auto.",
        "}",
        "2: {",
        "lia.",
        "}",
        "-",
        'exact "x. y".',
        "**",
        "trivial.",
        "Qed.",
    ]
    with pytest.raises(SentenceError, match="never closed"):
        split_sentences("(* open comment")
    with pytest.raises(SentenceError, match="final '.'"):
        split_sentences("intros")


def test_output_parser_on_a_real_goal_display(coq) -> None:
    answer = coq.process
    coq.check(ARITH, "Theorem warm : True.", "exact I.")
    out = answer.send("Theorem p : forall a b : nat, a + b = b + a.", 10).output
    out = answer.send("intros a b.", 10).output
    parsed = parse_output(out)
    assert parsed.goals == ["a, b : nat\n⊢ a + b = b + a"]
    answer.send("Abort.", 10)
