"""``LeanRepl``: Lean 4 through the leanprover-community REPL, as a
:class:`~lemmata.provers.base.Verifier`.

The REPL runs as ``repl`` (a binary on PATH or named by ``command``) or ``lake exe repl`` in a
Lean project (``project``). One process per verifier; a header (``import Mathlib`` ...) is run
once and its environment number kept, so later checks under the same header start from it.
Each request has a hard time limit: past it the process is killed (``TIMEOUT``) and the next
request starts a new one. A process that dies is a ``CRASH``. The process is recycled after
``recycle_after`` requests or when it grows past ``memory_cap_mb``.

A check sends ``statement := proof`` and ``#print axioms NAME`` in the header's environment.
It passes only with no error, no ``sorry``, the name's axioms within ``ALLOWED_AXIOMS``, and a
proof text that declares nothing of its own (a proof that ends the theorem and starts another
is ``statement_changed``).

Lean runs code while it elaborates, so input is screened before it is sent
(:mod:`lemmata.provers.lean.screen`): proof and statement always, the header unless the
verifier is built with ``trusted_header=True``; ``#eval``, ``run_cmd``, ``implemented_by``,
``set_option debug.skipKernelTC`` and the like fail as ``unsafe_input``. With
``untrusted=True`` the REPL itself runs confined (:mod:`lemmata.confine`; the memory limit is
on the data segment, since Lean maps its ``.olean`` files): a scratch folder, no network, the
file system read-only and limited to the toolchain (``~/.elan``), the project and the files
named on the command line.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.errors import ToolNotFound
from lemmata.provers._process import ReadClosed, ReadTimeout, kill_process, read_some, rss_mb
from lemmata.provers.base import SessionStates, StepResult, failed_step
from lemmata.provers.failure import classify_lean
from lemmata.provers.lean.protocol import (
    CommandResponse,
    LeanMessage,
    ProtocolError,
    ReplError,
    ResponseReader,
    TacticResponse,
    encode_request,
    goals_in_message,
    parse_response,
)
from lemmata.provers.lean.screen import (
    screen_lean_header,
    screen_lean_proof,
    screen_lean_statement,
    screen_lean_tactic,
)
from lemmata.provers.result import (
    FailureKind,
    FailureMode,
    Message,
    Status,
    VerifyResult,
    traced_check,
)

if TYPE_CHECKING:
    from lemmata.confine import Confinement

__all__ = [
    "ALLOWED_AXIOMS",
    "LeanProcess",
    "LeanRepl",
    "LeanSession",
    "LeanTimeout",
    "LeanCrashed",
    "find_repl",
    "parse_axioms",
    "screen_lean_proof",
]

ALLOWED_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
_NAME = re.compile(r"^\s*(?:theorem|lemma)\s+([^\s(:{\[]+)")
_AXIOMS_MSG = re.compile(r"'(.+?)' depends on axioms: \[(.*)\]", re.S)


class LeanTimeout(Exception):
    pass


class LeanCrashed(Exception):
    pass


def find_repl(command: Sequence[str] | None = None, project: str | Path | None = None) -> list[str]:
    """The command line that starts the REPL: ``command`` as given, ``lake exe repl`` in
    ``project``, or ``repl`` from PATH; :class:`ToolNotFound` when there is none."""
    if command:
        exe = shutil.which(command[0])
        if exe is None:
            raise ToolNotFound(command[0], "install the Lean 4 REPL", "LEMMATA_LEAN_REPL")
        return [exe, *command[1:]]
    if project is not None:
        lake = shutil.which("lake")
        if lake is None:
            raise ToolNotFound("lake", "install elan and a Lean 4 toolchain", "LEMMATA_LEAN_REPL")
        return [lake, "exe", "repl"]
    exe = shutil.which("repl")
    if exe is None:
        raise ToolNotFound(
            "repl",
            "build leanprover-community/repl and put `repl` on PATH, "
            "or give a Lean project that depends on it",
            "LEMMATA_LEAN_REPL",
        )
    return [exe]


def parse_axioms(messages: Sequence[Any], name: str) -> list[str] | None:
    """The axioms ``#print axioms name`` reported, ``[]`` for none, ``None`` if it said nothing."""
    for m in messages:
        text = m.text if hasattr(m, "text") else str(m)
        if f"'{name}' does not depend on any axioms" in text:
            return []
        match = _AXIOMS_MSG.search(text)
        if match and match.group(1) == name:
            return [a.strip() for a in match.group(2).split(",") if a.strip()]
    return None


