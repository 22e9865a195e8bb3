"""What every ``lemmata`` sub-command shares, in one place: how capabilities add their
commands, the run's settings, the consoles, the progress bar and the common options.

A capability declares its commands in a ``register(app)`` function and names it in its
``pyproject.toml`` under the entry-point group ``lemmata.cli_commands``, as shell commands
are named under ``lemmata.shell_commands`` (:mod:`lemmata.commands`)::

    [project.entry-points."lemmata.cli_commands"]
    memory = "lemmata.memory.cli:register"

A command reaches the settings of the run through :func:`settings_of` (never through the
CLI module's internals), and shows long work with :func:`progress_bar`.

>>> @app.command()                                                  # doctest: +SKIP
... def count(ctx: typer.Context, as_json: JsonOpt = False) -> None:
...     settings = settings_of(ctx)
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from lemmata.settings import Settings

__all__ = [
    "CLI_ENTRY_POINT_GROUP",
    "CliState",
    "JsonOpt",
    "ResumeOpt",
    "WorkersOpt",
    "console",
    "progress_bar",
    "register_commands",
    "settings_of",
    "state_of",
]

CLI_ENTRY_POINT_GROUP = "lemmata.cli_commands"

#: ``--json``: the result as JSON on stdout, for scripts.
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
#: ``--resume``: skip what an earlier run already wrote.
ResumeOpt = Annotated[
    bool, typer.Option("--resume", help="Skip what the results already hold and go on.")
]
#: ``--workers``: how many workers run in parallel.
WorkersOpt = Annotated[
    int, typer.Option("--workers", "-w", min=1, max=64, help="Workers in parallel.")
]


class CliState:
    """The root options of a ``lemmata`` run (``--config``, ``--model``, ``--api-base``);
    the settings are read once, when a command first asks for them, unless given (as the
    shell gives its own when it runs a CLI command app)."""

    def __init__(
        self,
        config: Path | None = None,
        overrides: dict[str, Any] | None = None,
        *,
        settings: Settings | None = None,
    ) -> None:
        self.config = config
        self.overrides = overrides or {}
        self._settings: Settings | None = settings

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from lemmata.settings import Settings

            if self.config is not None:
                self._settings = Settings.load(self.config, **self.overrides)
            else:
                self._settings = Settings.load(**self.overrides)
            from lemmata import tracing

            tracing.configure_from(self._settings)
        return self._settings


def state_of(ctx: typer.Context) -> CliState:
    """The :class:`CliState` of the run ``ctx`` belongs to."""
    obj = ctx.find_root().obj
    if not isinstance(obj, CliState):  # a command app run on its own, without the root
        obj = ctx.find_root().obj = CliState()
    return obj


def settings_of(ctx: typer.Context) -> Settings:
    """The settings of this ``lemmata`` run (its ``--config``, ``--model``, ``--api-base``)."""
    return state_of(ctx).settings


def console(stderr: bool = False) -> Console:
    """A console for output (stdout), or for progress and messages (``stderr=True``)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def progress_bar(
    label: str,
    console: Console,
    *,
    disable: bool = False,
    fields: tuple[str, ...] = (),
    count: str | None = None,
    transient: bool = False,
) -> Progress:
    """The progress bar of every command: ``label``, the bar, done/total (or ``count``, a
    format of the task such as ``"turn {task.completed:.0f}/{task.total:.0f}"``), each of
    the task's ``fields`` (counts so far, the last item...; a name, or a format of the task
    such as ``"{task.fields[records]} states"``), and the time elapsed. The label may be a
    format of the task too (``"train {task.fields[method]}"``)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn() if count is None else TextColumn(count),
        *(TextColumn(f if "{" in f else f"{{task.fields[{f}]}}") for f in fields),
        TimeElapsedColumn(),
        console=console,
        disable=disable,
        transient=transient,
    )


def register_commands(app: typer.Typer, warn: Callable[[str], None]) -> list[str]:
    """Add every capability's commands to ``app`` (entry-point group
    ``lemmata.cli_commands``); returns the names added. One that fails to load is reported
    through ``warn`` and left out, so that a broken plug-in cannot take the CLI down."""
    added = []
    for ep in sorted(importlib.metadata.entry_points(group=CLI_ENTRY_POINT_GROUP), key=str):
        try:
            register = ep.load()
            if not callable(register):
                raise TypeError("expected a function register(app)")
            register(app)
        except Exception as exc:
            warn(f"commands {ep.name!r} ({ep.value}) not loaded: {type(exc).__name__}: {exc}")
            continue
        added.append(ep.name)
    return added
