"""What a verifier returns: values, never exceptions, for every outcome of a proof check."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

__all__ = ["FailureKind", "FailureMode", "Message", "Status", "VerifyResult", "traced_check"]

_CheckT = TypeVar("_CheckT", bound=Callable[..., Any])


class Status(enum.StrEnum):
    """The verdict of one check.

    ``PASS`` only when the proof has no error, no ``sorry``/``admit``, proves exactly the
    statement given, and depends on allowed axioms only. ``FAIL``: the verifier ran and the
    proof is not accepted. ``TIMEOUT``: the time limit ran out. ``CRASH``: the verifier process
    died or answered nonsense. ``UNAVAILABLE``: the verifier is not installed or the header
    could not be loaded.
    """

    PASS = "pass"
    FAIL = "fail"
    TIMEOUT = "timeout"
    CRASH = "crash"
    UNAVAILABLE = "unavailable"


class FailureKind(enum.StrEnum):
    """Why a proof failed, in categories a search can condition on.

    The refinement search (:mod:`lemmata.provers.refine`) chooses its local edits by this
    class: ``STRUCTURE`` (a wrong bullet or brace, no such goal), ``NAME_CLASH`` (a name
    already used), ``NOT_A_PRODUCT`` (``intros`` with nothing to introduce),
    ``UNKNOWN_IDENTIFIER`` (a reference not in the environment), ``TYPE_MISMATCH``
    (unification), ``TACTIC_FAILED``, ``UNSOLVED_GOALS``, ``TIMEOUT``, ``HEADER_ERROR`` (the
    environment, not the proof), ``VACUOUS`` (the hypotheses contradict each other: provable,
    but not a proof of anything).

    Soundness: a proof that leans on a switched-off checker fails with the checker's own
    kind, whatever else it did right: ``ASSUMED_GUARDED`` (a fixpoint whose termination was
    not checked: Coq's "is assumed to be guarded"), ``ASSUMED_POSITIVE`` (an inductive type
    whose positivity was not checked), ``UNSAFE_UNIVERSES`` (universe checking off or
    type-in-type: "relies on an unsafe hierarchy"). ``UNSAFE_INPUT``: the input was refused
    before it reached the prover, because it would write or load files, run code, or switch
    a checker off (``Redirect``, ``Declare ML Module``, ``Unset Guard Checking``, Lean's
    ``#eval``/``run_cmd``...).
    """

    UNKNOWN_IDENTIFIER = "unknown_identifier"
    TYPE_MISMATCH = "type_mismatch"
    UNSOLVED_GOALS = "unsolved_goals"
    TACTIC_FAILED = "tactic_failed"
    SYNTAX_ERROR = "syntax_error"
    TIMEOUT = "timeout"
    USES_SORRY = "uses_sorry"
    BAD_AXIOM = "bad_axiom"
    STATEMENT_CHANGED = "statement_changed"
    HEADER_ERROR = "header_error"
    STRUCTURE = "structure"
    NAME_CLASH = "name_clash"
    NOT_A_PRODUCT = "not_a_product"
    VACUOUS = "vacuous"
    ASSUMED_GUARDED = "assumed_guarded"
    ASSUMED_POSITIVE = "assumed_positive"
    UNSAFE_UNIVERSES = "unsafe_universes"
    UNSAFE_INPUT = "unsafe_input"
    CRASH = "crash"
    OTHER = "other"


@dataclass(frozen=True)
class Message:
    """A message of the verifier. ``line``/``column`` are 1-based/0-based positions in the
    proof text as given (Lean's convention), or ``None`` when the verifier gave none."""

    severity: str
    text: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class FailureMode:
    """The first failure that matters: its kind, the message, where, and which tactic.

    ``tactic`` is the failing tactic's head word (``"lra"``); ``sentence`` the whole failing
    sentence as written and ``index`` its 0-based position among the proof's sentences (both
    ``None`` when the failure is not at a sentence, such as goals left at ``Qed``);
    ``goals`` the goals at the point of failure (the first one with its hypotheses).
    """

    kind: FailureKind
    message: str = ""
    line: int | None = None
    column: int | None = None
    tactic: str | None = None
    sentence: str | None = None
    index: int | None = None
    goals: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "tactic": self.tactic,
            "sentence": self.sentence,
            "index": self.index,
            "goals": list(self.goals),
        }


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of one check; see :class:`Status`."""

    status: Status
    backend: str
    messages: tuple[Message, ...] = ()
    goals: tuple[str, ...] = ()
    sorries: int = 0
    failure_mode: FailureMode | None = None
    axioms: tuple[str, ...] = ()
    elapsed_s: float = 0.0
    version: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def ok(self) -> bool:
        return self.status is Status.PASS

    def errors(self) -> list[Message]:
        return [m for m in self.messages if m.severity == "error"]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["status"] = self.status.value
        out["failure_mode"] = self.failure_mode.to_dict() if self.failure_mode else None
        out["messages"] = [asdict(m) for m in self.messages]
        return out


def traced_check(method: _CheckT) -> _CheckT:
    """Make a verifier's ``check(header, statement, proof, timeout)`` a ``verify BACKEND`` span
    when tracing is on (:mod:`lemmata.tracing`): status, failure kind and time, and the
    statement and proof only with ``trace_content``."""
    import functools

    from lemmata import tracing

    @functools.wraps(method)
    def wrapper(
        self: Any, header: str, statement: str, proof: str, timeout: float | None = None
    ) -> VerifyResult:
        backend = str(getattr(self, "backend", "verifier"))
        with tracing.span(f"verify {backend}", {"lemmata.backend": backend}) as span:
            span.content("lemmata.statement", statement)
            span.content("lemmata.proof", proof)
            result: VerifyResult = method(self, header, statement, proof, timeout)
            span.set("lemmata.verify.status", result.status.value)
            if result.failure_mode is not None:
                span.set("lemmata.failure_kind", result.failure_mode.kind.value)
            span.set("lemmata.elapsed_s", result.elapsed_s)
            return result

    return wrapper  # type: ignore[return-value]
