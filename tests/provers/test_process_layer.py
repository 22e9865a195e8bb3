"""The process layer beneath the Coq and Lean back-ends (lemmata.provers.process): process
groups, deadlines, memory, the typed errors that escape sessions, and the stage a verdict is
about, which the batch runner reads instead of the message's words."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED

from lemmata import errors
from lemmata.errors import (
    HeaderFailed,
    InputRefused,
    LemmataError,
    ProverCrashed,
    ProverError,
    ProverTimeout,
    StatementFailed,
)
from lemmata.provers import CoqTop
from lemmata.provers.coq import CoqCrashed, CoqProcess, CoqTimeout
from lemmata.provers.lean import LeanCrashed, LeanProcess, LeanRepl, LeanTimeout
from lemmata.provers.process import ProverProcess, Verdict, stage_of
from lemmata.provers.result import FailureKind, FailureMode, Status, VerifyResult
from lemmata.provers.runner import Theorem, prove_one

REPLAY = Path(__file__).parents[1] / "lean_replay.py"
FIXTURES = SHARED / "fixtures" / "lean-repl"


class Lines(ProverProcess[bytes]):
    """The smallest back-end: one line of output is one reply."""

    def __init__(self, script: str, **kw: Any) -> None:
        super().__init__(["/bin/sh", "-c", script], name="sh", **kw)
        self._buffer = b""

    def reset(self) -> None:
        self._buffer = b""

    def take(self, chunk: bytes) -> bytes | None:
        self._buffer += chunk
        line, newline, rest = self._buffer.partition(b"\n")
        if not newline:
            return None
        self._buffer = rest
        return line


def _gone(pid: int) -> bool:
    """The process is gone, or a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


# -- the shared layer ---------------------------------------------------------------------


def test_kill_takes_the_whole_process_group() -> None:
    proc = Lines("sleep 300 & echo $!; wait")
    proc.start()
    child = int(proc.read(time.monotonic() + 10))
    assert not _gone(child)  # the prover's own child is running
    proc.kill()
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the prover's child outlived the kill"
    assert not proc.alive
    proc.kill()  # twice is fine
    proc.close()


def test_a_read_past_its_deadline_is_a_typed_timeout_and_kills() -> None:
    proc = Lines("read line; sleep 300")
    proc.start()
    proc.write(b"hello\n")
    started = time.monotonic()
    with pytest.raises(ProverTimeout) as info:
        proc.read(time.monotonic() + 0.4)
    assert time.monotonic() - started < 5
    assert isinstance(info.value, LemmataError) and info.value.code == "prover_timeout"
    assert "sh" in str(info.value) and not proc.alive
    # The next write starts a fresh process.
    proc.write(b"again\n")
    assert proc.alive and proc.starts == 2
    proc.close()


def test_a_prover_that_exits_is_a_typed_crash() -> None:
    proc = Lines("exit 7")
    proc.start()
    with pytest.raises(ProverCrashed, match="status 7") as info:
        proc.read(time.monotonic() + 10)
    assert info.value.code == "prover_crashed" and not proc.alive


def test_a_prover_that_cannot_start_is_a_typed_crash(tmp_path: Path) -> None:
    proc = Lines("true", cwd=tmp_path / "gone")
    with pytest.raises(ProverCrashed, match="could not start"):
        proc.start()


def test_memory_is_read_and_recycling_follows_it() -> None:
    hold = "x = bytearray(64 << 20); x[::4096] = b'1' * len(x[::4096]); print('ready'); input()"
    proc = Lines(f'exec {sys.executable} -u -c "{hold}"')
    proc.start()
    assert proc.read(time.monotonic() + 30) == b"ready"
    assert 60 < proc.rss_mb() < 1024  # the 64 MiB it holds, read from /proc
    assert proc.worn(0, 10, memory_cap_mb=32)  # over the cap
    assert not proc.worn(0, 10, memory_cap_mb=4096)
    assert proc.worn(10, 10, memory_cap_mb=4096)  # used up
    proc.close()
    assert proc.rss_mb() == 0.0


