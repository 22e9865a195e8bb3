"""Process helpers shared by the verifiers' subprocess layers."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
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
