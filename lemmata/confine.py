"""Run a program confined, for input that is not trusted.

A confined program (:class:`Confinement`) runs under bubblewrap (``bwrap``, Debian package
``bubblewrap``) with:

- a scratch working directory, the only host folder it can write (plus any ``writable``
  folder the caller names); ``/tmp`` is a private, empty tmpfs that vanishes with it;
- no network: its own network namespace, with a loopback that reaches nothing of the host;
- a file system that is read-only and holds only what programs need to run (``/usr``,
  ``/etc`` with its secrets such as ``/etc/shadow`` masked, the program's own installation
  prefix) and the paths the caller lists in ``read_only``; home folders, the project's data
  and the host's ``/tmp`` are not there at all;
- its own PID, IPC and UTS namespaces, no capabilities, and death with its parent;
- memory (address space, or data segment for programs that map large files), CPU-time and
  file-size limits (``prlimit``), and a minimal environment (no API keys).

Where bubblewrap is missing or cannot create namespaces, :meth:`Confinement.unavailable`
says why and how to fix it, and :meth:`Confinement.require` raises
:class:`~lemmata.errors.ConfinementUnavailable` with that message: a caller that was asked to
confine never runs the program unconfined without saying so.

>>> conf = Confinement(memory_mb=512, cpu_s=10)
>>> argv = conf.command(["/usr/bin/true"], scratch="/tmp/work")          # doctest: +SKIP
>>> subprocess.run(argv, env=conf.environment("/tmp/work")).returncode    # doctest: +SKIP
0
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lemmata.errors import ConfinementUnavailable

__all__ = ["Confinement", "confined_pid", "exit_status", "popen"]

# What every program needs to start: the system's programs and libraries and its settings.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Secrets under /etc: files are hidden behind /dev/null, folders behind an empty tmpfs.
_MASKED_FILES = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/security/opasswd",
)
_MASKED_DIRS = ("/etc/ssh", "/etc/ssl/private", "/etc/sudoers.d")
_INSTALL = "apt-get install bubblewrap"


def exit_status(code: int | None) -> int | None:
    """A confined program's exit status as ``subprocess`` reports an unconfined one:
    bubblewrap exits with 128 + N when its program was killed by signal N, which is ``-N``
    here."""
    if code is not None and 128 < code < 128 + 65:
        return -(code - 128)
    return code


def confined_pid(pid: int | None) -> int | None:
    """The process that does the work under ``pid`` (bubblewrap's launcher): the newest
    descendant, followed down single children; ``pid`` itself when it has none. For memory
    readings of a confined program."""
    seen = 0
    while pid is not None and seen < 8:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            break
        if not children:
            break
        pid, seen = int(children[-1]), seen + 1
    return pid


@functools.cache
@functools.cache
def _spawner() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="lemmata-spawn")


def popen(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(argv, **kwargs)``, started from one thread that lives as long as
    the process.

    A confined program dies with its parent (bubblewrap's ``--die-with-parent``, that is
    ``PR_SET_PDEATHSIG``), and the kernel counts the *thread* that started it as the parent:
    started from a thread that then ends (an operation's worker, a server's request thread),
    the sandbox is killed at once and the program behind it is orphaned. Long-lived
    confined programs (verifier sessions) are started here instead.
    """

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(argv, **kwargs)

    return _spawner().submit(start).result()


def _probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot confine a program on this machine, or ``None`` when it can."""
    argv = [bwrap, *_system_binds(), "--proc", "/proc", "--dev", "/dev", "--unshare-all"]
    argv += ["--die-with-parent", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    if done.returncode != 0:
        reason = " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
        return (
            f"bwrap cannot create namespaces here ({reason}); allow unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as root"
        )
    return None


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM:
        p = Path(path)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), path]
        elif p.exists():
            args += ["--ro-bind", path, path]
    for path in _MASKED_FILES:
        if Path(path).is_file():
            args += ["--ro-bind", "/dev/null", path]
    for path in _MASKED_DIRS:
        if Path(path).is_dir():
            args += ["--tmpfs", path, "--remount-ro", path]
    return args


def _under_system(path: Path) -> bool:
    return any(path == Path(s) or Path(s) in path.parents for s in _SYSTEM)


def _prefixes(program: str) -> list[Path]:
    """The installation prefixes a program needs beside the system's: ``.../bin/prog`` ->
    ``...``, both as named (a virtual environment) and with links resolved (its Python)."""
    found = shutil.which(program) or program
    out = []
    for exe in (Path(os.path.abspath(found)), Path(found).resolve()):
        prefix = exe.parent.parent if exe.parent.name == "bin" else exe.parent
        if not _under_system(prefix) and prefix != Path("/") and prefix not in out:
            out.append(prefix)
    return out


@dataclass(frozen=True)
class Confinement:
    """How to confine one kind of program; see the module docstring.

    ``memory_mb``: the memory limit (``None``: none); ``memory_limit``: ``"address_space"``
    (``RLIMIT_AS``, all mappings) or ``"data"`` (``RLIMIT_DATA``, for programs such as Lean
    that map large files they only read); ``cpu_s``: CPU seconds for the whole life of the
    process (a reused prover is restarted when it runs out); ``file_mb``: the largest file
    it may write; ``read_only``/``writable``: host paths it sees besides the defaults;
    ``network``: keep the host's network (off by default).
    """

    memory_mb: int | None = 2048
    memory_limit: Literal["address_space", "data"] = "address_space"
    cpu_s: int | None = 3600
    file_mb: int | None = 256
    read_only: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    network: bool = False
    bwrap: str = "bwrap"

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_s", "file_mb"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"Confinement {name} must be positive or None, got {value}")
        if self.memory_limit not in ("address_space", "data"):
            raise ValueError(
                f"Confinement memory_limit must be 'address_space' or 'data', "
                f"got {self.memory_limit!r}"
            )

    def unavailable(self) -> str | None:
        """Why programs cannot be confined here (with what to do), or ``None``."""
        exe = shutil.which(self.bwrap)
        if exe is None:
            return f"bubblewrap ({self.bwrap}) is not installed: {_INSTALL}"
        if shutil.which("prlimit") is None:
            return "prlimit is not installed: apt-get install util-linux"
        return _probe(exe)

    def require(self) -> None:
        """Raise :class:`~lemmata.errors.ConfinementUnavailable` unless confinement works."""
        reason = self.unavailable()
        if reason is not None:
            raise ConfinementUnavailable(
                f"untrusted input must run confined, and it cannot be here: {reason} (for "
                "input you trust: untrusted_input = false in the settings, or "
                "LEMMATA_UNTRUSTED_INPUT=false)"
            )

    def command(
        self,
        argv: Sequence[str],
        scratch: str | Path,
        *,
        read_only: Iterable[str | Path] = (),
        writable: Iterable[str | Path] = (),
        chdir: str | Path | None = None,
    ) -> list[str]:
        """The command line that runs ``argv`` confined, in ``scratch`` (which must exist).

        ``read_only`` and ``writable`` add host paths for this run to the confinement's own;
        paths that do not exist are left out. The program's installation prefix is added.
        ``chdir`` starts it in another visible folder than ``scratch`` (a Lean project).
        """
        if not argv:
            raise ValueError("Confinement.command needs a program to run")
        scratch_dir = Path(scratch).resolve()
        if not scratch_dir.is_dir():
            raise ValueError(f"the scratch directory {scratch_dir} does not exist")
        limits = ["prlimit"]
        if self.memory_mb is not None:
            flag = "--as" if self.memory_limit == "address_space" else "--data"
            size = self.memory_mb * 1024 * 1024
            limits.append(f"{flag}={size}:{size}")
        if self.cpu_s is not None:
            limits.append(f"--cpu={self.cpu_s}:{self.cpu_s + 1}")
        if self.file_mb is not None:
            size = self.file_mb * 1024 * 1024
            limits.append(f"--fsize={size}:{size}")
        limits.append("--core=0:0")
        box = [shutil.which(self.bwrap) or self.bwrap, *_system_binds()]
        # /tmp first: paths under it named below are mounted on the private tmpfs.
        box += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        ro = [*_prefixes(argv[0]), *map(Path, self.read_only), *map(Path, read_only)]
        for path in ro:
            path = Path(path).absolute()
            if path.exists() and not _under_system(path):
                box += ["--ro-bind", str(path), str(path)]
        for path in (scratch_dir, *map(Path, self.writable), *map(Path, writable)):
            path = Path(path).absolute()
            if path.exists():
                box += ["--bind", str(path), str(path)]
        start = Path(chdir).resolve() if chdir is not None else scratch_dir
        box += ["--unshare-all", "--die-with-parent", "--chdir", str(start)]
        if self.network:
            box.append("--share-net")
        return [*limits, "--", *box, "--", *argv]

    def environment(
        self, scratch: str | Path, extra: dict[str, str] | None = None
    ) -> dict[str, str]:
        """A minimal environment for a confined program: no secrets from ours."""
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(scratch),
            "TMPDIR": str(scratch),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }
        env.update(extra or {})
        return env