def test_a_scratch_folder_is_made_and_removed() -> None:
    proc = Lines("pwd")
    proc.start()
    where = proc.read(time.monotonic() + 10).decode()
    assert Path(where).name.startswith("lemmata-prover-") and Path(where).is_dir()
    proc.close()
    assert not Path(where).exists()


def test_a_confined_prover_outlives_the_thread_that_started_it(coqtop_path: str) -> None:
    """A session opened in one request's thread is used by the next: the confined coqtop
    must not die with the first thread (bubblewrap's --die-with-parent counts threads)."""
    import threading

    from lemmata.confine import Confinement

    why_not = Confinement().unavailable()
    if why_not is not None:
        pytest.skip(f"no confinement here: {why_not}")
    coq = CoqTop(coqtop_path, untrusted=True, timeout_s=30)
    try:
        opened = threading.Thread(target=lambda: coq.check("", "Theorem a : True.", "exact I."))
        opened.start()
        opened.join()
        time.sleep(0.5)
        assert coq.process.alive and coq.process.confinement is not None
        assert coq.check("", "Theorem b : True.", "exact I.").ok
        assert coq.process.starts == 1  # the same sandboxed coqtop answered both
    finally:
        coq.close()


def test_both_back_ends_stand_on_the_shared_layer() -> None:
    assert issubclass(CoqProcess, ProverProcess) and issubclass(LeanProcess, ProverProcess)
    # The old names are the shared layer's errors, so old ``except`` clauses still catch.
    assert CoqTimeout is ProverTimeout is LeanTimeout
    assert CoqCrashed is ProverCrashed is LeanCrashed


# -- the errors ------------------------------------------------------------------------------


