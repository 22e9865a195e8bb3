"""Re-checking a recorded proof, and the story of how the search found it.

:func:`replay` gives the proof a trace records to a verifier again, under the header the search
used (the problem's own plus what the search added), so a trace can be audited without
trusting the run that wrote it. :func:`replay_path` lists the attempts on the proof, root to
end, for printing.

>>> from lemmata.provers import CoqTop                                    # doctest: +SKIP
>>> trace = read_trace(Path("t1.jsonl"))[0]                               # doctest: +SKIP
>>> with CoqTop() as coq:                                                 # doctest: +SKIP
...     replay(trace, coq).ok
True
>>> [(s["tactic"], s["status"]) for s in replay_path(trace)]              # doctest: +SKIP
[('intros', 'open'), ('nra', 'finished')]
"""

from __future__ import annotations

from typing import Any

from lemmata.provers.base import Verifier
from lemmata.provers.refine.trace import ProblemTrace
from lemmata.provers.result import VerifyResult

__all__ = ["replay", "replay_path"]

# What a step of the story keeps of its attempt record (the goal features are left out).
_STEP_FIELDS = (
    "node",
    "child",
    "tactic",
    "family",
    "status",
    "goals_before",
    "goals_after",
    "goal",
    "depth",
)


def replay(trace: ProblemTrace, verifier: Verifier, timeout: float | None = None) -> VerifyResult:
    """Check the proof recorded in ``trace`` with ``verifier`` (whose backend must be the
    trace's), under the problem's header with the search's additions before it.

    The verdict is the verifier's, a value like any check's. A trace without a proof (not
    solved, or cut off before its result) raises ``ValueError``: there is nothing to replay.
    """
    result = trace.result or {}
    proof = result.get("proof")
    if not trace.solved or not proof:
        status = result.get("status", "unfinished, no result record")
        raise ValueError(f"{trace.id}: no proof to replay (search status: {status})")
    backend = trace.problem.get("backend")
    if backend and backend != verifier.backend:
        raise ValueError(
            f"{trace.id}: the proof is for {backend}, the verifier is {verifier.backend}"
        )
    additions = str(trace.problem.get("header_additions") or "")
    header = str(trace.problem.get("header") or "")
    full = f"{additions}\n{header}" if additions else header
    return verifier.check(full, str(trace.problem.get("statement", "")), str(proof), timeout)


def replay_path(trace: ProblemTrace) -> list[dict[str, Any]]:
    """The attempts on the proof found, from the root to the one that left no goals, each as
    ``index`` (in the trace's attempts) with ``tactic``, ``family``, ``status``, ``node``,
    ``child``, ``goals_before``, ``goals_after``, ``goal`` and ``depth``. Empty when the search
    found no proof; an index outside the trace raises ``ValueError`` (the file is damaged)."""
    if not trace.solved:
        return []
    steps = []
    for index in sorted(trace.on_path()):
        if not 0 <= index < len(trace.attempts):
            raise ValueError(
                f"{trace.id}: the proof's path names attempt {index}, "
                f"but the trace holds {len(trace.attempts)}"
            )
        rec = trace.attempts[index]
        steps.append({"index": index, **{k: rec.get(k) for k in _STEP_FIELDS}})
    return steps
