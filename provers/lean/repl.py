"""``LeanRepl``: Lean 4 through the leanprover-community REPL, as a
:class:`~lemmata.provers.base.Verifier`.

The REPL runs as ``repl`` (a binary on PATH or named by ``command``) or ``lake exe repl`` in a
Lean project (``project``). One process per verifier; a header (``import Mathlib`` ...) is run
once and its environment number kept, so later checks under the same header start from it.
Each request has a hard time limit: past it the process is killed (``TIMEOUT``) and the next
request starts a new one. A process that dies is a ``CRASH``. The process is recycled after
``recycle_after`` requests or when it grows past ``memory_cap_mb``. The process handling is
the shared layer's (:mod:`lemmata.provers.process`), and so are the errors that escape
``open`` and the raw requests (:class:`~lemmata.errors.ProverTimeout`,
:class:`~lemmata.errors.HeaderFailed`, ...). :meth:`LeanRepl.version` is the version Lean
itself reports (``lean --version``), recorded in every verdict.

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

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.errors import (
    HeaderFailed,
    InputRefused,
    ProverCrashed,
    ProverError,
    ProverTimeout,
    StatementFailed,
    ToolNotFound,
)
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
from lemmata.provers.process import ProverProcess, Stage, Verdict, error_verdict
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
    "lean_version",
    "parse_axioms",
    "screen_lean_proof",
]

ALLOWED_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
_NAME = re.compile(r"^\s*(?:theorem|lemma)\s+([^\s(:{\[]+)")
_LEAN_VERSION = re.compile(r"\bversion\s+v?([0-9][^\s,)]*)")
_AXIOMS_MSG = re.compile(r"'(.+?)' depends on axioms: \[(.*)\]", re.S)


# The process layer's errors, under the names this module has always used.
LeanTimeout = ProverTimeout
LeanCrashed = ProverCrashed


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


def lean_version(repl: str | None = None, project: str | Path | None = None) -> str:
    """The version of the Lean a REPL runs (``"4.19.0"``), from ``lean --version``: in
    ``project`` through ``lake env`` (the project's own toolchain), else the ``lean`` beside
    the ``repl`` binary (a REPL built in a toolchain's tree), else the one on PATH run in the
    project (elan follows its ``lean-toolchain``). ``""`` when no Lean answers."""
    commands: list[list[str]] = []
    lake = shutil.which("lake")
    if project is not None and lake is not None:
        commands.append([lake, "env", "lean", "--version"])
    if repl is not None and (beside := Path(repl).resolve().with_name("lean")).is_file():
        commands.append([str(beside), "--version"])
    if (lean := shutil.which("lean")) is not None:
        commands.append([lean, "--version"])
    for argv in commands:
        try:
            done = subprocess.run(
                argv,
                cwd=project,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = _LEAN_VERSION.search(done.stdout)
        if done.returncode == 0 and m:
            return m.group(1)
    return ""


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


class LeanProcess(ProverProcess[dict[str, Any]]):
    """One REPL process on the shared process layer (:mod:`lemmata.provers.process`):
    :meth:`request` sends an object and returns the decoded reply. With a ``confinement`` it
    runs confined (its scratch folder is made here, and the working folder ``cwd``, the
    toolchain and the files named in ``argv`` are visible read-only)."""

    scratch_prefix = "lemmata-lean-"

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str | Path | None = None,
        *,
        confinement: Confinement | None = None,
    ) -> None:
        super().__init__(argv, cwd, name="the REPL", confinement=confinement)
        self._reader = ResponseReader()

    def launch(self) -> tuple[list[str], str, dict[str, str] | None]:
        # Unconfined, the REPL runs where it is told (``lake exe repl`` in its project), or
        # here: file mode takes paths relative to it.
        if self.confinement is None:
            return self.argv, self.cwd or os.getcwd(), None
        scratch = self.scratch()
        elan = Path.home() / ".elan"
        visible = [a for a in self.argv[1:] if a.startswith("/") and Path(a).exists()]
        visible += [p for p in (self.cwd, str(elan)) if p]
        # ``lake exe repl`` runs in its project, and finds its toolchain through elan.
        argv = self.confinement.command(self.argv, scratch, read_only=visible, chdir=self.cwd)
        env = self.confinement.environment(
            scratch,
            {"ELAN_HOME": str(elan), "PATH": f"{elan / 'bin'}:/usr/local/bin:/usr/bin:/bin"},
        )
        return argv, scratch, env

    def reset(self) -> None:
        self._reader = ResponseReader()

    def take(self, chunk: bytes) -> dict[str, Any] | None:
        if not chunk:
            return None
        try:
            replies = list(self._reader.feed(chunk.decode("utf-8", errors="replace")))
        except ProtocolError as exc:
            raise LeanCrashed(str(exc)) from None
        return replies[0] if replies else None

    def at_exit(self, status: int | None) -> dict[str, Any]:
        leftover = list(self._reader.close())
        if leftover:
            return leftover[0]
        raise LeanCrashed(f"the REPL exited with status {status}")

    def request(self, obj: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send ``obj`` and return the REPL's reply, within ``timeout`` seconds."""
        self.write(encode_request(obj))
        return self.read(time.monotonic() + timeout)


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
        self._project = str(project) if project is not None else None
        self._version: str | None = None

    def version(self) -> str:
        """The Lean version the REPL runs (``"4.19.0"``), asked of Lean once
        (:func:`lean_version`); ``""`` when no Lean answers."""
        if self._version is None:
            self._version = lean_version(self.process.argv[0], self._project)
        return self._version

    def close(self) -> None:
        self.process.close()
        self._envs.clear()

    def screen(self, header: str, statement: str, proof: str | None = None) -> FailureMode | None:
        """Why this input may not be sent to Lean (header unless trusted, statement, proof);
        ``None`` when it may."""
        return next((f for _, f in self._screens(header, statement, proof) if f), None)

    def _request(self, obj: dict[str, Any], timeout: float) -> Any:
        if self.process.worn(self.process.requests, self.recycle_after, self.memory_cap_mb):
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
            raise HeaderFailed(f"the header does not load: {reply.message}")
        if not isinstance(reply, CommandResponse) or reply.errors:
            text = (
                reply.errors[0].text
                if isinstance(reply, CommandResponse) and reply.errors
                else "no environment"
            )
            raise HeaderFailed(f"the header does not load: {text}")
        self._envs[header] = reply.env
        return reply.env

    @traced_check
    def check(
        self, header: str, statement: str, proof: str, timeout: float | None = None
    ) -> VerifyResult:
        limit = timeout or self.timeout_s
        result = Verdict(self.backend, self.version)
        name_match = _NAME.match(statement)
        if not name_match:
            return result(
                Status.FAIL,
                FailureMode(
                    FailureKind.SYNTAX_ERROR,
                    "the statement must start with `theorem NAME` or `lemma NAME`",
                ),
                stage="statement",
            )
        name = name_match.group(1)
        body = proof.strip()
        for stage, refused in self._screens(header, statement, body):
            if refused is not None:
                return result(Status.FAIL, refused, stage=stage)
        statement_text = statement.rstrip().removesuffix(":=").rstrip()
        code = f"{statement_text} := {body}\n\n#print axioms {name}"
        try:
            env = self._env_for(header)
            request: dict[str, Any] = {"cmd": code}
            if env is not None:
                request["env"] = env
            reply = self._request(request, limit)
        except ProverError as exc:
            if not isinstance(exc, HeaderFailed):
                self._envs.clear()
            return error_verdict(result, exc, limit)
        return self.judge(reply, name, statement_text, result, proof=body)

    def _screens(
        self, header: str, statement: str, proof: str | None = None
    ) -> Iterator[tuple[Stage, FailureMode | None]]:
        """Each part's screen, in order: header (unless trusted), statement, proof."""
        yield "header", None if self.trusted_header else screen_lean_header(header)
        yield "statement", screen_lean_statement(statement)
        if proof is not None:
            yield "proof", screen_lean_proof(proof)

    def judge(
        self, reply: Any, name: str, statement: str, result: Any = None, *, proof: str = ""
    ) -> VerifyResult:
        """The verdict on the REPL's reply to ``statement := proof`` (separate so fixtures can
        drive it). A failure names the proof line it is on (``sentence``, and ``index`` among
        the proof's tactic lines) and the goals there: those the message shows (``unsolved
        goals ...``), else those the REPL's tactic info gives before the tactic at that spot.
        """
        if result is None:
            result = Verdict(self.backend, self.version)
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
                stage="statement" if _in_signature(statement, raw.line, raw.column) else "proof",
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
        """Open ``statement`` in tactic mode. A header that does not load raises
        :class:`~lemmata.errors.HeaderFailed`, a statement that does not elaborate
        :class:`~lemmata.errors.StatementFailed`, input the screen refuses
        :class:`~lemmata.errors.InputRefused` (all three ``ValueError`` too, as
        ``CoqTop.open``); a REPL that times out or dies, the process layer's errors."""
        limit = timeout or self.timeout_s
        for stage, refused in self._screens(header, statement):
            if refused is not None:
                raise InputRefused(refused.message, stage)
        env = self._env_for(header)
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
            kind = classify_lean(problem).kind.value if problem != "no goal" else "other"
            raise StatementFailed(f"the statement does not elaborate: {problem}", kind)
        sorry = reply.sorries[0]
        assert sorry.proof_state is not None
        root = StepResult(sorry.proof_state, (sorry.goal,), "open")
        return LeanSession(self, root, limit)


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


def _in_signature(statement: str, line: int | None, column: int | None) -> bool:
    """Whether a position in ``statement := proof`` falls in the statement's signature: after
    ``theorem NAME`` and before `` := `` (Lean puts a kernel error on the declaration's first
    word, an error of the proof after ``:=``)."""
    name = _NAME.match(statement)
    if name is None or line is None or column is None or line < 1:
        return False
    lines = statement.split("\n")
    if line > len(lines):
        return False
    offset = sum(len(text) + 1 for text in lines[: line - 1]) + column
    return name.end() <= offset < len(statement)


def _goals_before(reply: CommandResponse | TacticResponse, error: LeanMessage) -> tuple[str, ...]:
    """The goals before the tactic at ``error``'s position, when the reply has tactic info
    (``allTactics``)."""
    for info in getattr(reply, "tactics", ()):
        if (info.line, info.column) == (error.line, error.column):
            return goals_in_message(info.goals)
    return ()


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
