"""``lemmata memory ...``: ingest files, query, inspect and reindex a memory from the shell.

Every command takes the memory's directory (``--path``, default ``data_dir/memory``) and its
namespace (``--user``, ``--agent``, ``--session``). Bad input exits with status 2 and one line
naming what to fix; an ingested file is validated whole before anything is stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from lemmata.cli_kit import JsonOpt, console, progress_bar, settings_of

if TYPE_CHECKING:
    from lemmata.memory.core import Memory

__all__ = ["app", "register"]

app = typer.Typer(
    help="PlugMem memory: ingest episodes, query knowledge, inspect the graph, rebuild the index.",
    no_args_is_help=True,
)

_PathOpt = Annotated[
    Path | None, typer.Option("--path", "-p", help="Memory directory (default: data_dir/memory).")
]
_UserOpt = Annotated[
    str | None, typer.Option("--user", help="Namespace: user (default 'default').")
]
_AgentOpt = Annotated[
    str | None, typer.Option("--agent", help="Namespace: agent (default 'default').")
]
_SessionOpt = Annotated[
    str | None, typer.Option("--session", help="Namespace: one session only (default: all).")
]
_IndexOpt = Annotated[
    str | None,
    typer.Option("--index", help="A Chroma server URL instead of the embedded index."),
]


def register(parent: typer.Typer) -> None:
    """Add ``memory ...`` to ``parent`` (the ``lemmata`` CLI)."""
    parent.add_typer(app, name="memory")


@contextmanager
def _open(
    ctx: typer.Context,
    path: Path | None,
    user: str | None,
    agent: str | None,
    session: str | None,
    index: str | None = None,
) -> Iterator[Memory]:
    from lemmata.llm import get_model
    from lemmata.memory.core import Memory

    settings = settings_of(ctx)
    mem = Memory(
        path,
        user=user,
        agent=agent,
        session=session,
        settings=settings,
        model=get_model(settings),
        index=index,
    )
    try:
        yield mem
    finally:
        mem.close()


def _consolidate(mem: Memory, label: str) -> Any:
    with progress_bar(label, console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=mem.pending() or None)
        return mem.consolidate(progress=lambda done, total: bar.update(task, completed=done))


@app.command("ingest")
def _ingest(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="Episodes to store (LoCoMo JSON or JSON Lines).")],
    fmt: Annotated[
        Literal["jsonl", "locomo"],
        typer.Option("--format", "-f", help="jsonl: one episode a line; locomo: LoCoMo samples."),
    ] = "jsonl",
    path: _PathOpt = None,
    user: _UserOpt = None,
    agent: _AgentOpt = None,
    session: _SessionOpt = None,
    index: _IndexOpt = None,
    structure: Annotated[
        bool,
        typer.Option(
            "--structure/--no-structure", help="Structure the episodes into knowledge now."
        ),
    ] = True,
    as_json: JsonOpt = False,
) -> None:
    """Store a file's episodes (all or none), then structure them into facts and procedures.

    A LoCoMo sample goes to the user named by its sample_id unless --user is given.
    """
    from lemmata.errors import UsageError
    from lemmata.memory.ingest import read_jsonl, read_locomo

    if not file.is_file():
        raise typer.BadParameter(f"no such file: {file}", param_hint="FILE")
    batches: list[tuple[str | None, list[Any]]]
    if fmt == "locomo":
        batches = [(user or c.sample_id, c.episodes) for c in read_locomo(file)]
    else:
        batches = [(user, read_jsonl(file))]
    if not any(episodes for _, episodes in batches):
        raise UsageError(f"{file}: no episodes in it")
    out: dict[str, Any] = {"file": str(file), "format": fmt, "namespaces": []}
    for who, episodes in batches:
        with _open(ctx, path, who, agent, session, index) as mem:
            ids = mem.add_episodes(episodes)
            entry: dict[str, Any] = {"namespace": str(mem.namespace), "episodes": len(ids)}
            if structure:
                report = _consolidate(mem, f"structuring {len(ids)} episodes")
                entry |= {
                    "facts": report.facts_added,
                    "procedures": report.procedures_added,
                    "superseded": report.superseded,
                    "duplicates": report.duplicates,
                    "extractor": report.extractor,
                    "failed_episodes": report.failed_episodes,
                    "errors": report.errors,
                }
            out["namespaces"].append(entry)
            out["path"] = str(mem.path)
    if as_json:
        typer.echo(json.dumps(out))
        return
    con = console()
    for entry in out["namespaces"]:
        tail = (
            f": {entry['facts']} facts, {entry['procedures']} procedures "
            f"({entry['superseded']} superseded, {entry['duplicates']} duplicates; "
            f"{entry['extractor']})"
            + (
                f"; {entry['failed_episodes']} episodes left pending, their structuring failed "
                f"({'; '.join(entry['errors'])}): they are retried later"
                if entry["failed_episodes"]
                else ""
            )
            if structure
            else " (not structured yet)"
        )
        con.print(f"{entry['namespace']}: stored {entry['episodes']} episodes{tail}", markup=False)
    con.print(f"memory at {out['path']}", markup=False)


@app.command("query")
def _query(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="At most this many items.")] = 10,
    budget_tokens: Annotated[
        int | None, typer.Option("--budget-tokens", min=1, help="Pack the items into this.")
    ] = None,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="Knowledge valid at this time (ISO 8601).")
    ] = None,
    history: Annotated[bool, typer.Option("--history", help="Include superseded facts.")] = False,
    reason: Annotated[
        bool,
        typer.Option("--reason", help="Condense the knowledge into an answer (needs a model)."),
    ] = False,
    path: _PathOpt = None,
    user: _UserOpt = None,
    agent: _AgentOpt = None,
    session: _SessionOpt = None,
    index: _IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The knowledge most relevant to TEXT, each item with the episodes it came from."""
    with _open(ctx, path, user, agent, session, index) as mem:
        if reason:
            if mem.model is None:
                raise typer.BadParameter(
                    "--reason needs a model: set LEMMATA_MODEL or pass --model "
                    "(without one, query shows the ranked knowledge)",
                    param_hint="--reason",
                )
            answer = mem.reason(text, k=k, budget_tokens=budget_tokens or 1500)
            if as_json:
                typer.echo(answer.model_dump_json())
            else:
                console().print(answer.answer or "", markup=False)
                cites = ", ".join(answer.cited) or "nothing"
                console().print(f"({answer.model}; cites {cites})", markup=False, style="dim")
            return
        result = mem.retrieve(
            text, k=k, budget_tokens=budget_tokens, as_of=as_of, include_history=history
        )
    if as_json:
        typer.echo(result.model_dump_json())
        return
    from rich.table import Table

    table = Table(
        "#",
        "item",
        "text",
        "from episodes",
        title=f"{text!r}: {len(result.items)} items, {result.tokens} tokens, "
        f"{result.elapsed_ms:.1f} ms",
    )
    for n, item in enumerate(result.items, 1):
        when = f" (until {item.valid_to:%Y-%m-%d})" if item.valid_to else ""
        table.add_row(str(n), item.id, item.text + when, ", ".join(item.provenance))
    console().print(table)
    if not result.items:
        console(stderr=True).print("nothing matched in this namespace", markup=False)


