"""The LeanDojo backend's session logic.

LeanDojo needs a Lean toolchain and a traced repository, neither of which exists here, so these
tests drive LeanDojoSession with a FAKE `lean_dojo` module that has LeanDojo's result types and
answers from a table. The fake is labelled as such and lives only in this file.
"""

from __future__ import annotations

from dataclasses import dataclass

from lemmata.provers.lean.dojo import LeanDojoSession
from lemmata.provers.result import FailureKind


class FakeLeanDojo:
    """Stands in for the `lean_dojo` module: TacticState, ProofFinished, LeanError, ... ."""

    @dataclass(frozen=True)
    class TacticState:
        pp: str
        id: int

    @dataclass(frozen=True)
    class ProofFinished:
        tactic_state_id: int
        message: str | None = None

    @dataclass(frozen=True)
    class LeanError:
        error: str

    @dataclass(frozen=True)
    class ProofGivenUp:
        pass

    class DojoTacticTimeoutError(Exception):
        pass

    class DojoCrashError(Exception):
        pass


class FakeDojo:
    """Answers run_tac from a table keyed by (state id, tactic)."""

    def __init__(self, table):
        self.table = table
        self.exited = False

    def __enter__(self):
        return self, FakeLeanDojo.TacticState("a b c : Nat\n⊢ a + b + c = a + c + b", 0)

    def __exit__(self, *exc):
        self.exited = True

    def run_tac(self, state, tactic):
        answer = self.table[(state.id, tactic)]
        if isinstance(answer, Exception):
            raise answer
        return answer


L = FakeLeanDojo
TABLE = {
    (0, "rw [add_assoc]"): L.TacticState("a b c : Nat\n⊢ a + (b + c) = a + c + b", 1),
    (0, "exact foo"): L.LeanError("unknown identifier 'foo'"),
    (0, "sorry"): L.ProofGivenUp(),
    (0, "spin"): L.DojoTacticTimeoutError(),
    (1, "omega"): L.ProofFinished(2),
    (1, "split"): L.TacticState("case left\n⊢ P\n\ncase right\n⊢ Q", 3),
}


def test_session_steps_failures_and_backtracking() -> None:
    dojo = FakeDojo(TABLE)
    s = LeanDojoSession(dojo, FakeLeanDojo)
    assert s.root.goals == ("a b c : Nat\n⊢ a + b + c = a + c + b",)
    err = s.run("exact foo")
    assert (
        err.status == "error"
        and err.failure_mode.kind is FailureKind.UNKNOWN_IDENTIFIER
        and err.state == 0
    )
    assert s.run("sorry").failure_mode.kind is FailureKind.USES_SORRY
    assert s.run("spin").status == "timeout"
    step = s.run("rw [add_assoc]")
    assert step.goals == ("a b c : Nat\n⊢ a + (b + c) = a + c + b",)
    two = s.run("split", state=step.state)
    assert len(two.goals) == 2
    done = s.run("omega", state=step.state)  # back to state 1
    assert done.finished and s.proof_of(done.state) == ["rw [add_assoc]", "omega"]
    s.close()
    assert dojo.exited