class LeanProcess:
    """One REPL process: :meth:`request` sends an object and returns the decoded reply.
    With a ``confinement`` it runs confined (its scratch folder is made here, and the working
    folder ``cwd``, the toolchain and the files named in ``argv`` are visible read-only)."""

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str | Path | None = None,
        *,
        confinement: Confinement | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = str(cwd) if cwd else None
        self.confinement = confinement
        self._scratch: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader = ResponseReader()
        self.requests = 0
        self.starts = 0

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        if self._proc is None:
            return None
        if self.confinement is None:
            return self._proc.pid
        from lemmata.confine import confined_pid

        return confined_pid(self._proc.pid)

    def _command(self) -> tuple[list[str], str | None, dict[str, str] | None]:
        """The command line, working folder and environment of a start."""
        if self.confinement is None:
            return self.argv, self.cwd, None
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="lemmata-lean-")
        elan = Path.home() / ".elan"
        visible = [a for a in self.argv[1:] if a.startswith("/") and Path(a).exists()]
        visible += [p for p in (self.cwd, str(elan)) if p]
        # ``lake exe repl`` runs in its project, and finds its toolchain through elan.
        argv = self.confinement.command(self.argv, self._scratch, read_only=visible, chdir=self.cwd)
        env = self.confinement.environment(
            self._scratch,
            {"ELAN_HOME": str(elan), "PATH": f"{elan / 'bin'}:/usr/local/bin:/usr/bin:/bin"},
        )
        return argv, self._scratch, env

    def start(self) -> None:
        self.kill()
        argv, cwd, env = self._command()
        self._proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._reader = ResponseReader()
        self.requests = 0
        self.starts += 1

    def request(self, obj: dict[str, Any], timeout: float) -> dict[str, Any]:
        if not self.alive:
            self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(encode_request(obj))
            proc.stdin.flush()
            fd = proc.stdout.fileno()
        except (OSError, ValueError) as exc:
            self.kill()
            raise LeanCrashed(f"the REPL closed its input: {exc}") from None
        self.requests += 1
        deadline = time.monotonic() + timeout
        while True:
            try:
                chunk, code = read_some(proc, fd, deadline)
            except ReadTimeout:
                self.kill()
                raise LeanTimeout() from None
            except ReadClosed:
                raise LeanCrashed("the REPL was stopped") from None
            if not chunk:
                leftover = list(self._reader.close())
                self.kill()
                if leftover:
                    return leftover[0]
                raise LeanCrashed(f"the REPL exited with status {code}")
            try:
                replies = list(self._reader.feed(chunk.decode("utf-8", errors="replace")))
            except ProtocolError as exc:
                self.kill()
                raise LeanCrashed(str(exc)) from None
            if replies:
                return replies[0]

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def kill(self) -> None:
        """Kill the process (and its process group). Safe from any thread, and twice."""
        proc, self._proc = self._proc, None
        if proc is not None:
            kill_process(proc)

    def close(self) -> None:
        """Kill the process and remove its scratch folder."""
        self.kill()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


