"""Run analysis code (pandas/numpy/scipy) in a separate, limited Python process.

:func:`run_python` starts a fresh interpreter with CPU-time, address-space, file-size and
wall-clock limits, in a scratch working directory, with a minimal environment. Inside it:

- the database (when one is given) is open read-only: ``query(sql)`` returns a pandas
  DataFrame (a list of row tuples without pandas), ``db`` is the sqlite3 connection;
- ``OUTPUT_DIR`` is the only place outside the scratch directory that can be written;
- ``result(value)`` hands a JSON-able value back as :attr:`SandboxResult.value`;
- network access, new processes, ``ctypes`` and other databases are refused by an audit hook
  (PEP 578), and, where the kernel allows it (root, or user namespaces), the process also gets
  an empty network namespace.

The audit hook keeps model-written analysis code from doing damage by mistake; it is not a
boundary against code written to escape. That boundary is the confinement
(:mod:`lemmata.confine`, bubblewrap), used whenever it works here (``confine=None``, the
default; ``True`` insists on it, ``False`` turns it off): the interpreter then sees only the
system, its own installation, the database (read-only), ``OUTPUT_DIR`` and the scratch
directory, so it cannot read the user's files, ``/etc/shadow`` or the project's secrets
either, and it has no network at all. :attr:`SandboxResult.confined` says whether a run was
confined; without bubblewrap a run is not, and :attr:`SandboxResult.note` says so.
Breaking a limit is an outcome, not an exception: :attr:`SandboxResult.status` says which.

>>> r = run_python("result(sum(range(10)))")
>>> r.status, r.value
('ok', 45)
>>> run_python("import socket; socket.create_connection(('127.0.0.1', 9))").status
'forbidden'
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["SandboxLimits", "SandboxResult", "SandboxStatus", "run_python"]

SandboxStatus = Literal["ok", "error", "forbidden", "timeout", "cpu", "memory"]

_RESULT_MARK = "\x1elemmata-result\x1e"
_FORBIDDEN_MARK = "sandbox refused:"


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one run: CPU seconds, address space (MiB), wall-clock seconds, file size
    (MiB) and how much of stdout/stderr is kept."""

    cpu_s: int = 20
    memory_mb: int = 2048
    wall_s: float = 30.0
    file_mb: int = 64
    output_chars: int = 20_000


@dataclass(frozen=True)
class SandboxResult:
    """How a run ended: ``status``, what it printed, and the value it passed to ``result``."""

    status: SandboxStatus
    stdout: str
    stderr: str
    returncode: int | None
    elapsed_s: float
    value: Any = None
    files: list[str] = field(default_factory=list)
    confined: bool = False
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def observation(self) -> str:
        """A short text of the outcome, for an agent to read."""
        head = {
            "ok": "the script ran",
            "error": "the script raised an error",
            "forbidden": "the script tried something the sandbox refuses",
            "timeout": "the script ran past its wall-clock limit and was stopped",
            "cpu": "the script used up its CPU-time limit and was stopped",
            "memory": "the script ran out of its memory limit",
        }[self.status]
        parts = [head]
        if self.value is not None:
            parts.append(f"result: {json.dumps(self.value)[:2000]}")
        if self.stdout.strip():
            parts.append("stdout:\n" + self.stdout.strip()[-2000:])
        if self.status != "ok" and self.stderr.strip():
            parts.append("stderr:\n" + self.stderr.strip()[-2000:])
        return "\n".join(parts)


_PRELUDE = r"""
import json, os, sqlite3, sys
_scratch, _out, _db_path, _script, _mark, _refused = sys.argv[1:7]
try:
    import numpy as np
    import pandas as pd
    from scipy import stats
except ImportError:
    pass
db = None
if _db_path:
    db = sqlite3.connect("file:" + _db_path + "?mode=ro", uri=True)
    db.execute("PRAGMA query_only = ON")

def query(sql, params=()):
    cur = db.execute(sql, params)
    rows = cur.fetchall()
    cols = [d[0] for d in cur.description or ()]
    try:
        return pd.DataFrame(rows, columns=cols)
    except NameError:
        return rows

def result(value):
    sys.stdout.write(_mark + json.dumps(value, default=float) + "\n")

OUTPUT_DIR = _out or None
_allowed = [os.path.realpath(p) for p in (_scratch, _out) if p]

def _inside(path):
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return True
    return any(real == a or real.startswith(a + os.sep) for a in _allowed)

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                "os.truncate", "os.link", "os.symlink", "os.utime", "shutil.rmtree",
                "shutil.move", "shutil.copyfile"}
_DENIED = ("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
           "os.fork", "os.forkpty", "pty.", "ctypes.", "os.kill", "os.putenv", "os.unsetenv")

def _hook(event, args):
    if event == "open":
        path, mode, flags = args
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS)
        if writing and path is not None and not isinstance(path, int) and not _inside(path):
            raise PermissionError(f"{_refused} writing {path} (only OUTPUT_DIR and the scratch directory are writable)")
    elif event in _PATH_EVENTS:
        for p in args:
            if isinstance(p, (str, bytes, os.PathLike)) and not _inside(p):
                raise PermissionError(f"{_refused} {event} on {p}")
    elif event == "sqlite3.connect" and args and str(args[0]) != ":memory:":
        raise PermissionError(f"{_refused} opening another database (use query(sql))")
    elif event.startswith(_DENIED):
        raise PermissionError(f"{_refused} {event} (no network, processes or ctypes)")

sys.addaudithook(_hook)
del _hook
with open(_script, encoding="utf-8") as _fh:
    _code = compile(_fh.read(), "<analysis>", "exec")
exec(_code, {"__name__": "__main__", "query": query, "result": result, "db": db,
             "OUTPUT_DIR": OUTPUT_DIR, **{k: v for k, v in globals().items()
                                          if k in ("np", "pd", "stats")}})
"""