@app.command("inspect")
def _inspect(
    ctx: typer.Context,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="Graph items and audit entries shown.")
    ] = 10,
    path: _PathOpt = None,
    user: _UserOpt = None,
    agent: _AgentOpt = None,
    session: _SessionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Counts, a sample of the knowledge graph and the latest changes (the audit log)."""
    with _open(ctx, path, user, agent, session) as mem:
        stats = mem.stats()
        nodes = mem.facts(limit=limit) + mem.procedures(limit=limit)
        audit = mem.audit(limit)
    from lemmata.memory.types import Fact

    sample: list[dict[str, Any]] = [
        {
            "id": n.id,
            "kind": "fact" if isinstance(n, Fact) else "procedure",
            "text": n.statement if isinstance(n, Fact) else n.text,
            "sources": list(n.sources),
            "current": not isinstance(n, Fact) or n.valid_to is None,
            "superseded_by": n.superseded_by if isinstance(n, Fact) else None,
        }
        for n in nodes[:limit]
    ]
    changes = [a.model_dump(mode="json") for a in audit]
    if as_json:
        typer.echo(json.dumps({"stats": stats, "graph": sample, "audit": changes}))
        return
    from rich.table import Table

    con = console()
    counts = Table("what", "count", title=f"{stats['namespace']} at {stats['path']}")
    for key, value in stats.items():
        if key not in ("namespace", "path"):
            counts.add_row(key, str(value))
    con.print(counts)
    graph = Table("item", "text", "derived from", "state", title="graph sample")
    for node in sample:
        state = "current" if node["current"] else f"superseded by {node['superseded_by']}"
        graph.add_row(node["id"], node["text"], ", ".join(node["sources"]), state)
    con.print(graph)
    log = Table("seq", "at", "op", "item", "detail", title="audit log (latest)")
    for a in audit:
        log.add_row(
            str(a.seq),
            f"{a.at:%Y-%m-%d %H:%M:%S}",
            a.op,
            a.item_id or "",
            json.dumps(a.detail, default=str),
        )
    con.print(log)


@app.command("reindex")
def _reindex(
    ctx: typer.Context,
    path: _PathOpt = None,
    user: _UserOpt = None,
    agent: _AgentOpt = None,
    index: _IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild the namespace's vector index from the SQLite log (the source of truth)."""
    with _open(ctx, path, user, agent, None, index) as mem:
        with console(stderr=True).status(f"re-embedding {mem.namespace}..."):
            n = mem.reindex()
        where = mem.index.name
    if as_json:
        typer.echo(json.dumps({"indexed": n, "index": where}))
    else:
        console().print(f"indexed {n} items into {where}", markup=False)


@app.command("forget")
def _forget(
    ctx: typer.Context,
    ids: Annotated[list[str] | None, typer.Argument(help="Fact or procedure ids.")] = None,
    episode: Annotated[
        list[str] | None,
        typer.Option("--episode", "-e", help="An episode id (its facts go with it)."),
    ] = None,
    forget_session: Annotated[
        str | None, typer.Option("--forget-session", help="Every episode and item of a session.")
    ] = None,
    path: _PathOpt = None,
    user: _UserOpt = None,
    agent: _AgentOpt = None,
    index: _IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove items, episodes or a session from every retrieval path (audited)."""
    if not ids and not episode and forget_session is None:
        raise typer.BadParameter("give item ids, --episode or --forget-session", param_hint="IDS")
    with _open(ctx, path, user, agent, None, index) as mem:
        report = mem.forget(ids or [], episodes=episode or [], session=forget_session)
    if as_json:
        typer.echo(json.dumps({"items": report.items, "episodes": report.episodes}))
    else:
        console().print(
            f"forgot {len(report.items)} items and {len(report.episodes)} episodes", markup=False
        )