class LeanRepl:
    """The Lean 4 verifier; see the module docstring.

    ``trusted_header=True`` skips the header screen (for headers the caller wrote);
    ``untrusted=True`` runs the REPL confined, with ``memory_cap_mb`` as its memory limit, and
    raises :class:`~lemmata.errors.ConfinementUnavailable` here when that cannot work.
    """

    backend = "lean"

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        project: str | Path | None = None,
        timeout_s: float = 60.0,
        header_timeout_s: float = 600.0,
        recycle_after: int = 500,
        memory_cap_mb: int = 8192,
        allowed_axioms: frozenset[str] = ALLOWED_AXIOMS,
        trusted_header: bool = False,
        untrusted: bool = False,
    ) -> None:
        confinement = None
        if untrusted:
            from lemmata.confine import Confinement

            confinement = Confinement(memory_mb=memory_cap_mb + 1024, memory_limit="data")
            confinement.require()
        self.process = LeanProcess(
            find_repl(command, project), cwd=project, confinement=confinement
        )
        self.trusted_header = trusted_header
        self.untrusted = untrusted
        self.timeout_s = timeout_s
        self.header_timeout_s = header_timeout_s
        self.recycle_after = recycle_after
        self.memory_cap_mb = memory_cap_mb
        self.allowed_axioms = allowed_axioms
        self._envs: dict[str, int | None] = {}
        self._version = ""

    def version(self) -> str:
        return self._version

    def close(self) -> None:
        self.process.close()
        self._envs.clear()

    def screen(self, header: str, statement: str, proof: str | None = None) -> FailureMode | None:
        """Why this input may not be sent to Lean (header unless trusted, statement, proof);
        ``None`` when it may."""
        return (
            (None if self.trusted_header else screen_lean_header(header))
            or screen_lean_statement(statement)
            or (screen_lean_proof(proof) if proof is not None else None)
        )

    def _request(self, obj: dict[str, Any], timeout: float) -> Any:
        if self.process.alive and (
            self.process.requests >= self.recycle_after
            or self.process.rss_mb() > self.memory_cap_mb
        ):
            self.process.kill()
        if not self.process.alive:
            self._envs.clear()
        try:
            return parse_response(self.process.request(obj, timeout))
        except ProtocolError as exc:
            self.process.kill()
            self._envs.clear()
            raise LeanCrashed(str(exc)) from None

    # -- the REPL's own requests, one method each ---------------------------------------
    # These send what they are given, unscreened: they are for code the caller wrote. Input
    # from elsewhere goes through check/open/run, which screen it.

    def command(
        self,
        code: str,
        env: int | None = None,
        *,
        all_tactics: bool = False,
        timeout: float | None = None,
    ) -> CommandResponse | ReplError:
        """Run Lean commands (``{"cmd"}``), in ``env`` or a fresh environment."""
        return self._raw({"cmd": code}, env=env, all_tactics=all_tactics, timeout=timeout)

    def run_file(
        self,
        path: str | Path,
        env: int | None = None,
        *,
        all_tactics: bool = False,
        timeout: float | None = None,
    ) -> CommandResponse | ReplError:
        """Run a whole ``.lean`` file (file mode, ``{"path"}``)."""
        return self._raw({"path": str(path)}, env=env, all_tactics=all_tactics, timeout=timeout)

    def tactic(
        self, tactic: str, proof_state: int, timeout: float | None = None
    ) -> TacticResponse | ReplError:
        """Run one tactic on a proof state (tactic mode)."""
        return self._raw({"tactic": tactic, "proofState": proof_state}, timeout=timeout)

    def pickle_env(self, env: int, path: str | Path) -> CommandResponse | ReplError:
        """Save an environment to an ``.olean`` file."""
        return self._raw({"pickleTo": str(path), "env": env})

    def unpickle_env(self, path: str | Path) -> CommandResponse | ReplError:
        """Load an environment saved by :meth:`pickle_env`; the reply names its new ``env``."""
        return self._raw({"unpickleEnvFrom": str(path)})

    def pickle_proof_state(self, proof_state: int, path: str | Path) -> Any:
        """Save a proof state to an ``.olean`` file."""
        return self._raw({"pickleTo": str(path), "proofState": proof_state})

    def unpickle_proof_state(self, path: str | Path, env: int | None = None) -> Any:
        """Load a proof state saved by :meth:`pickle_proof_state`; it gets a new number."""
        return self._raw({"unpickleProofStateFrom": str(path)}, env=env)

    def _raw(
        self,
        request: dict[str, Any],
        *,
        env: int | None = None,
        all_tactics: bool = False,
        timeout: float | None = None,
    ) -> Any:
        if env is not None:
            request["env"] = env
        if all_tactics:
            request["allTactics"] = True
        return self._request(request, timeout or self.timeout_s)

    def _env_for(self, header: str) -> int | None:
        """The environment after ``header`` (``None``: the REPL's empty one)."""
        if not header.strip():
            return None
        if header in self._envs and self.process.alive:
            return self._envs[header]
        reply = self._request({"cmd": header}, self.header_timeout_s)
        if isinstance(reply, ReplError):
            raise _HeaderFailed(reply.message)
        if not isinstance(reply, CommandResponse) or reply.errors:
            text = (
                reply.errors[0].text
                if isinstance(reply, CommandResponse) and reply.errors
                else "no environment"
            )
            raise _HeaderFailed(f"the header does not compile: {text}")
        self._envs[header] = reply.env
        return reply.env

    @traced_check
    def check(
        self, header: str, statement: str, proof: str, timeout: float | None = None
    ) -> VerifyResult:
        started = time.monotonic()
        limit = timeout or self.timeout_s

        def result(status: Status, failure: FailureMode | None = None, **kw: Any) -> VerifyResult:
            return VerifyResult(
                status=status,
                backend=self.backend,
                failure_mode=failure,
                elapsed_s=round(time.monotonic() - started, 4),
                version=self._version,
                **kw,
            )

        name_match = _NAME.match(statement)
        if not name_match:
            return result(
                Status.FAIL,
                FailureMode(
                    FailureKind.SYNTAX_ERROR,
                    "the statement must start with `theorem NAME` or `lemma NAME`",
                ),
            )
        name = name_match.group(1)
        body = proof.strip()
        screened = self.screen(header, statement, body)
        if screened is not None:
            return result(Status.FAIL, screened)
        statement_text = statement.rstrip()
        if statement_text.endswith(":="):
            statement_text = statement_text[:-2].rstrip()
        code = f"{statement_text} := {body}\n\n#print axioms {name}"
        try:
            try:
                env = self._env_for(header)
            except _HeaderFailed as exc:
                return result(
                    Status.UNAVAILABLE, FailureMode(FailureKind.HEADER_ERROR, exc.message)
                )
            request: dict[str, Any] = {"cmd": code}
            if env is not None:
                request["env"] = env
            reply = self._request(request, limit)
        except LeanTimeout:
            self._envs.clear()
            return result(
                Status.TIMEOUT, FailureMode(FailureKind.TIMEOUT, f"no answer within {limit:g}s")
            )
        except LeanCrashed as exc:
            self._envs.clear()
            return result(Status.CRASH, FailureMode(FailureKind.CRASH, str(exc)))
        return self.judge(reply, name, statement_text, result, proof=body)

    def judge(
        self, reply: Any, name: str, statement: str, result: Any = None, *, proof: str = ""
    ) -> VerifyResult:
        """The verdict on the REPL's reply to ``statement := proof`` (separate so fixtures can
        drive it). A failure names the proof line it is on (``sentence``, and ``index`` among
        the proof's tactic lines) and the goals there: those the message shows (``unsolved
        goals ...``), else those the REPL's tactic info gives before the tactic at that spot.
        """
        if result is None:
            result = functools.partial(_verdict, self.backend, self._version)
        if isinstance(reply, ReplError):
            return result(Status.FAIL, classify_lean(reply.message))
        assert isinstance(reply, CommandResponse | TacticResponse)
        offset = statement.count("\n")  # lines of the statement before the proof starts
        messages = tuple(
            Message(m.severity, m.text, (m.line - offset) if m.line else m.line, m.column)
            for m in reply.messages
        )
        errors = [m for m in messages if m.severity == "error"]
        if errors:
            e, raw = errors[0], reply.errors[0]
            sentence, index = _locate(statement, proof, raw.line, raw.column)
            goals = goals_in_message(raw.text) or _goals_before(reply, raw)
            failure = classify_lean(
                e.text, e.line, e.column, sentence, sentence=sentence, index=index, goals=goals
            )
            return result(
                Status.FAIL,
                failure,
                messages=messages,
                goals=goals or tuple(s.goal for s in reply.sorries),
            )
        if reply.sorries or any(
            "declaration uses 'sorry'" in m.text or "declaration uses `sorry`" in m.text
            for m in messages
        ):
            return result(
                Status.FAIL,
                FailureMode(FailureKind.USES_SORRY, "the proof uses sorry"),
                messages=messages,
                sorries=len(reply.sorries),
            )
        axioms = parse_axioms(reply.messages, name)
        if axioms is None:
            return result(
                Status.FAIL,
                FailureMode(
                    FailureKind.STATEMENT_CHANGED,
                    f"Lean did not report axioms of {name!r}: the theorem was not declared",
                ),
                messages=messages,
            )
        bad = [a for a in axioms if a not in self.allowed_axioms]
        if bad:
            kind = FailureKind.USES_SORRY if "sorryAx" in bad else FailureKind.BAD_AXIOM
            return result(
                Status.FAIL,
                FailureMode(kind, f"depends on disallowed axioms: {', '.join(bad)}"),
                messages=messages,
                axioms=tuple(axioms),
            )
        return result(Status.PASS, messages=messages, axioms=tuple(axioms))

    def open(self, header: str, statement: str, timeout: float | None = None) -> LeanSession:
        """Open ``statement`` in tactic mode. A header that does not compile or a statement
        that does not elaborate raises ``ValueError`` saying which (as ``CoqTop.open``)."""
        limit = timeout or self.timeout_s
        refused = self.screen(header, statement)
        if refused is not None:
            raise ValueError(refused.message)
        try:
            env = self._env_for(header)
        except _HeaderFailed as exc:
            raise ValueError(f"the header does not load: {exc.message}") from None
        statement_text = statement.rstrip().removesuffix(":=").rstrip()
        request: dict[str, Any] = {"cmd": f"{statement_text} := by sorry"}
        if env is not None:
            request["env"] = env
        reply = self._request(request, limit)
        if not isinstance(reply, CommandResponse) or reply.errors or not reply.sorries:
            problem = (
                reply.message
                if isinstance(reply, ReplError)
                else (
                    reply.errors[0].text
                    if isinstance(reply, CommandResponse) and reply.errors
                    else "no goal"
                )
            )
            raise ValueError(f"the statement does not elaborate: {problem}")
        sorry = reply.sorries[0]
        assert sorry.proof_state is not None
        root = StepResult(sorry.proof_state, (sorry.goal,), "open")
        return LeanSession(self, root, limit)


