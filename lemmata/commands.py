"""Commands for ``lemmata shell``, declared by the capabilities that own them.

A capability declares a list of :class:`ShellCommand` and names it in its
``pyproject.toml`` under the entry-point group ``lemmata.shell_commands``::

    [project.entry-points."lemmata.shell_commands"]
    prove = "lemmata.provers.shell:COMMANDS"

The shell loads every such list at start. A command sees the session only through
:class:`CommandContext`, so capabilities never import the shell.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from lemmata.llm.base import ChatModel
    from lemmata.settings import Settings

__all__ = ["ENTRY_POINT_GROUP", "CommandContext", "CommandParser", "ShellCommand"]

ENTRY_POINT_GROUP = "lemmata.shell_commands"


class CommandContext(Protocol):
    """What a shell command may use: the settings, the console, and the session's model."""

    settings: Settings
    console: Console

    @property
    def model(self) -> ChatModel | None: ...


@dataclass(frozen=True)
class ShellCommand:
    """One shell command.

    ``run(context, args)`` gets the text after the command's name; it reports problems by
    raising :class:`~lemmata.errors.LemmataError` (shown as one line) and returns nothing.
    ``complete(prefix)`` lists completions for the argument being typed.
    """

    name: str
    help: str
    run: Callable[[CommandContext, str], None]
    usage: str = ""
    aliases: tuple[str, ...] = ()
    complete: Callable[[str], list[str]] | None = field(default=None, compare=False)


class CommandParser(argparse.ArgumentParser):
    """``argparse`` for a command's arguments that reports a mistake as a
    :class:`~lemmata.errors.UsageError` with the usage line, instead of exiting.

    >>> p = CommandParser(prog="recall", add_help=False)
    >>> _ = p.add_argument("-k", type=int, default=10)
    >>> p.parse_args(["-k", "x"])
    Traceback (most recent call last):
    ...
    lemmata.errors.UsageError: argument -k: invalid int value: 'x' (usage: recall [-k K])
    """

    def error(self, message: str) -> None:  # type: ignore[override]
        from lemmata.errors import UsageError

        usage = " ".join(self.format_usage().split()).removeprefix("usage: ")
        raise UsageError(f"{message} (usage: {usage})")
