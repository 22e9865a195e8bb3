"""The memory's commands in ``lemmata shell``: ``remember``, ``recall``, ``memory`` and
``forget``, on the memory at ``data_dir/memory`` (the one ``lemmata memory ...`` uses).

``--user``/``--agent`` pick the namespace (default ``default``/``default``), as on the
command line. Each command opens the memory, does its work in one transaction and closes it,
so that the shell and a ``lemmata memory ingest`` in another terminal never hold stale state.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from lemmata.commands import CommandContext, CommandParser, ShellCommand
from lemmata.errors import UsageError

if TYPE_CHECKING:
    import argparse

    from lemmata.memory.core import Memory

__all__ = ["COMMANDS"]


def _parser(prog: str) -> CommandParser:
    p = CommandParser(prog=prog, add_help=False)
    p.add_argument("--user", default=None)
    p.add_argument("--agent", default=None)
    return p


def _open(ctx: CommandContext, ns: argparse.Namespace) -> Memory:
    from lemmata.memory.core import Memory

    return Memory(user=ns.user, agent=ns.agent, settings=ctx.settings, model=ctx.model)


def _split(args: str, prog: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError as exc:
        raise UsageError(f"{prog}: {exc}") from None


def _remember(ctx: CommandContext, args: str) -> None:
    p = _parser("remember")
    p.add_argument("--speaker", default="user")
    p.add_argument("--session", default="shell")
    p.add_argument("text", nargs="+")
    ns = p.parse_args(_split(args, "remember"))
    with _open(ctx, ns) as mem:
        eid = mem.add_episode(" ".join(ns.text), speaker=ns.speaker, session=ns.session)
        report = mem.consolidate()
    ctx.console.print(
        f"stored {eid}: {report.facts_added} new facts, {report.superseded} superseded "
        f"({report.extractor})",
        markup=False,
    )
    for error in report.errors:
        ctx.console.print(f"not structured yet, retried later: {error}", markup=False)


def _recall(ctx: CommandContext, args: str) -> None:
    p = _parser("recall")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--budget", type=int, default=None)
    p.add_argument("--history", action="store_true")
    p.add_argument("query", nargs="+")
    ns = p.parse_args(_split(args, "recall"))
    with _open(ctx, ns) as mem:
        found = mem.retrieve(
            " ".join(ns.query), k=ns.k, budget_tokens=ns.budget, include_history=ns.history
        )
    if not found.items:
        ctx.console.print("nothing remembered matches", markup=False)
        return
    for n, item in enumerate(found.items, 1):
        closed = f" [until {item.valid_to:%Y-%m-%d}]" if item.valid_to else ""
        ctx.console.print(
            f"{n}. {item.text}{closed}  <- {', '.join(item.provenance)}", markup=False
        )
    ctx.console.print(
        f"({found.tokens} tokens, {found.elapsed_ms:.1f} ms)", markup=False, style="dim"
    )


def _memory(ctx: CommandContext, args: str) -> None:
    p = _parser("memory")
    p.add_argument("what", nargs="?", choices=("stats", "audit", "facts"), default="stats")
    p.add_argument("-n", type=int, default=10)
    ns = p.parse_args(_split(args, "memory"))
    with _open(ctx, ns) as mem:
        if ns.what == "stats":
            for key, value in mem.stats().items():
                ctx.console.print(f"{key}: {value}", markup=False)
        elif ns.what == "audit":
            for a in mem.audit(ns.n):
                ctx.console.print(
                    f"{a.seq} {a.at:%Y-%m-%d %H:%M:%S} {a.op} {a.item_id or ''} {a.detail}",
                    markup=False,
                )
        else:
            for f in mem.facts(current_only=True)[-ns.n :]:
                ctx.console.print(f"{f.id}: {f.statement}  <- {', '.join(f.sources)}", markup=False)


def _forget(ctx: CommandContext, args: str) -> None:
    p = _parser("forget")
    p.add_argument("--episode", action="append", default=[])
    p.add_argument("ids", nargs="*")
    ns = p.parse_args(_split(args, "forget"))
    if not ns.ids and not ns.episode:
        raise UsageError("forget: give item ids or --episode ID")
    with _open(ctx, ns) as mem:
        report = mem.forget(ns.ids, episodes=ns.episode)
    ctx.console.print(
        f"forgot {len(report.items)} items and {len(report.episodes)} episodes", markup=False
    )


COMMANDS = [
    ShellCommand(
        "remember",
        "store what you type as an episode and structure it into facts",
        _remember,
        usage="remember [--speaker NAME] [--session S] [--user U] TEXT",
    ),
    ShellCommand(
        "recall",
        "the remembered knowledge closest to a question, with its sources",
        _recall,
        usage="recall [-k N] [--budget TOKENS] [--history] [--user U] QUERY",
    ),
    ShellCommand(
        "memory",
        "the memory's counts, its audit log, or its latest facts",
        _memory,
        usage="memory [stats | audit | facts] [-n N] [--user U]",
        complete=lambda p: [w for w in ("stats", "audit", "facts") if w.startswith(p)],
    ),
    ShellCommand(
        "forget",
        "remove facts (by id) or episodes from memory and from every index",
        _forget,
        usage="forget [--episode ID] [ID ...]",
    ),
]
