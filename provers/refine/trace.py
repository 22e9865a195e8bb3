"""The search's trace: one JSON line per event, enough to replay, train on and draw.

Three record types, each with ``"type"``:

- ``problem``: ``id``, ``backend``, ``statement``, ``header``, ``config`` (the budgets and the
  policy), written when a search starts;
- ``attempt``: one verifier request: ``node`` (where it ran), ``child`` (the node it made, or
  ``null``), ``tactic``, ``family``, ``prior``, ``priority``, ``reacting_to`` (the failed
  tactic a follow-up answers), ``condition`` (the failure class that conditioned the node),
  ``status`` (``open``, ``finished``, ``error``, ``timeout``, ``crash``, ``duplicate``,
  ``replay``, ``check``), ``failure`` (kind, message, sentence), ``goals_before``,
  ``goals_after``, ``goal`` (the first goal before it), ``features`` (the goal's), ``depth``,
  ``calls`` (spent so far), ``t`` (seconds so far);
- ``result``: ``status`` (``proved``, ``failed``, ``timeout``, ``error``), ``proof``,
  ``vacuous``, ``calls``, ``elapsed_s``, ``path`` (the attempts' indices on the proof).

:func:`read_trace` groups a file (one search or many) by problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lemmata.provers.result import VerifyResult

__all__ = ["ProblemTrace", "TraceWriter", "check_fields", "read_trace"]


def check_fields(r: VerifyResult) -> dict[str, Any]:
    """``status`` and ``failure`` of an attempt record for a whole-proof check."""
    from lemmata.provers.result import Status

    fm = r.failure_mode
    return {
        "status": "check" if r.ok else ("timeout" if r.status is Status.TIMEOUT else "error"),
        "failure": (
            {"kind": fm.kind.value, "message": fm.message[:300], "sentence": fm.sentence}
            if fm
            else None
        ),
    }


class TraceWriter:
    """Appends records to a JSONL file, flushed after each one (a killed run keeps what it
    had). ``None`` as the path writes nothing."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._fh: IO[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        if self._fh is not None:
            self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class ProblemTrace:
    """One search, as recorded."""

    problem: dict[str, Any]
    attempts: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return str(self.problem.get("id", ""))

    @property
    def solved(self) -> bool:
        return bool(self.result and self.result.get("status") == "proved")

    def on_path(self) -> set[int]:
        """Indices (into ``attempts``) of the attempts on the proof found."""
        return set(self.result.get("path", ())) if self.result else set()


def read_trace(path: Path) -> list[ProblemTrace]:
    """The searches in a trace file (or every ``*.jsonl`` in a folder), in order. A line that
    is not JSON raises ``ValueError`` naming the file and line."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    out: list[ProblemTrace] = []
    for f in files:
        current: ProblemTrace | None = None
        with f.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{f}:{number}: not a trace record ({exc.msg})") from None
                kind = rec.get("type") if isinstance(rec, dict) else None
                if kind == "problem":
                    current = ProblemTrace(rec)
                    out.append(current)
                elif kind == "attempt" and current is not None:
                    current.attempts.append(rec)
                elif kind == "result" and current is not None:
                    current.result = rec
                else:
                    raise ValueError(f"{f}:{number}: unexpected trace record {str(rec)[:80]!r}")
    return out
