"""``experience`` in ``lemmata shell``: the ``lemmata experience`` commands, with the shell's
model (``experience collect ENV --out DIR ...``, ``experience train DIR``, ``experience eval
ENV -p FILE``, ``experience export FILE``, ``experience check FILE``)."""

from __future__ import annotations

import shlex

from lemmata.commands import CommandContext, ShellCommand
from lemmata.errors import UsageError

__all__ = ["COMMANDS"]

_SUBCOMMANDS = ("collect", "export", "check", "train", "eval")


def _experience(ctx: CommandContext, args: str) -> None:
    from typer.main import get_command

    from lemmata.agents.experience.cli import app

    try:
        words = shlex.split(args)
    except ValueError as exc:
        raise UsageError(f"experience: {exc}") from None
    if not words or words[0] not in _SUBCOMMANDS:
        raise UsageError(
            f"experience: say one of {', '.join(_SUBCOMMANDS)}, e.g. experience collect "
            "textworld-express --out runs/coin --tasks coin --demos 20"
        )
    import click

    from lemmata.cli_kit import CliState

    state = CliState(settings=ctx.settings)  # the shell's own settings, its model included
    try:
        get_command(app).main(args=words, prog_name="experience", standalone_mode=False, obj=state)
    except click.exceptions.Exit as exc:
        if exc.exit_code:
            ctx.console.print(f"experience {words[0]}: exit status {exc.exit_code}", markup=False)
    except click.ClickException as exc:
        raise UsageError(f"experience {words[0]}: {exc.format_message()}") from None


COMMANDS = [
    ShellCommand(
        "experience",
        "early experience: collect rollouts, write training files, check reflections, "
        "train and evaluate policies",
        _experience,
        usage="experience collect|export|check|train|eval ... (as `lemmata experience`; --help on each)",
    ),
]
