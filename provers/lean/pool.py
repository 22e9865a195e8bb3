"""``LeanPool``: a bounded pool of Lean REPL processes keyed by import header.

A batch of Lean snippets mostly shares a few import headers (``import Mathlib``), and loading
one costs seconds to minutes, so each REPL elaborates a header once (its *warm-up*) and keeps
the environment number; later snippets under that header run in it. The pool:

- hands out at most ``size`` REPLs, one thread each (:meth:`LeanPool.run` blocks while all
  are busy), preferring an idle REPL already warm for the snippet's header;
- retires a REPL after ``recycle_after`` checks (warm-ups not counted) or once its resident
  memory passes ``memory_cap_mb``, and starts a fresh one when next needed;
- remembers a header Lean rejected, and answers later checks under it without asking again;
- replaces a REPL that crashed or timed out, dropping the environments it had cached (they
  died with the process); a crash is retried on a fresh REPL ``crash_retries`` times, a
  timeout never is.

:func:`split_header` decides the header: the leading ``import`` lines of the code.

>>> pool = LeanPool(project="mathlib-repl", size=2)              # doctest: +SKIP
>>> out = pool.run("import Mathlib", "theorem t : 1 + 1 = 2 := by norm_num")  # doctest: +SKIP
>>> out.outcome, out.warmed                                             # doctest: +SKIP
('ok', True)
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lemmata.provers.lean.protocol import CommandResponse, ReplError
from lemmata.provers.lean.repl import (
    ALLOWED_AXIOMS,
    LeanCrashed,
    LeanRepl,
    LeanTimeout,
    lean_version,
)

__all__ = ["LeanPool", "PoolReply", "PoolStats", "detect_toolchain", "split_header"]

Outcome = Literal["ok", "header_failed", "timeout", "crash"]
# The REPL would recycle itself on these, between a warm-up and its check; the pool decides
# between checks instead, so by default they are set out of reach.
_NEVER = 1 << 40


def split_header(code: str) -> tuple[str, str, list[int], int]:
    """Split Lean code into its import header and the rest.

    Returns ``(header, body, header_lines, body_start)``: the ``import`` lines before the
    first other line (blank lines and ``--`` comments between them skipped), joined by
    newlines and each stripped, so equal imports give an equal key; the body from the first
    other line on; the 1-based line in ``code`` of each header line; and the 0-based count of
    lines before the body (to map the REPL's body positions back onto ``code``).

    >>> split_header("import Mathlib\\n\\nopen Real\\ntheorem t : True := trivial")
    ('import Mathlib', 'open Real\\ntheorem t : True := trivial', [1], 2)
    """
    lines = code.split("\n")
    header: list[str] = []
    numbers: list[int] = []
    start = len(lines)
    for i, line in enumerate(lines):
        text = line.strip()
        if text.startswith("import "):
            header.append(text)
            numbers.append(i + 1)
        elif text and not text.startswith("--"):
            start = i
            break
    return "\n".join(header), "\n".join(lines[start:]), numbers, start


def detect_toolchain(project: str | Path | None = None) -> str:
    """The Lean toolchain a REPL runs under, as best known without asking it: the project's
    ``lean-toolchain`` file, else the version ``lean --version`` gives
    (:func:`~lemmata.provers.lean.repl.lean_version`), else ``"unknown"``."""
    if project is not None:
        pin = Path(project).expanduser() / "lean-toolchain"
        if pin.is_file():
            text = pin.read_text(encoding="utf-8", errors="replace").strip()
            if text:
                return text.splitlines()[0]
    return lean_version(None, project) or "unknown"


@dataclass
class PoolStats:
    """What the pool did, for reports and tests: processes started, warm-ups (headers
    elaborated), checks run in an already-warm environment, REPLs retired for age or memory,
    crashes and timeouts (each retiring its REPL)."""

    started: int = 0
    warmups: int = 0
    reused: int = 0
    recycled: int = 0
    crashes: int = 0
    timeouts: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PoolReply:
    """The result of one :meth:`LeanPool.run`.

    ``outcome``: ``ok`` (``reply`` is the REPL's answer to the body, and ``axioms`` its
    answer to the axiom query when one was asked), ``header_failed`` (``reply`` is the
    answer to the header, which did not give an environment), ``timeout``, or ``crash``
    (``error`` says what happened). ``warmed``: the header was elaborated for this check
    rather than found warm. ``worker``: which REPL ran it (a number, for logs).
    """

    outcome: Outcome
    reply: CommandResponse | ReplError | None = None
    axioms: CommandResponse | ReplError | None = None
    error: str = ""
    warmed: bool = False
    worker: int = 0
    attempts: int = 1


@dataclass
class _Worker:
    repl: LeanRepl
    number: int
    envs: dict[str, int | None] = field(default_factory=dict)
    checks: int = 0


class LeanPool:
    """A bounded, thread-safe pool of :class:`~lemmata.provers.lean.repl.LeanRepl` processes;
    see the module docstring.

    ``command``/``project`` start the REPL as :class:`LeanRepl` does, and ``repl_options``
    go to its constructor as they are (for instance the confinement of untrusted input, where
    the REPL supports it). The pool recycles REPLs itself, so theirs is off unless
    ``repl_options`` sets ``recycle_after``/``memory_cap_mb``. ``toolchain`` is the version
    recorded in results (default: :func:`detect_toolchain`, or the REPL's own
    :meth:`LeanRepl.version` once it reports one).
    """

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        project: str | Path | None = None,
        size: int = 2,
        recycle_after: int = 200,
        memory_cap_mb: float = 8192,
        timeout_s: float = 60.0,
        header_timeout_s: float = 600.0,
        crash_retries: int = 1,
        allowed_axioms: frozenset[str] = ALLOWED_AXIOMS,
        toolchain: str | None = None,
        repl_options: Mapping[str, Any] | None = None,
    ) -> None:
        for name, value in (("size", size), ("recycle_after", recycle_after)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"LeanPool: {name} must be a whole number >= 1, got {value!r}")
        for name, limit in (
            ("memory_cap_mb", memory_cap_mb),
            ("timeout_s", timeout_s),
            ("header_timeout_s", header_timeout_s),
        ):
            if not limit > 0:
                raise ValueError(f"LeanPool: {name} must be positive, got {limit!r}")
        if crash_retries < 0:
            raise ValueError(f"LeanPool: crash_retries must be >= 0, got {crash_retries!r}")
        self.command = list(command) if command else None
        self.project = project
        self.size = size
        self.recycle_after = recycle_after
        self.memory_cap_mb = memory_cap_mb
        self.timeout_s = timeout_s
        self.header_timeout_s = header_timeout_s
        self.crash_retries = crash_retries
        self.allowed_axioms = allowed_axioms
        self.stats = PoolStats()
        self._toolchain = toolchain
        self._reported = ""
        self._detected: str | None = None
        self._idle: list[_Worker] = []
        self._busy = 0
        self._numbers = 0
        self._closed = False
        self._failed_headers: dict[str, CommandResponse | ReplError] = {}
        self._cond = threading.Condition()
        self._repl_options: dict[str, Any] = {
            "recycle_after": _NEVER,
            "memory_cap_mb": _NEVER,
            **(repl_options or {}),
        }
        # Fail now, with how to fix it, when there is no REPL to start.
        self._new_repl().close()

    def _new_repl(self) -> LeanRepl:
        return LeanRepl(
            self.command,
            project=self.project,
            timeout_s=self.timeout_s,
            header_timeout_s=self.header_timeout_s,
            allowed_axioms=self.allowed_axioms,
            **self._repl_options,
        )

    # -- checkout and return ----------------------------------------------------------------

    def _checkout(self, header: str) -> _Worker:
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the LeanPool is closed")
                warm = [w for w in self._idle if header in w.envs]
                if warm or self._idle:
                    worker = (warm or self._idle)[0]
                    self._idle.remove(worker)
                    self._busy += 1
                    return worker
                if self._busy < self.size:
                    self._busy += 1
                    self._numbers += 1
                    number = self._numbers
                    break
                self._cond.wait()
        try:
            repl = self._new_repl()
        except BaseException:
            self._release(None)
            raise
        return _Worker(repl, number)

    def _release(self, worker: _Worker | None) -> None:
        """Give ``worker`` back, or retire it (``None``: it is gone)."""
        with self._cond:
            self._busy -= 1
            if worker is not None and not self._closed:
                self._idle.append(worker)
                worker = None
            self._cond.notify()
        if worker is not None:  # the pool closed while it was out
            worker.repl.close()

    def _retire(self, worker: _Worker, reason: Literal["recycled", "crashes", "timeouts"]) -> None:
        worker.repl.close()
        worker.envs.clear()
        with self._cond:
            setattr(self.stats, reason, getattr(self.stats, reason) + 1)

    def _count(self, name: str) -> None:
        with self._cond:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    # -- one check --------------------------------------------------------------------------

    def run(
        self,
        header: str,
        body: str,
        timeout: float | None = None,
        *,
        axioms_of: Sequence[str] = (),
        header_timeout: float | None = None,
    ) -> PoolReply:
        """Run ``body`` in ``header``'s environment on a pooled REPL.

        When the body's reply has no error and no ``sorry`` and ``axioms_of`` names
        declarations, ``#print axioms`` for each is asked in the environment the body made,
        as a separate command (so nothing the body prints can pass for its answer).
        """
        limit = timeout or self.timeout_s
        with self._cond:
            known = self._failed_headers.get(header)
        if known is not None:  # Lean's answer to a header does not change: not asked again
            return PoolReply("header_failed", known, error="the imports failed before")
        attempts = 0
        while True:
            attempts += 1
            reply = self._attempt(header, body, limit, axioms_of, header_timeout)
            if reply.outcome != "crash" or attempts > self.crash_retries:
                return PoolReply(
                    reply.outcome,
                    reply.reply,
                    reply.axioms,
                    reply.error,
                    reply.warmed,
                    reply.worker,
                    attempts,
                )

    def _attempt(
        self,
        header: str,
        body: str,
        limit: float,
        axioms_of: Sequence[str],
        header_timeout: float | None,
    ) -> PoolReply:
        worker = self._checkout(header)
        keep: _Worker | None = None
        try:
            repl = worker.repl
            if not repl.process.alive:
                worker.envs.clear()  # a process that is not running keeps no environment
            warmed = False
            waited, phase = limit, "the check"
            try:
                if header not in worker.envs:
                    if not repl.process.alive:
                        self._count("started")
                    if header:
                        warmed = True
                        self._count("warmups")
                        waited, phase = header_timeout or self.header_timeout_s, "the imports"
                        first = repl.command(header, timeout=waited)
                        if (
                            not isinstance(first, CommandResponse)
                            or first.errors
                            or first.env is None
                        ):
                            keep = worker
                            with self._cond:
                                self._failed_headers[header] = first
                            return PoolReply(
                                "header_failed", first, warmed=True, worker=worker.number
                            )
                        worker.envs[header] = first.env
                        waited, phase = limit, "the check"
                    else:
                        worker.envs[header] = None
                else:
                    self._count("reused")
                reply = repl.command(body, worker.envs[header], timeout=limit)
                worker.checks += 1
                answer: CommandResponse | ReplError | None = None
                if (
                    axioms_of
                    and isinstance(reply, CommandResponse)
                    and not reply.errors
                    and not reply.sorries
                    and reply.env is not None
                ):
                    query = "\n".join(f"#print axioms {name}" for name in axioms_of)
                    answer = repl.command(query, reply.env, timeout=limit)
            except LeanTimeout:
                self._retire(worker, "timeouts")
                return PoolReply(
                    "timeout",
                    error=f"no answer to {phase} within {waited:g}s",
                    worker=worker.number,
                )
            except LeanCrashed as exc:
                self._retire(worker, "crashes")
                return PoolReply("crash", error=str(exc) or "the REPL died", worker=worker.number)
            if repl.process.worn(worker.checks, self.recycle_after, self.memory_cap_mb):
                self._retire(worker, "recycled")
            else:
                keep = worker
            self._reported = self._reported or repl.version()
            return PoolReply("ok", reply, answer, warmed=warmed, worker=worker.number)
        finally:
            self._release(keep)

    # -- the rest ---------------------------------------------------------------------------

    def toolchain(self) -> str:
        """The toolchain version recorded in every result: as given, else as the REPL reports
        it, else as :func:`detect_toolchain` finds it."""
        if self._toolchain is not None:
            return self._toolchain
        if self._reported:
            return self._reported
        if self._detected is None:
            self._detected = detect_toolchain(self.project)
        return self._detected

    def close(self) -> None:
        """Stop every idle REPL; busy ones stop as they come back."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for worker in idle:
            worker.repl.close()

    def __enter__(self) -> LeanPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
