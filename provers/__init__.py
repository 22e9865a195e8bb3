"""lemmata.provers: verifiers for Lean 4 and Coq, and the batch proof runner.

>>> from lemmata.provers import CoqTop                                   # doctest: +SKIP
>>> CoqTop().check("", "Theorem t : 2 + 2 = 4.", "reflexivity.").ok       # doctest: +SKIP
True

Verdicts are values (:class:`VerifyResult`); ``lemmata prove FILE --backend coq`` runs a
JSONL batch, a ``.v`` file or a folder of them (:mod:`lemmata.provers.runner`).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from lemmata.provers.base import ProofSession, StepResult, Verifier
from lemmata.provers.coq import CoqSession, CoqTop
from lemmata.provers.failure import classify_coq, classify_lean, failure_signature
from lemmata.provers.lean import LeanRepl, LeanSession
from lemmata.provers.portfolio import candidates
from lemmata.provers.result import FailureKind, FailureMode, Message, Status, VerifyResult
from lemmata.provers.runner import (
    RunSummary,
    Theorem,
    TheoremResult,
    read_problems,
    read_theorems,
    run_batch,
)

if TYPE_CHECKING:
    from lemmata.settings import Settings

__all__ = [
    "BACKENDS",
    "CoqSession",
    "CoqTop",
    "FailureKind",
    "FailureMode",
    "LeanRepl",
    "LeanSession",
    "Message",
    "ProofSession",
    "RunSummary",
    "Status",
    "StepResult",
    "Theorem",
    "TheoremResult",
    "Verifier",
    "VerifyResult",
    "candidates",
    "classify_coq",
    "classify_lean",
    "failure_signature",
    "make_verifier",
    "read_problems",
    "read_theorems",
    "run_batch",
]

BACKENDS = ("coq", "lean")


def make_verifier(
    backend: str,
    settings: Settings,
    *,
    timeout_s: float | None = None,
    reuse: bool = True,
    untrusted: bool | None = None,
    trusted_header: bool = False,
) -> Verifier:
    """The verifier for ``backend`` as the settings configure it.

    ``untrusted`` (default: the ``untrusted_input`` setting) runs the prover confined
    (:mod:`lemmata.confine`); ``trusted_header=True`` skips the header screen, for headers the
    caller wrote. Raises :class:`~lemmata.errors.ToolNotFound` (with how to install it) when
    the backend's program is missing, :class:`~lemmata.errors.ConfinementUnavailable` when
    input is untrusted and cannot be confined here, ``ValueError`` for an unknown backend.
    """
    limit = timeout_s or settings.verifier_timeout_s
    confined = bool(settings.untrusted_input) if untrusted is None else untrusted
    if backend == "coq":
        return CoqTop(
            settings.coqtop,
            timeout_s=limit,
            reuse=reuse,
            untrusted=confined,
            trusted_header=trusted_header,
        )
    if backend == "lean":
        command = shlex.split(settings.lean_repl) if settings.lean_repl else None
        return LeanRepl(
            command,
            project=settings.lean_project,
            timeout_s=limit,
            untrusted=confined,
            trusted_header=trusted_header,
        )
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
