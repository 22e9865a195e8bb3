"""The ``Verifier`` protocol: whole-proof checks and incremental, tactic-level sessions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from lemmata.provers.result import FailureMode, Message, VerifyResult

__all__ = [
    "ProofSession",
    "SessionStates",
    "StepResult",
    "Verifier",
    "failed_step",
    "path_to",
    "position_of",
]

StepStatus = Literal["open", "finished", "error", "timeout", "crash"]


@dataclass(frozen=True)
class StepResult:
    """The state after one tactic: its id (to run from or backtrack to), the goals left,
    and, when the tactic failed, why. A failed tactic leaves the state it ran from."""

    state: int
    goals: tuple[str, ...]
    status: StepStatus
    messages: tuple[Message, ...] = ()
    failure_mode: FailureMode | None = None
    tactic: str | None = None
    parent: int | None = None
    extra: dict[str, object] = field(default_factory=dict, compare=False)

    @property
    def finished(self) -> bool:
        return self.status == "finished"

    @property
    def failed(self) -> bool:
        return self.status in ("error", "timeout", "crash")


@runtime_checkable
class ProofSession(Protocol):
    """A goal opened for tactic-by-tactic work. Every state stays reachable: ``run`` takes
    the state to run from, so a search can backtrack to any earlier one."""

    root: StepResult

    def run(
        self, tactic: str, state: int | None = None, timeout: float | None = None
    ) -> StepResult: ...

    def close(self) -> None: ...


@runtime_checkable
class Verifier(Protocol):
    """A proof checker. Results are values (:class:`VerifyResult`); exceptions are kept for
    bugs in our own code."""

    backend: str

    def version(self) -> str: ...

    def check(
        self, header: str, statement: str, proof: str, timeout: float | None = None
    ) -> VerifyResult: ...

    def open(self, header: str, statement: str, timeout: float | None = None) -> ProofSession: ...

    def close(self) -> None: ...


def position_of(text: str, offset: int) -> tuple[int, int]:
    """``(line, column)`` of a character offset: line 1-based, column 0-based (Lean's way)."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return line, column


def path_to(states: dict[int, StepResult], state: int) -> list[str]:
    """The tactics that lead from a session's root to ``state``."""
    path = []
    step = states[state]
    while step.parent is not None and step.tactic is not None:
        path.append(step.tactic)
        step = states[step.parent]
    return path[::-1]


def failed_step(
    here: StepResult,
    status: StepStatus,
    failure: FailureMode,
    tactic: str | None,
    messages: tuple[Message, ...] = (),
) -> StepResult:
    """What a tactic that failed returns: the state it ran from, with its goals, and why."""
    return StepResult(here.state, here.goals, status, messages, failure, tactic, here.state)


class SessionStates:
    """The bookkeeping every :class:`ProofSession` shares: each state reached, by id, and the
    latest one, which ``run`` starts from when no state is named."""

    def __init__(self, root: StepResult) -> None:
        self.root = root
        self.states: dict[int, StepResult] = {root.state: root}
        self.current = root.state

    def _start(self, state: int | None) -> StepResult:
        start = self.current if state is None else state
        if start not in self.states:
            raise KeyError(f"unknown state {start}; known: {sorted(self.states)}")
        return self.states[start]

    def _record(self, step: StepResult, *, advance: bool = True) -> StepResult:
        self.states[step.state] = step
        if advance:
            self.current = step.state
        return step

    def proof_of(self, state: int) -> list[str]:
        """The tactics that lead from the root to ``state``."""
        return path_to(self.states, state)