def _limit(limits: SandboxLimits) -> Any:
    def apply() -> None:
        import resource

        os.setsid()
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
        mem = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        size = limits.file_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        _unshare_network()

    return apply


def _unshare_network() -> None:
    # An empty network namespace where the kernel allows one; the audit hook covers the rest.
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.unshare(0x40000000)  # CLONE_NEWNET
    except (OSError, AttributeError):
        pass


def run_python(
    code: str,
    *,
    database: str | Path | None = None,
    output_dir: str | Path | None = None,
    limits: SandboxLimits | None = None,
    confine: bool | None = None,
) -> SandboxResult:
    """Run ``code`` in a limited child interpreter; see the module docstring for what it sees.

    Raises :class:`~lemmata.errors.ConfinementUnavailable` when ``confine=True`` and
    bubblewrap cannot confine it here.
    """
    from lemmata.confine import Confinement, exit_status

    limits = limits or SandboxLimits()
    # The limits are set below as before; the confinement adds the file system and network.
    confinement = Confinement(memory_mb=None, cpu_s=None, file_mb=None)
    why_not = None if confine is False else confinement.unavailable()
    if confine and why_not is not None:
        confinement.require()
    confined = confine is not False and why_not is None
    note = "" if confined or confine is False else f"not confined: {why_not}"
    out = Path(output_dir).resolve() if output_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    before = set(out.rglob("*")) if out is not None else set()
    with tempfile.TemporaryDirectory(prefix="lemmata-sandbox-") as scratch:
        script = Path(scratch) / "analysis.py"
        script.write_text(code, encoding="utf-8")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": scratch,
            "TMPDIR": scratch,
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": scratch,
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        argv = [
            sys.executable,
            "-I",
            "-c",
            _PRELUDE,
            scratch,
            str(out or ""),
            str(Path(database).resolve()) if database is not None else "",
            str(script),
            _RESULT_MARK,
            _FORBIDDEN_MARK,
        ]
        if confined:
            argv = confinement.command(
                argv,
                scratch,
                read_only=[database] if database is not None else [],
                writable=[out] if out is not None else [],
            )
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=scratch,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_limit(limits),
        )
        timed_out = False
        try:
            stdout, stderr = proc.communicate(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
        elapsed = time.monotonic() - started
    value = None
    kept = []
    for line in stdout.split("\n"):
        if line.startswith(_RESULT_MARK):
            try:
                value = json.loads(line[len(_RESULT_MARK) :])
            except json.JSONDecodeError:
                value = None
        else:
            kept.append(line)
    stdout = "\n".join(kept)[-limits.output_chars :]
    stderr = stderr[-limits.output_chars :]
    code_ = exit_status(proc.returncode) if confined else proc.returncode
    status: SandboxStatus
    if timed_out:
        status = "timeout"
    elif code_ in (-signal.SIGXCPU, -signal.SIGKILL) and elapsed < limits.wall_s:
        status = "cpu"
    elif "MemoryError" in stderr or "Cannot allocate memory" in stderr:
        status = "memory"
    elif _FORBIDDEN_MARK in stderr:
        status = "forbidden"
    elif code_ != 0:
        status = "error"
    else:
        status = "ok"
    files = sorted(str(p.relative_to(out)) for p in set(out.rglob("*")) - before) if out else []
    return SandboxResult(
        status=status,
        stdout=stdout,
        stderr=stderr,
        returncode=code_,
        elapsed_s=elapsed,
        value=value,
        files=files,
        confined=confined,
        note=note,
    )
