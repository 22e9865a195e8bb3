"""The ``lemmata`` command line.

Exit codes: 0 done; 1 the work ran and found a problem (``doctor`` saw something broken);
2 bad input or configuration (a bad setting, an unknown model, an unreachable API base: one
line on stderr naming what to change); 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from lemmata.errors import LemmataError
from lemmata.settings import Settings

__all__ = ["app", "main"]

app = typer.Typer(
    name="lemmata",
    help="LLM agents that remember, prove, see and research.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _add_capability_apps() -> None:
    # Each capability's sub-commands live beside it; their modules import only typer at load.
    from lemmata.agents.experience.cli import app as experience_app
    from lemmata.agents.research.cli import register as register_research
    from lemmata.gui.cli import register as register_gui
    from lemmata.memory.cli import app as memory_app
    from lemmata.provers.refine.cli import register as register_refine
    from lemmata.provers.refine.cli_draw import register as register_prove_draw

    app.add_typer(memory_app, name="memory")
    app.add_typer(experience_app, name="experience")
    register_research(app)
    register_gui(app)
    register_refine(app)
    register_prove_draw(app)


_add_capability_apps()


class _State:
    def __init__(self, config: Path | None, overrides: dict[str, Any]) -> None:
        self.config = config
        self.overrides = overrides
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            if self.config is not None:
                self._settings = Settings.load(self.config, **self.overrides)
            else:
                self._settings = Settings.load(**self.overrides)
            from lemmata import tracing

            tracing.configure_from(self._settings)
        return self._settings


def _state(ctx: typer.Context) -> _State:
    obj = ctx.find_root().obj
    assert isinstance(obj, _State)
    return obj


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


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
    ctx.obj = _State(config, overrides)


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
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """What is installed, what is missing, how to get it. Exit 1 if something required is broken."""
    from lemmata.doctor import render, run_checks

    report = run_checks(_state(ctx).settings, deep=deep, ping=ping)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        render(report, _console())
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def shell(ctx: typer.Context) -> None:
    """An interactive REPL: capability commands, ':model', and chat with the configured model."""
    from lemmata.shell import Shell

    settings = _state(ctx).settings
    Shell(settings, history_file=settings.data_dir / "shell_history").run()


@app.command()
def chat(
    ctx: typer.Context,
    message: Annotated[str, typer.Argument(help="The message; '-' reads it from stdin.")],
    system: Annotated[str | None, typer.Option("--system", help="A system prompt.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print reply and usage as JSON.")] = False,
) -> None:
    """Send one message to the configured model and print the reply."""
    from lemmata.llm import get_model

    text = sys.stdin.read() if message == "-" else message
    if not text.strip():
        raise typer.BadParameter("the message is empty", param_hint="MESSAGE")
    model = get_model(_state(ctx).settings, required=True, feature="lemmata chat")
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
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON output (vectors, or the ranking).")
    ] = False,
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
    settings = _state(ctx).settings
    embedder = get_embedder(settings)
    err = _console(stderr=True)
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
    _console().print(table)


def _read_batch(file: Path, reader: Any, *, folders: bool = False) -> tuple[list[Any], list[Any]]:
    """Read a batch with ``reader`` (a file, or a folder when ``folders``); bad input goes to
    stderr as ``FILE:LINE: message`` and the rest is returned. A missing or unreadable file
    is a usage error (exit 2)."""
    from lemmata.provers.report import print_input_problems

    if not (file.is_file() or (folders and file.is_dir())):
        raise typer.BadParameter(f"no such file: {file}", param_hint="FILE")
    try:
        items, problems = reader(file)
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"cannot read {file}: {exc}", param_hint="FILE") from None
    by_source: dict[str, list[tuple[int, str]]] = {}
    for p in problems:
        # A problem in one of a folder's files names that file; a JSONL line names FILE.
        where = getattr(p, "source", "") or str(file)
        pair = (p.line, p.message) if hasattr(p, "message") else p
        by_source.setdefault(where, []).append(pair)
    for where, pairs in by_source.items():
        print_input_problems(_console(stderr=True), where, pairs)
    return items, problems


@app.command()
def prove(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            help="JSONL, one theorem a line: {id, header, statement, proof?}; or a Coq .v file, "
            "or a folder of them: each Admitted or unfinished theorem is one to prove."
        ),
    ],
    backend: Annotated[
        str, typer.Option("--backend", "-b", help="coq or lean (.v files and folders: coq).")
    ] = "coq",
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=1, max=64, help="Verifier processes.")
    ] = 1,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.1, help="Seconds per theorem (default: settings)."),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Results, one JSON line a theorem.")
    ] = Path("results.jsonl"),
    resume: Annotated[bool, typer.Option("--resume", help="Skip ids already in --out.")] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Start the results over if they exist.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray", help="Run the workers on Ray: 'local' (start one here), 'auto' or an address."
        ),
    ] = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="'check' (verify or search proofs), 'refine' (failure-conditioned proof "
            "repair search) or 'wz' (prove sum identities).",
        ),
    ] = "check",
    budget_calls: Annotated[
        int,
        typer.Option(
            "--budget-calls", min=1, help="With --method refine: verifier calls a theorem."
        ),
    ] = 64,
    budget_seconds: Annotated[
        float,
        typer.Option("--budget-seconds", min=0.1, help="With --method refine: seconds a theorem."),
    ] = 60.0,
    trace_dir: Annotated[
        Path | None,
        typer.Option("--trace-dir", help="With --method refine: write each search's trace here."),
    ] = None,
    value: Annotated[
        bool,
        typer.Option(
            "--value/--no-value",
            help="With --method refine: order repairs with the shipped value model (Coq).",
        ),
    ] = True,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out-dir", help="With --method wz: results.jsonl and lean/*.lean go here."),
    ] = None,
) -> None:
    """Check or search proofs for a batch of theorems (or prove sum identities with --method wz);
    exit 0 when the run completed."""
    from lemmata.provers import BACKENDS, make_verifier, read_problems, run_batch

    results = (out_dir or Path("wz-results")) / "results.jsonl" if method == "wz" else out
    if results.exists() and results.stat().st_size and not (resume or overwrite):
        raise typer.BadParameter(
            f"{results} already holds results: pass --resume to continue it or --overwrite to start over",
            param_hint="--out" if method != "wz" else "--out-dir",
        )
    if method == "wz":
        _prove_wz(
            _state(ctx).settings, file, out_dir or Path("wz-results"), timeout, resume, as_json
        )
        return
    if method not in ("check", "refine"):
        raise typer.BadParameter("choose 'check', 'refine' or 'wz'", param_hint="--method")
    if backend not in BACKENDS:
        raise typer.BadParameter(f"choose one of {', '.join(BACKENDS)}", param_hint="--backend")
    if (file.is_dir() or file.suffix == ".v") and backend != "coq":
        raise typer.BadParameter(
            f"{file} is Coq ({'a folder of .v files' if file.is_dir() else 'a .v file'}): "
            "use --backend coq, or leave --backend out",
            param_hint="--backend",
        )
    theorems, problems = _read_batch(file, read_problems, folders=True)
    settings = _state(ctx).settings
    if method == "refine":
        from lemmata.provers.refine.cli import prove_refine

        prove_refine(
            settings=settings,
            theorems=theorems,
            problems=problems,
            file=file,
            out=out,
            backend=backend,
            workers=workers,
            budget_calls=budget_calls,
            budget_seconds=budget_seconds,
            trace_dir=trace_dir,
            resume=resume,
            as_json=as_json,
            value=value,
        )
        return
    err = _console(stderr=True)
    limit = timeout or settings.verifier_timeout_s
    if ray is None:
        make_verifier(
            backend, settings, timeout_s=limit
        ).close()  # a missing Coq/Lean fails here, once

    from lemmata.provers.report import batch_progress

    progress = batch_progress("prove", err, disable=as_json and not err.is_terminal)
    tally: dict[str, int] = {}
    with progress:
        task = progress.add_task("prove", total=None, tally="")

        def started(n: int) -> None:
            progress.update(task, total=n)

        def finished(result: object) -> None:
            status = getattr(result, "status", "?")
            tally[status] = tally.get(status, 0) + 1
            progress.update(
                task, advance=1, tally=" ".join(f"{k} {v}" for k, v in sorted(tally.items()))
            )

        summary = run_batch(
            theorems,
            lambda: make_verifier(backend, settings, timeout_s=limit),
            out=out,
            workers=workers,
            timeout=limit,
            resume=resume,
            on_result=finished,
            on_start=started,
        )
    report = summary.to_dict() | {
        "backend": backend,
        "out": str(out),
        "input_problems": [str(p) for p in problems],
    }
    if as_json:
        typer.echo(json.dumps(report))
        return
    from lemmata.provers.report import print_summary

    where = f" on Ray ({ray})" if ray else ""
    print_summary(
        summary,
        _console(),
        title=f"{file.name}: {backend}, {workers} worker(s){where}",
        bad_lines=len(problems),
        out=str(out),
    )


def _prove_wz(
    settings: Settings,
    file: Path,
    out_dir: Path,
    timeout: float | None,
    resume: bool,
    as_json: bool,
) -> None:
    """``lemmata prove FILE --method wz``: Zeilberger proofs, no LLM, all in this process."""
    from rich.markup import escape

    from lemmata.provers.report import batch_progress, print_counts
    from lemmata.provers.wz.identity import read_identities
    from lemmata.provers.wz.runner import run_wz

    identities, problems = _read_batch(file, read_identities)
    err = _console(stderr=True)
    from lemmata.errors import ToolNotFound
    from lemmata.llm import get_model
    from lemmata.provers import make_verifier

    lean_verifier: Any = None
    why = ""
    try:
        lean_verifier = make_verifier("lean", settings)
    except ToolNotFound as exc:
        why = f"not checked: {exc}"
    # The model only helps once Lean can say which obligations are open.
    model = get_model(settings) if lean_verifier is not None else None
    progress = batch_progress("wz", err, disable=as_json and not err.is_terminal, field="last")
    with progress:
        task = progress.add_task("wz", total=len(identities), last="")
        summary = run_wz(
            identities,
            out_dir,
            resume=resume,
            timeout_s=timeout or 60.0,
            lean_verifier=lean_verifier,
            lean_unavailable=why,
            model=model,
            on_result=lambda r: progress.update(task, advance=1, last=f"{r.id}: {r.verdict}"),
        )
    if lean_verifier is not None:
        lean_verifier.close()
    report = summary.to_dict() | {
        "out_dir": str(out_dir),
        "input_problems": [f"line {n}: {m}" for n, m in problems],
        "lean": "checked" if lean_verifier is not None else why,
    }
    if as_json:
        typer.echo(json.dumps(report))
        return
    c = summary.counts
    title = f"{file.name}: WZ (Zeilberger" + (f", obligations to {model.name})" if model else ")")
    console = _console()
    print_counts(
        console,
        title,
        {
            "identities": summary.total,
            "proved": c["proved"],
            "refuted": c["refuted"],
            "rec-only": c["recurrence-only"],
            "not-hyper": c["not-hypergeometric"],
            "failed": c["failed"],
            "done": summary.skipped,
            "bad": len(problems),
            "s": float(summary.elapsed_s),
        },
    )
    if lean_verifier is None and summary.lean_files:
        console.print(f"Lean sketches written, {escape(why)}", highlight=False)
    console.print(
        f"results: {escape(str(out_dir / 'results.jsonl'))}; Lean sketches: {len(summary.lean_files)} "
        f"in {escape(str(out_dir / 'lean'))}",
        highlight=False,
    )


@app.command("convert-lean")
def convert_lean(
    files: Annotated[
        list[Path],
        typer.Argument(help="Lean 4 files with `theorem ... := sorry` (PutnamBench, miniF2F)."),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The JSONL to write, for `lemmata prove --backend lean`."),
    ],
) -> None:
    """Turn Lean files of `theorem ... := sorry` into the JSONL that `lemmata prove` reads."""
    from lemmata.provers.convert import lean_files_to_jsonl

    records, problems = lean_files_to_jsonl(files)

    err = _console(stderr=True)
    for problem in problems:
        err.print(problem, style="yellow", markup=False, highlight=False, soft_wrap=True)
    if not records:
        raise typer.BadParameter("no theorem found in the files given", param_hint="FILES")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    tmp.replace(out)  # all or nothing: an existing file is never left half-written
    typer.echo(f"{len(records)} theorems from {len(files) - len(problems)} file(s) -> {out}")


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

    serve(_state(ctx).settings, transport=transport, tools=tools, host=host, port=port, user=user)


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
