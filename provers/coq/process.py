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

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lemmata.errors import ProverCrashed, ProverTimeout, ToolNotFound
from lemmata.provers.process import ProverProcess

if TYPE_CHECKING:
    from lemmata.confine import Confinement

__all__ = [
    "QUIET_OPTIONS",
    "CoqAnswer",
    "CoqCrashed",
    "CoqProcess",
    "CoqTimeout",
    "coq_version",
    "find_coqtop",
]

# lia, nia and nra write .lia.cache/.nia.cache/.nra.cache into the working directory unless
# told not to; the options exist once their plugin is loaded, so they are sent after each header.
QUIET_OPTIONS = ("Unset Lia Cache.", "Unset Nia Cache.", "Unset Nra Cache.")
_PROMPT = re.compile(r"<prompt>(\S+) < (\d+) \|([^|]*)\| (\d+) < </prompt>")

# The process layer's errors, under the names this module has always used.
CoqTimeout = ProverTimeout
CoqCrashed = ProverCrashed


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


class CoqProcess(ProverProcess[CoqAnswer]):
    """One coqtop process, on the shared process layer (:mod:`lemmata.provers.process`);
    this class adds the framing by prompt. Not thread-safe: give each worker its own."""

    scratch_prefix = "lemmata-coqtop-"

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
        # coqtop runs in a scratch folder of its own unless told otherwise: psatz's solver
        # leaves .csdp.cache and a file named "trace" in its working directory.
        super().__init__(
            [self.executable, "-emacs", "-quiet", *args],
            cwd,
            name="coqtop",
            confinement=confinement,
            stderr=True,
            env={"LC_ALL": "C.UTF-8"},
        )
        self._buffer = b""
        self.state = 0
        self.proof: str | None = None

    @property
    def sentences_sent(self) -> int:
        """Sentences sent since the last start."""
        return self.requests

    def reset(self) -> None:
        self._buffer = b""
        self.proof = None

    def start(self, timeout: float = 60.0) -> None:
        """Start coqtop and read its first prompt."""
        super().start()
        answer = self.read(time.monotonic() + timeout)
        self.state, self.proof = answer.state, answer.proof

    def send(self, sentence: str, timeout: float) -> CoqAnswer:
        """Send one sentence and return coqtop's answer; see the module docstring."""
        if not self.alive:
            self.start()
        # One line per sentence: error offsets are then offsets into the sentence.
        line = sentence.replace("\r", " ").replace("\n", " ").strip() + "\n"
        self.write(line.encode("utf-8"))
        answer = self.read(time.monotonic() + timeout)
        self.state, self.proof = answer.state, answer.proof
        return answer

    def take(self, chunk: bytes) -> CoqAnswer | None:
        self._buffer += chunk
        text = self._buffer.decode("utf-8", errors="replace")
        m = _PROMPT.search(text)
        if not m:
            return None
        # Consume through the prompt (byte offsets differ from str offsets with UTF-8).
        consumed = text[: m.end()].encode("utf-8", errors="replace")
        self._buffer = self._buffer[len(consumed) :]
        name = m.group(1)
        return CoqAnswer(text[: m.start()], None if name == "Coq" else name, int(m.group(2)))

    def at_exit(self, status: int | None) -> CoqAnswer:
        tail = self._buffer.decode("utf-8", errors="replace")[-300:]
        raise ProverCrashed(f"coqtop exited with status {status}: {tail.strip()}")

    def close(self) -> None:
        """Ask coqtop to quit, then kill what is left and remove the scratch folder."""
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.write(b"Quit.\n")
                proc.stdin.flush()
                proc.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        super().close()

    def __enter__(self) -> CoqProcess:
        return self
