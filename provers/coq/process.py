"""A coqtop process spoken to one sentence at a time.

``coqtop -emacs`` ends every answer with a prompt ``<prompt>NAME < STATE |...| 0 < </prompt>``,
where NAME is the open proof (``Coq`` when none) and STATE the number that ``BackTo`` takes.
One sentence in, one prompt out: that is the framing. A sentence that takes longer than its
deadline gets the process killed (:class:`CoqTimeout`); a process that dies mid-answer raises
:class:`CoqCrashed`. Either way the next call starts a fresh process.

coqtop runs in a scratch folder of its own (``cwd=`` names another), so that what its tactics
write (``psatz``'s ``.csdp.cache`` and ``trace``) stays out of the user's folder; give
load paths in ``args`` as absolute paths. With a ``confinement``
(:class:`~lemmata.confine.Confinement`) it runs confined in that folder: the paths in
``args`` are visible read-only, nothing else of the user's is.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lemmata.errors import ToolNotFound
from lemmata.provers._process import ReadClosed, ReadTimeout, kill_process, read_some

if TYPE_CHECKING:
    from lemmata.confine import Confinement

__all__ = ["QUIET_OPTIONS", "CoqAnswer", "CoqCrashed", "CoqProcess", "CoqTimeout", "coq_version"]

# lia, nia and nra write .lia.cache/.nia.cache/.nra.cache into the working directory unless
# told not to; the options exist once their plugin is loaded, so they are sent after each header.
QUIET_OPTIONS = ("Unset Lia Cache.", "Unset Nia Cache.", "Unset Nra Cache.")
_PROMPT = re.compile(r"<prompt>(\S+) < (\d+) \|([^|]*)\| (\d+) < </prompt>")


class CoqTimeout(Exception):
    """The sentence did not finish within its deadline; the process was killed."""


class CoqCrashed(Exception):
    """coqtop exited or closed its output before answering."""


@dataclass(frozen=True)
class CoqAnswer:
    """What coqtop printed for one sentence, and the prompt that followed."""

    output: str
    proof: str | None  # the open proof's name, None at top level
    state: int


def find_coqtop(path: str | None = None) -> str:
    found = shutil.which(path or "coqtop")
    if not found:
        raise ToolNotFound(path or "coqtop", "apt-get install coq (Debian) or opam install coq")
    return found


def coq_version(coqtop: str | None = None) -> str:
    """``"8.16.1"`` or the like; ``""`` when coqtop cannot say."""
    try:
        out = subprocess.run(
            [find_coqtop(coqtop), "-v"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired, ToolNotFound):
        return ""
    m = re.search(r"version (\S+)", out.stdout)
    return m.group(1) if m else ""


class CoqProcess:
    """One coqtop process. Not thread-safe: give each worker its own."""

    def __init__(
        self,
        coqtop: str | None = None,
        args: tuple[str, ...] = (),
        cwd: str | None = None,
        *,
        confinement: Confinement | None = None,
    ) -> None:
        self.executable = find_coqtop(coqtop)
        self.args = args
        self.confinement = confinement
        # coqtop runs in a scratch folder of its own unless told otherwise: psatz's solver
        # leaves .csdp.cache and a file named "trace" in its working directory.
        self.cwd = cwd
        self._scratch: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self.state = 0
        self.proof: str | None = None
        self.sentences_sent = 0
        self.starts = 0

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """coqtop's process id (under a confinement, the confined coqtop's)."""
        proc = self._proc
        if proc is None:
            return None
        if self.confinement is None:
            return proc.pid
        from lemmata.confine import confined_pid

        return confined_pid(proc.pid)

    def start(self, timeout: float = 60.0) -> None:
        self._close()
        if self.cwd is None and self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="lemmata-coqtop-")
        where = self.cwd or self._scratch
        assert where is not None
        argv = [self.executable, "-emacs", "-quiet", *self.args]
        env = {**os.environ, "LC_ALL": "C.UTF-8"}
        if self.confinement is not None:
            paths = [a for a in self.args if a.startswith("/") and Path(a).exists()]
            argv = self.confinement.command(argv, where, read_only=paths)
            env = self.confinement.environment(where)
        self._proc = subprocess.Popen(
            argv,
            cwd=where,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # so that a kill takes any children with it
        )
        self._buffer = b""
        self.starts += 1
        self.sentences_sent = 0
        answer = self._read_answer(time.monotonic() + timeout)
        self.state, self.proof = answer.state, answer.proof

    def send(self, sentence: str, timeout: float) -> CoqAnswer:
        """Send one sentence and return coqtop's answer; see the module docstring."""
        if not self.alive:
            self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        # One line per sentence: error offsets are then offsets into the sentence.
        line = sentence.replace("\r", " ").replace("\n", " ").strip() + "\n"
        try:
            proc.stdin.write(line.encode("utf-8"))
            proc.stdin.flush()
        except (OSError, ValueError) as exc:
            self.kill()
            raise CoqCrashed(f"coqtop closed its input: {exc}") from None
        self.sentences_sent += 1
        answer = self._read_answer(time.monotonic() + timeout)
        self.state, self.proof = answer.state, answer.proof
        return answer

    def _read_answer(self, deadline: float) -> CoqAnswer:
        proc = self._proc
        if proc is None or proc.stdout is None:
            raise CoqCrashed("coqtop was stopped")
        try:
            fd = proc.stdout.fileno()
        except ValueError:
            raise CoqCrashed("coqtop was stopped") from None
        while True:
            m = _PROMPT.search(self._buffer.decode("utf-8", errors="replace"))
            if m:
                text = self._buffer.decode("utf-8", errors="replace")
                # Consume through the prompt (byte offsets differ from str offsets with UTF-8).
                consumed = text[: m.end()].encode("utf-8", errors="replace")
                self._buffer = self._buffer[len(consumed) :]
                name = m.group(1)
                return CoqAnswer(
                    text[: m.start()], None if name == "Coq" else name, int(m.group(2))
                )
            try:
                chunk, code = read_some(proc, fd, deadline)
            except ReadTimeout:
                self.kill()
                raise CoqTimeout() from None
            except ReadClosed:
                raise CoqCrashed("coqtop was stopped") from None
            if not chunk:
                tail = self._buffer.decode("utf-8", errors="replace")[-300:]
                self.kill()
                raise CoqCrashed(f"coqtop exited with status {code}: {tail.strip()}")
            self._buffer += chunk

    def kill(self) -> None:
        """Kill the process (and its process group). Safe from any thread, and twice."""
        proc, self._proc = self._proc, None
        if proc is not None:
            kill_process(proc)
        self._buffer = b""
        self.proof = None

    def close(self) -> None:
        self._close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def _close(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.write(b"Quit.\n")
                proc.stdin.flush()
                proc.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def __enter__(self) -> CoqProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
