"""The research command in ``lemmata shell``: ``research DB --out DIR [--entity C=V]``.

It runs the same agent as ``lemmata research`` (with the shell's model, if one is set) and
prints the best insights and where the report is.
"""

from __future__ import annotations

import shlex

from lemmata.commands import CommandContext, CommandParser, ShellCommand
from lemmata.errors import UsageError

__all__ = ["COMMANDS"]


def _research(ctx: CommandContext, args: str) -> None:
    from lemmata.agents.research.run import research

    p = CommandParser(prog="research", add_help=False)
    p.add_argument("db")
    p.add_argument("--out", required=True)
    p.add_argument("--entity", default=None)
    p.add_argument("--budget-turns", type=int, default=40)
    p.add_argument("--budget-seconds", type=float, default=300.0)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--offline", action="store_true")
    p.add_argument("-n", type=int, default=10)
    try:
        words = shlex.split(args)
    except ValueError as exc:
        raise UsageError(f"research: {exc}") from None
    ns = p.parse_args(words)
    report = research(
        ns.db,
        ns.out,
        entity=ns.entity,
        budget_turns=ns.budget_turns,
        budget_seconds=ns.budget_seconds,
        model=None if ns.offline else ctx.model,
        resume=ns.resume,
    )
    s = report.stats
    ctx.console.print(
        f"{s['insights']} insights in {s['turns']} turns ({s['elapsed_s']:.1f} s, "
        f"stopped: {s['stopped']}; explorer: {s['explorer']})",
        markup=False,
    )
    for i, ins in enumerate(report.insights[: ns.n], 1):
        ctx.console.print(f"{i:>2}. [{ins.kind}] {ins.statement}", markup=False)
    ctx.console.print(f"report: {report.files['markdown']}", markup=False)


COMMANDS = [
    ShellCommand(
        "research",
        "explore a database on your own and write a report of verifiable insights",
        _research,
        usage="research DB --out DIR [--entity COL=VALUE] [--budget-turns N] [--budget-seconds S] [--resume] [--offline] [-n N]",
    ),
]