def _verdict(
    backend: str, version: str, status: Status, failure: FailureMode | None = None, **kw: Any
) -> VerifyResult:
    return VerifyResult(status=status, backend=backend, failure_mode=failure, version=version, **kw)


def _tactic_lines(proof: str) -> list[tuple[int, int, str]]:
    """The proof's tactic lines as ``(line, column, text)``, line 0-based in ``proof``: every
    line with text once ``--`` comments and the opening ``by`` are taken off."""
    out = []
    for n, raw in enumerate(proof.split("\n")):
        text = re.sub(r"--.*$", "", raw).rstrip()
        start = len(text) - len(text.lstrip())
        if n == 0 and (m := re.match(r"\s*by\b\s*", text)):
            start = m.end()
        if text[start:]:
            out.append((n, start, text[start:]))
    return out


def _locate(
    statement: str, proof: str, line: int | None, column: int | None
) -> tuple[str | None, int | None]:
    """The tactic line of ``proof`` that a position in ``statement := proof`` falls on, and its
    index among the tactic lines; ``(None, None)`` outside them (the statement, ``by``)."""
    if line is None or column is None or line < 1:
        return None, None
    row = line - 1 - statement.count("\n")
    if row == 0:  # the proof's first line follows the statement's last one and " := "
        column -= len(statement.rsplit("\n", 1)[-1]) + len(" := ")
    for index, (n, start, text) in enumerate(_tactic_lines(proof)):
        if n == row and start <= column <= start + len(text):
            return text, index
    return None, None


