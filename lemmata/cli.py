"""The ``lemmata`` command line.

Exit codes: 0 done; 1 the work ran and found a problem (``doctor`` saw something broken);
2 bad input or configuration (a bad setting, an unknown model, an unreachable API base: one
line on stderr naming what to change); 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from lemmata.cli_kit import (
    CliState,
    JsonOpt,
    console,
    register_commands,
    settings_of,
)
from lemmata.errors import LemmataError

__all__ = [
    "CliState",
    "app",
    "chat",
    "console",
    "doctor",
    "embed",
    "main",
    "mcp_command",
    "shell",
    "version",
]

app = typer.Typer(
    name="lemmata",
    help="LLM agents that remember, prove, see and research.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _warn(message: str) -> None:
    print(f"lemmata: {message}", file=sys.stderr)


# Each capability's commands live beside it, named under the `lemmata.cli_commands` entry
# points (lemmata.cli_kit); their modules import only typer at load.
register_commands(app, _warn)

_console = console


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[Path | None, typer.Option("--config", help="Settings file (TOML).")] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model (overrides LEMMATA_MODEL).")
    ] = None,
    api_base: Annotated[
        str | None, typer.Option("--api-base", help="API base URL (overrides LEMMATA_API_BASE).")
    ] = None,
) -> None:
    overrides = {k: v for k, v in {"model": model, "api_base": api_base}.items() if v is not None}
    ctx.obj = CliState(config, overrides)


@app.command()
def version() -> None:
    """Print Lemmata's version."""
    from lemmata._version import __version__

    typer.echo(__version__)


@app.command()
def doctor(
    ctx: typer.Context,
    deep: Annotated[
        bool, typer.Option("--deep", help="Load the embedder and embed a sentence.")
    ] = False,
    ping: Annotated[
        bool, typer.Option("--ping", help="Send the configured model one short request.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """What is installed, what is missing, how to get it. Exit 1 if something required is broken."""
    from lemmata.doctor import render, run_checks

    report = run_checks(settings_of(ctx), deep=deep, ping=ping)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        render(report, console())
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def shell(ctx: typer.Context) -> None:
    """An interactive REPL: capability commands, ':model', and chat with the configured model."""
    from lemmata.shell import Shell

    settings = settings_of(ctx)
    Shell(settings, history_file=settings.data_dir / "shell_history").run()


@app.command()
def chat(
    ctx: typer.Context,
    message: Annotated[str, typer.Argument(help="The message; '-' reads it from stdin.")],
    system: Annotated[str | None, typer.Option("--system", help="A system prompt.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Send one message to the configured model and print the reply."""
    from lemmata.llm import get_model

    text = sys.stdin.read() if message == "-" else message
    if not text.strip():
        raise typer.BadParameter("the message is empty", param_hint="MESSAGE")
    model = get_model(settings_of(ctx), required=True, feature="lemmata chat")
    assert model is not None
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": text}
    ]
    reply = model.chat(messages)
    if as_json:
        u = reply.usage
        typer.echo(
            json.dumps(
                {
                    "model": model.name,
                    "scripted": reply.scripted,
                    "content": reply.content,
                    "usage": None
                    if u is None
                    else {
                        "prompt_tokens": u.prompt_tokens,
                        "completion_tokens": u.completion_tokens,
                        "cost_usd": u.cost_usd,
                        "latency_s": round(u.latency_s, 3),
                        "attempts": u.attempts,
                    },
                }
            )
        )
    else:
        typer.echo(reply.content or "")


@app.command()
def embed(
    ctx: typer.Context,
    texts: Annotated[list[str] | None, typer.Argument(help="Texts to embed.")] = None,
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="Read texts from a file, one a line.")
    ] = None,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Rank the texts by similarity to this.")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="How many ranked texts to show.")] = 10,
    as_json: JsonOpt = False,
) -> None:
    """Embed texts with the configured embedder (offline MiniLM by default); with --query, rank them."""
    from lemmata.embeddings import get_embedder

    items = list(texts or [])
    if file is not None:
        try:
            items += [
                line.strip()
                for line in file.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]
        except (OSError, UnicodeDecodeError) as exc:
            raise typer.BadParameter(f"cannot read {file}: {exc}", param_hint="--file") from None
    if not items:
        raise typer.BadParameter("give texts as arguments or with --file", param_hint="TEXTS")
    settings = settings_of(ctx)
    embedder = get_embedder(settings)
    err = console(stderr=True)
    with err.status(f"embedding {len(items)} texts with {embedder.name}..."):
        vectors = embedder.embed(items + ([query] if query else []))
    if query is None:
        if as_json:
            for text, vec in zip(items, vectors, strict=True):
                typer.echo(json.dumps({"text": text, "vector": [round(float(x), 6) for x in vec]}))
        else:
            typer.echo(f"{len(items)} vectors of {vectors.shape[1]} dimensions ({embedder.name})")
        return
    scores = vectors[:-1] @ vectors[-1]
    order = sorted(range(len(items)), key=lambda i: -float(scores[i]))[:top]
    if as_json:
        typer.echo(
            json.dumps([{"text": items[i], "score": round(float(scores[i]), 4)} for i in order])
        )
        return
    from rich.table import Table

    table = Table("score", "text", title=f"closest to {query!r} ({embedder.name})")
    for i in order:
        table.add_row(f"{float(scores[i]):.3f}", items[i])
    console().print(table)


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    transport: Annotated[
        Literal["stdio", "http"],
        typer.Option(
            "--transport",
            "-t",
            help="stdio (for a client that starts this process) or http (streamable HTTP at "
            "/mcp; needs LEMMATA_MCP_TOKEN).",
        ),
    ] = "stdio",
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools", help="Only these capabilities, comma separated (e.g. memory,provers)."
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="With http: the address to listen on.")] = (
        "127.0.0.1"
    ),
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="With http: the port to listen on.")
    ] = 8765,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            help="Confine memory tools to this user (with http: the user LEMMATA_MCP_TOKEN "
            "stands for; default LEMMATA_MCP_USER).",
        ),
    ] = None,
) -> None:
    """Serve Lemmata's operations as MCP tools (stdio, or streamable HTTP with a bearer token)."""
    from lemmata.mcp_server import serve

    serve(settings_of(ctx), transport=transport, tools=tools, host=host, port=port, user=user)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``lemmata`` script."""
    from typer.exceptions import TyperException

    try:
        code = app(args=argv, standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        print("lemmata: interrupted", file=sys.stderr)
        sys.exit(130)
    except LemmataError as exc:
        print(f"lemmata: error[{exc.code}]: {exc}", file=sys.stderr)
        sys.exit(2)
    except TyperException as exc:  # usage errors: typer prints them with the usage line
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            print(f"lemmata: {exc}", file=sys.stderr)
        sys.exit(int(getattr(exc, "exit_code", 2)))
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
