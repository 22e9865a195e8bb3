"""LeanDojo as a second Lean backend, for theorems of a traced repository (extra ``lean``).

LeanDojo names a theorem by repository, file and full name rather than by its text, so this
backend offers the tactic-level :class:`~lemmata.provers.base.ProofSession` over one such
theorem, the interface a proof search uses::

    session = LeanDojoSession.open("https://github.com/yangky11/lean4-example", "COMMIT",
                                   "Lean4Example.lean", "hello_world")
    step = session.run("rw [add_assoc, add_comm b, ←add_assoc]")
    step.finished

It needs ``pip install 'lemmata[lean]'`` and a Lean toolchain; the repository is traced by
LeanDojo on first use.
"""

from __future__ import annotations

from typing import Any

from lemmata.deps import require_extra
from lemmata.provers.base import SessionStates, StepResult, failed_step
from lemmata.provers.failure import classify_lean
from lemmata.provers.result import FailureKind, FailureMode, Message

__all__ = ["LeanDojoSession"]


def _goals(state: Any) -> tuple[str, ...]:
    text = str(getattr(state, "pp", "") or "")
    return tuple(g for g in text.split("\n\n") if g.strip())


class LeanDojoSession(SessionStates):
    """A theorem opened in LeanDojo's ``Dojo``; states are LeanDojo's ``TacticState`` ids."""

    def __init__(self, dojo_cm: Any, module: Any) -> None:
        self._cm = dojo_cm
        self._ld = module
        self.dojo, init = dojo_cm.__enter__()
        self._states: dict[int, Any] = {init.id: init}
        super().__init__(StepResult(init.id, _goals(init), "open"))

    @classmethod
    def open(
        cls, repo_url: str, commit: str, file_path: str, full_name: str, timeout_s: int = 600
    ) -> LeanDojoSession:
        """Open ``full_name`` from ``file_path`` of the repository at ``commit``."""
        require_extra("lean", "the LeanDojo backend")
        import lean_dojo

        repo = lean_dojo.LeanGitRepo(repo_url, commit)
        theorem = lean_dojo.Theorem(repo, file_path, full_name)
        return cls(lean_dojo.Dojo(theorem, timeout=timeout_s), lean_dojo)

    def run(
        self, tactic: str, state: int | None = None, timeout: float | None = None
    ) -> StepResult:
        here = self._start(state)
        start = here.state
        ld = self._ld
        try:
            result = self.dojo.run_tac(self._states[start], tactic)
        except ld.DojoTacticTimeoutError:
            return failed_step(
                here,
                "timeout",
                FailureMode(FailureKind.TIMEOUT, "tactic timed out", tactic=tactic),
                tactic,
            )
        except ld.DojoCrashError as exc:
            return failed_step(here, "crash", FailureMode(FailureKind.CRASH, str(exc)), tactic)
        if isinstance(result, ld.LeanError):
            text = str(result.error)
            return failed_step(
                here, "error", classify_lean(text, tactic=tactic), tactic, (Message("error", text),)
            )
        if isinstance(result, ld.ProofGivenUp):
            return failed_step(
                here,
                "error",
                FailureMode(FailureKind.USES_SORRY, "the tactic gave up", tactic=tactic),
                tactic,
            )
        if isinstance(result, ld.ProofFinished):
            sid = (
                max(self._states) + 1 if result.tactic_state_id is None else result.tactic_state_id
            )
            step = StepResult(sid, (), "finished", tactic=tactic, parent=start)
        else:
            self._states[result.id] = result
            sid = result.id
            step = StepResult(sid, _goals(result), "open", tactic=tactic, parent=start)
        self._states.setdefault(sid, result)
        return self._record(step)

    def close(self) -> None:
        self._cm.__exit__(None, None, None)