def _goals_before(reply: CommandResponse | TacticResponse, error: LeanMessage) -> tuple[str, ...]:
    """The goals before the tactic at ``error``'s position, when the reply has tactic info
    (``allTactics``)."""
    for info in getattr(reply, "tactics", ()):
        if (info.line, info.column) == (error.line, error.column):
            return goals_in_message(info.goals)
    return ()


class _HeaderFailed(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LeanSession(SessionStates):
    """Tactic mode: every ``proofState`` the REPL hands out stays usable, so backtracking is
    running from an earlier one."""

    def __init__(self, repl: LeanRepl, root: StepResult, timeout_s: float) -> None:
        super().__init__(root)
        self.repl = repl
        self.timeout_s = timeout_s
        self._starts = repl.process.starts

    def run(
        self, tactic: str, state: int | None = None, timeout: float | None = None
    ) -> StepResult:
        """Run ``tactic`` on ``state`` (default: the latest). A failure's ``sentence`` is the
        tactic, its ``index`` the tactic's position in the proof from the root, its ``goals``
        those of ``state``."""
        here = self._start(state)
        start = here.state
        refused = screen_lean_tactic(tactic)
        if refused is not None:
            return failed_step(here, "error", self._at(refused, tactic, start), tactic)
        if self.repl.process.starts != self._starts or not self.repl.process.alive:
            failure = FailureMode(FailureKind.CRASH, "the REPL was restarted: open a new session")
            return failed_step(here, "crash", self._at(failure, tactic, start), tactic)
        try:
            reply = self.repl._request(
                {"tactic": tactic, "proofState": start}, timeout or self.timeout_s
            )
        except LeanTimeout:
            failure = FailureMode(FailureKind.TIMEOUT, "tactic timed out", tactic=tactic)
            return failed_step(here, "timeout", self._at(failure, tactic, start), tactic)
        except LeanCrashed as exc:
            failure = self._at(FailureMode(FailureKind.CRASH, str(exc)), tactic, start)
            return failed_step(here, "crash", failure, tactic)
        return self.apply(reply, tactic, start)

    def _at(self, failure: FailureMode, tactic: str, start: int) -> FailureMode:
        return replace(
            failure,
            sentence=tactic,
            index=len(self.proof_of(start)),
            goals=self.states[start].goals,
        )

    def apply(self, reply: Any, tactic: str, start: int) -> StepResult:
        """Record the REPL's reply to a tactic (separate so fixtures can drive it)."""
        here = self.states[start]
        if isinstance(reply, ReplError):
            failure = classify_lean(reply.message, tactic=tactic)
            return failed_step(
                here,
                "error",
                self._at(failure, tactic, start),
                tactic,
                (Message("error", reply.message),),
            )
        if not isinstance(reply, TacticResponse):
            raise LeanCrashed("the REPL answered a tactic with a command reply")
        messages = tuple(Message(m.severity, m.text, m.line, m.column) for m in reply.messages)
        if reply.errors:
            failure = classify_lean(reply.errors[0].text, tactic=tactic)
            return failed_step(here, "error", self._at(failure, tactic, start), tactic, messages)
        status = "finished" if reply.completed else "open"
        if not reply.goals and not reply.completed:
            # "Incomplete: contains metavariable(s)" / "contains sorry": no goals, not a proof.
            failure = classify_lean(reply.proof_status or "incomplete", tactic=tactic)
            failure = self._at(failure, tactic, start)
            step = StepResult(reply.proof_state, (), "error", messages, failure, tactic, start)
            return self._record(step, advance=False)
        step = StepResult(reply.proof_state, reply.goals, status, messages, None, tactic, start)  # type: ignore[arg-type]
        return self._record(step)

    def close(self) -> None:
        """Proof states cost memory in the REPL but are freed with its process."""
