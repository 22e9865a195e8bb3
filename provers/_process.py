"""Process helpers shared by the verifiers' subprocess layers."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from pathlib import Path


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


class ReadTimeout(Exception):
    """No output before the deadline."""


class ReadClosed(Exception):
    """The pipe was closed under us (a kill from another thread)."""


def read_some(proc: subprocess.Popen[bytes], fd: int, deadline: float) -> tuple[bytes, int | None]:
    """Wait for output of ``proc`` on ``fd`` until ``deadline`` (``time.monotonic``).

    Returns ``(chunk, None)``, or ``(b"", exit status)`` at end of output. Raises
    :class:`ReadTimeout` past the deadline and :class:`ReadClosed` if the pipe goes away.
    """
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ReadTimeout()
        try:
            ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not ready:
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
