"""The process layer beneath the Coq and Lean back-ends: one prover process, its deadlines
and memory, and the typed errors and verdicts that every back-end shares.

:class:`ProverProcess` starts a prover (confined by :mod:`lemmata.confine` when given a
:class:`~lemmata.confine.Confinement`) in a process group of its own, writes requests, reads
replies with a deadline, reports its resident memory and tells when it is due for recycling;
a back-end adds only its framing (:meth:`ProverProcess.take`: coqtop's prompt, the REPL's
JSON objects) and its command line (:meth:`ProverProcess.launch`).

Everything that escapes is a :class:`~lemmata.errors.ProverError`, mapped here once:

- a reply past its deadline kills the process (and its children) and raises
  :class:`~lemmata.errors.ProverTimeout`;
- a process that exits, closes its pipes or answers what the framing cannot read raises
  :class:`~lemmata.errors.ProverCrashed`;
- sessions raise :class:`~lemmata.errors.HeaderFailed`,
  :class:`~lemmata.errors.StatementFailed` and :class:`~lemmata.errors.InputRefused` (each
  also a ``ValueError``, as before).

:func:`error_verdict` turns any of them into the :class:`~lemmata.provers.result.VerifyResult`
a ``check`` returns (``UNAVAILABLE`` for a header, ``TIMEOUT``, ``CRASH``), so both
verifiers give the same verdict for the same failure. :func:`stage_of` reads which part of
the input a verdict is about (``"header"``, ``"statement"`` or ``"proof"``): the batch runner
and the refinement search stop on a header or statement failure from that field, never from
the message's words.

>>> class Cat(ProverProcess[bytes]):
...     def take(self, chunk: bytes) -> bytes | None:
...         return chunk or None
>>> cat = Cat(["cat"], name="cat")
>>> cat.start(); cat.write(b"hello\\n"); cat.read(time.monotonic() + 5)
b'hello\\n'
>>> cat.close()
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from lemmata.errors import (
    HeaderFailed,
    InputRefused,
    ProverCrashed,
    ProverError,
    ProverTimeout,
    StatementFailed,
)
from lemmata.provers.result import FailureKind, FailureMode, Message, Status, VerifyResult

if TYPE_CHECKING:
    from lemmata.confine import Confinement

__all__ = [
    "HeaderFailed",
    "InputRefused",
    "ProverCrashed",
    "ProverError",
    "ProverProcess",
    "ProverTimeout",
    "ReadClosed",
    "ReadTimeout",
    "Stage",
    "StatementFailed",
    "Verdict",
    "error_verdict",
    "kill_process",
    "read_some",
    "rss_mb",
    "stage_of",
]

ReplyT = TypeVar("ReplyT")
Stage = Literal["header", "statement", "proof"]


def kill_process(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and its process group, reap it, and close its pipes; idempotent."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def rss_mb(pid: int | None) -> float:
    """Resident memory of a process in MiB (0 when unknown)."""
    if pid is None:
        return 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


class ReadTimeout(ProverTimeout):
    """No output before the deadline (:func:`read_some`; the process is still running)."""

    def __init__(self, message: str = "no output before the deadline") -> None:
        super().__init__(message)


class ReadClosed(ProverCrashed):
    """The pipe was closed under us (a kill from another thread)."""

    def __init__(self, message: str = "the pipe was closed") -> None:
        super().__init__(message)


def read_some(proc: subprocess.Popen[bytes], fd: int, deadline: float) -> tuple[bytes, int | None]:
    """Wait for output of ``proc`` on ``fd`` until ``deadline`` (``time.monotonic``).

    Returns ``(chunk, None)``, or ``(b"", exit status)`` at end of output. Raises
    :class:`ReadTimeout` past the deadline and :class:`ReadClosed` if the pipe goes away.
    """
    # poll, not select: select cannot watch a descriptor numbered 1024 or more, which a
    # long-running process (a server holding many files and sockets) reaches
    poller = select.poll()
    try:
        poller.register(fd, select.POLLIN | select.POLLPRI)
    except (OSError, ValueError):
        raise ReadClosed() from None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ReadTimeout()
        try:
            if not poller.poll(max(1, int(min(remaining, 1.0) * 1000))):
                continue
            chunk = os.read(fd, 65536)
        except (OSError, ValueError):
            raise ReadClosed() from None
        if chunk:
            return chunk, None
        try:
            return b"", proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return b"", None


class ProverProcess(Generic[ReplyT]):
    """One prover process, spoken to over its standard input and output.

    ``argv`` runs in ``cwd`` (by default a scratch folder of its own, removed by
    :meth:`close`), in a new process group so that :meth:`kill` takes its children too. With a
    ``confinement`` it runs confined in the scratch folder, the absolute paths in ``argv`` and
    ``read_only`` visible read-only. ``stderr=True`` reads the prover's error output with its
    output (coqtop prints errors there); otherwise it is discarded. ``name`` is how messages
    call the prover.

    A back-end subclasses it with :meth:`take` (its framing) and, where its command line
    differs, :meth:`launch`. Not thread-safe, except :meth:`kill`.
    """

    scratch_prefix = "lemmata-prover-"

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str | Path | None = None,
        *,
        name: str = "the prover",
        confinement: Confinement | None = None,
        read_only: Sequence[str] = (),
        stderr: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = str(cwd) if cwd else None
        self.name = name
        self.confinement = confinement
        self.read_only = list(read_only)
        self.stderr = stderr
        self.env = env
        self._scratch: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.requests = 0  # writes since the last start
        self.starts = 0

    # -- what a back-end provides -----------------------------------------------------------

    def take(self, chunk: bytes) -> ReplyT | None:
        """Add ``chunk`` of output (``b""``: none yet) to what was read, and return the next
        whole reply, or ``None`` while it is incomplete. Raise :class:`ProverCrashed` for
        output the framing cannot read."""
        raise NotImplementedError

    def at_exit(self, status: int | None) -> ReplyT:
        """What to answer when the prover exits before a whole reply: by default a crash."""
        raise ProverCrashed(f"{self.name} exited with status {status}")

    def reset(self) -> None:
        """Forget partial output (called at every start and kill)."""

    def launch(self) -> tuple[list[str], str, dict[str, str] | None]:
        """The command line, working folder and environment of a start."""
        where = self.cwd or self.scratch()
        env = None if self.env is None else {**os.environ, **self.env}
        if self.confinement is None:
            return self.argv, where, env
        visible = [a for a in self.argv[1:] if a.startswith("/") and Path(a).exists()]
        visible += [p for p in self.read_only if Path(p).exists()]
        argv = self.confinement.command(self.argv, where, read_only=visible)
        return argv, where, self.confinement.environment(where, self.env)

    # -- the process ------------------------------------------------------------------------

    def scratch(self) -> str:
        """This process's scratch folder, made on first use."""
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix=self.scratch_prefix)
        return self._scratch

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """The prover's process id (under a confinement, the confined prover's)."""
        proc = self._proc
        if proc is None:
            return None
        if self.confinement is None:
            return proc.pid
        from lemmata.confine import confined_pid

        return confined_pid(proc.pid)

    def start(self) -> None:
        """Start the prover (killing a running one first); :class:`ProverCrashed` if it
        cannot be started."""
        self.kill()
        argv, cwd, env = self.launch()
        launch: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen
        if self.confinement is not None:
            # A sandbox dies with the thread that started it (--die-with-parent), and a
            # session outlives the request's thread that opened it.
            from lemmata.confine import popen as launch
        try:
            self._proc = launch(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if self.stderr else subprocess.DEVNULL,
                start_new_session=True,  # so that a kill takes any children with it
            )
        except OSError as exc:  # the program went away, or its folder
            raise ProverCrashed(f"{self.name} could not start: {exc}") from None
        self.reset()
        self.requests = 0
        self.starts += 1

    def write(self, data: bytes) -> None:
        """Send ``data`` (starting the prover if it is not running)."""
        if not self.alive:
            self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
        except (OSError, ValueError) as exc:
            self.kill()
            raise ProverCrashed(f"{self.name} closed its input: {exc}") from None
        self.requests += 1

    def read(self, deadline: float) -> ReplyT:
        """The next whole reply, read until ``deadline`` (``time.monotonic``).

        Past the deadline the process is killed and :class:`ProverTimeout` raised; a process
        that exits or is killed meanwhile raises :class:`ProverCrashed`.
        """
        proc = self._proc
        stopped = f"{self.name} was stopped"
        if proc is None or proc.stdout is None:
            raise ProverCrashed(stopped)
        try:
            fd = proc.stdout.fileno()
        except ValueError:
            raise ProverCrashed(stopped) from None
        chunk = b""
        while True:
            try:
                reply = self.take(chunk)
            except ProverCrashed:
                self.kill()
                raise
            if reply is not None:
                return reply
            try:
                chunk, status = read_some(proc, fd, deadline)
            except ReadTimeout:
                self.kill()
                raise ProverTimeout(
                    f"{self.name} gave no answer in time and was stopped; "
                    "give it a longer time limit"
                ) from None
            except ReadClosed:
                raise ProverCrashed(stopped) from None
            if not chunk:
                try:
                    return self.at_exit(status)
                finally:
                    self.kill()

    def rss_mb(self) -> float:
        """The prover's resident memory in MiB (0 when it is not running)."""
        return rss_mb(self.pid)

    def worn(self, uses: int, recycle_after: int, memory_cap_mb: float) -> bool:
        """Whether the prover is due for recycling: ``uses`` (checks or requests since its
        start) reached ``recycle_after``, or it holds more than ``memory_cap_mb``."""
        return uses >= recycle_after or self.rss_mb() > memory_cap_mb

    def kill(self) -> None:
        """Kill the process (and its process group). Safe from any thread, and twice."""
        proc, self._proc = self._proc, None
        if proc is not None:
            kill_process(proc)
        self.reset()

    def close(self) -> None:
        """Kill the process and remove its scratch folder."""
        self.kill()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> ProverProcess[ReplyT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- verdicts -------------------------------------------------------------------------------


class Verdict:
    """Builds one check's :class:`VerifyResult`: the backend, the version, the time since
    ``started`` and the messages gathered so far (a list the check may still extend).

    ``stage`` (``"header"``, ``"statement"``, ``"proof"``) says which part of the input a
    failure is about; it is kept in the result's ``extra`` for :func:`stage_of`.
    """

    def __init__(
        self,
        backend: str,
        version: str | Callable[[], str],
        started: float | None = None,
        messages: list[Message] | None = None,
    ) -> None:
        self.backend = backend
        self._version = version
        self.started = time.monotonic() if started is None else started
        self.messages = messages

    def __call__(
        self,
        status: Status,
        failure: FailureMode | None = None,
        *,
        stage: Stage | None = None,
        **kw: Any,
    ) -> VerifyResult:
        version = self._version() if callable(self._version) else self._version
        if self.messages is not None:
            kw.setdefault("messages", tuple(self.messages))
        if stage is None and failure is not None and status is not Status.PASS:
            stage = "proof"
        extra = kw.pop("extra", {}) | ({"stage": stage} if stage else {})
        return VerifyResult(
            status=status,
            backend=self.backend,
            failure_mode=failure,
            elapsed_s=round(time.monotonic() - self.started, 4),
            version=version,
            extra=extra,
            **kw,
        )


def error_verdict(
    result: Callable[..., VerifyResult],
    exc: ProverError,
    limit: float,
    *,
    goals: tuple[str, ...] = (),
    **where: Any,
) -> VerifyResult:
    """The verdict on a check that ``exc`` stopped: a header that does not load is
    ``UNAVAILABLE`` (``header_error``), a statement that does not elaborate or input refused
    ``FAIL``, a deadline ``TIMEOUT``, a dead process ``CRASH``. ``where`` (``tactic``,
    ``sentence``, ``index``) says where a timeout struck."""
    if isinstance(exc, HeaderFailed):
        failure = FailureMode(FailureKind.HEADER_ERROR, exc.message, sentence=exc.sentence)
        return result(Status.UNAVAILABLE, failure, stage="header")
    if isinstance(exc, StatementFailed):
        try:
            kind = FailureKind(exc.kind)
        except ValueError:
            kind = FailureKind.SYNTAX_ERROR
        return result(Status.FAIL, FailureMode(kind, exc.message), stage="statement")
    if isinstance(exc, InputRefused):
        stage = exc.stage if exc.stage in ("header", "statement") else "proof"
        return result(Status.FAIL, FailureMode(FailureKind.UNSAFE_INPUT, exc.message), stage=stage)
    if isinstance(exc, ProverTimeout):
        failure = FailureMode(
            FailureKind.TIMEOUT, f"no answer within {limit:g}s", goals=goals, **where
        )
        return result(Status.TIMEOUT, failure, goals=goals)
    return result(Status.CRASH, FailureMode(FailureKind.CRASH, exc.message))


def stage_of(result: VerifyResult) -> Stage | None:
    """Which part of the input a failed verdict is about: ``"header"``, ``"statement"``
    (every other proof of it fails the same way) or ``"proof"``; ``None`` when the verifier
    did not say (a pass, or a verifier outside this layer)."""
    stage = result.extra.get("stage")
    return stage if stage in ("header", "statement", "proof") else None