def _snake(name: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Error")).lower()


@pytest.mark.parametrize(
    ("cls", "code", "value_error"),
    [
        (ProverError, "prover", False),
        (ProverTimeout, "prover_timeout", False),
        (ProverCrashed, "prover_crashed", False),
        (HeaderFailed, "header_failed", True),
        (StatementFailed, "statement_failed", True),
        (InputRefused, "input_refused", True),
    ],
)
def test_each_escaping_error_is_a_lemmata_error_with_its_code(
    cls: type[LemmataError], code: str, value_error: bool
) -> None:
    assert issubclass(cls, LemmataError) and cls.code == code == _snake(cls.__name__)
    assert issubclass(cls, ValueError) is value_error  # old callers caught ValueError
    assert cls.__name__ in errors.__all__
    assert f"``{cls.__name__}``" in (errors.__doc__ or "")  # in the module's table


# -- Coq, end to end through the shared layer ------------------------------------------------


def test_coq_sessions_raise_typed_errors(coq: CoqTop) -> None:
    with pytest.raises(HeaderFailed, match="NoSuchLib") as header:
        coq.open("Require Import NoSuchLib.", "Theorem t : True.")
    assert header.value.code == "header_failed" and isinstance(header.value, ValueError)
    assert header.value.sentence == "Require Import NoSuchLib."
    with pytest.raises(StatementFailed, match="does not elaborate") as stmt:
        coq.open("", "Theorem t : 1 = true.")
    assert stmt.value.kind == "type_mismatch"
    with pytest.raises(StatementFailed, match="never closed"):  # Coq's SentenceError, mapped
        coq.open("", "Theorem t : True. (* open")
    with pytest.raises(InputRefused) as refused:
        coq.open('Redirect "/tmp/x" Print nat.', "Theorem t : True.")
    assert refused.value.stage == "header" and refused.value.code == "input_refused"
    session = coq.open("", "Theorem t : True.")
    with pytest.raises(InputRefused):
        session.query("intros.")
    assert session.run("exact I.").finished
    session.close()


def test_coq_checks_through_the_shared_layer(coq: CoqTop) -> None:
    assert isinstance(coq.process, ProverProcess)
    r = coq.check("", "Theorem t : forall n : nat, n + 0 = n.", "induction n; simpl; auto.")
    assert r.status is Status.PASS and stage_of(r) is None
    assert coq.process.rss_mb() > 1 and coq.process.pid is not None
    bad = coq.check("", "Theorem t : 1 = true.", "reflexivity.")
    assert bad.status is Status.FAIL and stage_of(bad) == "statement"
    header = coq.check("Require Import NoSuchLib.", "Theorem t : True.", "exact I.")
    assert header.status is Status.UNAVAILABLE and stage_of(header) == "header"
    assert header.failure_mode is not None
    assert header.failure_mode.kind is FailureKind.HEADER_ERROR
    assert header.failure_mode.sentence == "Require Import NoSuchLib."  # named, not quoted
    wrong = coq.check("", "Theorem t : 1 = 2.", "reflexivity.")
    assert wrong.status is Status.FAIL and stage_of(wrong) == "proof"
    # A hard deadline shorter than coqtop's answer: the process layer's timeout, as a verdict.
    pid = coq.process.pid
    slow = coq.check("", "Theorem s : True.", "do 100000000 idtac. exact I.", timeout=0.5)
    assert slow.status is Status.TIMEOUT and slow.failure_mode is not None
    assert slow.failure_mode.kind is FailureKind.TIMEOUT
    assert coq.check("", "Theorem t : True.", "exact I.").ok  # and the next check goes on
    assert coq.process.pid != pid


# -- the runner reads the stage, not the words ------------------------------------------------


class _Scripted:
    """A verifier that fails every proof the same way, and counts its checks."""

    backend = "coq"

    def __init__(self, failure: FailureMode, stage: str) -> None:
        self.failure, self.stage, self.calls = failure, stage, 0

    def version(self) -> str:
        return "scripted"

    def check(self, header: str, statement: str, proof: str, timeout: float | None = None):
        self.calls += 1
        return Verdict(self.backend, "scripted")(Status.FAIL, self.failure, stage=self.stage)

    def close(self) -> None: ...


def test_the_runner_reads_the_stage_not_the_word_statement() -> None:
    theorem = Theorem("t", "Theorem t : forall n : nat, n + 0 = n.")
    # A proof failure whose message happens to say "statement" is not a statement failure:
    # the portfolio goes on.
    wordy = _Scripted(
        FailureMode(FailureKind.SYNTAX_ERROR, "the statement of this tactic is malformed"),
        "proof",
    )
    r = prove_one(wordy, theorem, 30)  # type: ignore[arg-type]
    assert r.status == "failed" and r.attempts == wordy.calls > 1
    # A statement failure stops at once, whatever its words.
    quiet = _Scripted(FailureMode(FailureKind.TYPE_MISMATCH, "1 and true differ"), "statement")
    r = prove_one(quiet, theorem, 30)  # type: ignore[arg-type]
    assert r.attempts == quiet.calls == 1 and r.status == "failed"
    assert r.failure_mode is not None and r.failure_mode["message"] == "1 and true differ"


def test_the_stage_survives_a_verdict_without_one() -> None:
    plain = VerifyResult(Status.FAIL, "other", failure_mode=FailureMode(FailureKind.OTHER))
    assert stage_of(plain) is None
    made = Verdict("coq", "1")(Status.FAIL, FailureMode(FailureKind.OTHER))
    assert stage_of(made) == "proof"


# -- Lean: typed errors and the version ------------------------------------------------------


def _replay(tmp_path: Path, *replies: dict[str, Any]) -> list[str]:
    path = tmp_path / "script.expected.out"
    path.write_text("\n\n".join(json.dumps(r) for r in replies) + "\n")
    return [sys.executable, str(REPLAY), str(path)]


def _error(text: str) -> dict[str, Any]:
    pos = {"line": 1, "column": 0}
    return {"severity": "error", "pos": pos, "endPos": pos, "data": text}


def test_lean_sessions_raise_typed_errors(tmp_path: Path) -> None:
    repl = LeanRepl(_replay(tmp_path, {"messages": [_error("unknown package 'Nope'")]}))
    with pytest.raises(HeaderFailed, match="Nope"):
        repl.open("import Nope", "theorem t : True")
    repl.close()
    repl = LeanRepl(_replay(tmp_path, {"messages": [_error("unknown identifier 'foo'")], "env": 0}))
    with pytest.raises(StatementFailed, match="does not elaborate") as info:
        repl.open("", "theorem t : foo = 1")
    assert info.value.kind == "unknown_identifier" and isinstance(info.value, ValueError)
    with pytest.raises(InputRefused) as refused:
        repl.open("", 'theorem t : True := by\n  #eval IO.println "hi"')
    assert refused.value.stage == "statement"
    repl.close()


def test_a_hung_lean_check_is_a_timeout_verdict_and_a_hung_open_a_typed_timeout() -> None:
    argv = [sys.executable, str(REPLAY), str(FIXTURES / "readme.expected.out"), "--hang-at", "1"]
    repl = LeanRepl(argv)
    r = repl.check("", "theorem t : True", "by trivial", timeout=0.5)
    assert r.status is Status.TIMEOUT and r.failure_mode is not None
    with pytest.raises(ProverTimeout):
        repl.open("", "theorem t : True", timeout=0.5)
    repl.close()


def _error_at(line: int, column: int, text: str) -> dict[str, Any]:
    return {**_error(text), "pos": {"line": line, "column": column}}


def test_a_lean_statement_that_does_not_elaborate_stops_the_portfolio(tmp_path: Path) -> None:
    statement = "theorem t (n : Nat) :\n    n + 0 = foo"
    # Lean's error on `foo`, in the statement (line 2, column 12): one attempt, then stop.
    stuck = LeanRepl(
        _replay(tmp_path, {"messages": [_error_at(2, 12, "unknown identifier 'foo'")]})
    )
    r = prove_one(stuck, Theorem("t", statement), 30)
    assert r.attempts == 1 and r.status == "failed"
    assert r.failure_mode is not None and r.failure_mode["kind"] == "unknown_identifier"
    stuck.close()
    # The same words on the proof (after ` := `, and a kernel error on `theorem`) are the
    # proof's: the portfolio goes on to its next candidate.
    wrong = {"messages": [_error_at(2, 20, "unknown identifier 'foo'")], "env": 0}
    kernel = {"messages": [_error_at(1, 0, "(kernel) declaration has metavariables 't'")]}
    (tmp_path / "b").mkdir()
    going = LeanRepl(_replay(tmp_path / "b", wrong, kernel, wrong, kernel, wrong, kernel))
    first = going.check("", statement, "by simp")
    assert first.status is Status.FAIL and stage_of(first) == "proof"
    assert stage_of(going.check("", statement, "by omega")) == "proof"
    going.close()


def test_lean_version_is_what_lean_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lean = bin_dir / "lean"
    lean.write_text(
        "#!/bin/sh\necho 'Lean (version 4.19.0, x86_64-unknown-linux-gnu, commit 1a2b, Release)'\n"
    )
    lean.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    repl = LeanRepl(_replay(tmp_path, {"env": 0}))
    assert repl.version() == "4.19.0"
    r = repl.check("", "theorem t : True", "by trivial")
    assert r.version == "4.19.0"  # recorded in every verdict
    repl.close()


def test_lean_version_is_empty_when_no_lean_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no lean, no lake
    argv = [sys.executable, str(REPLAY), str(FIXTURES / "readme.expected.out")]
    assert LeanRepl(argv).version() == ""


@pytest.mark.lean
def test_real_lean_reports_its_version() -> None:
    import re

    repl = LeanRepl()
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", repl.version())
    repl.close()


def test_a_prover_answers_in_a_process_holding_over_1024_descriptors(coqtop_path: str) -> None:
    """A long-running process (a server) can hold more than 1024 open files; its prover's
    pipe then has a descriptor select() cannot watch. Replies are still read."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the descriptor limit here is {hard}")
    if soft != resource.RLIM_INFINITY and soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    held: list[int] = []
    try:
        while not held or held[-1] < 1030:
            held.append(os.open(os.devnull, os.O_RDONLY))
        echo = Lines('while read x; do echo "got $x"; done')
        try:
            echo.start()
            echo.write(b"hello\n")
            assert echo.read(time.monotonic() + 10) == b"got hello"
        finally:
            echo.close()
        with CoqTop() as coq:
            r = coq.check("", "Theorem t : 2 + 2 = 4.", "reflexivity.")
        assert r.status is Status.PASS
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
