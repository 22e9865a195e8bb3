"""``lemmata lean-check``: a batch of Lean snippets, or PutnamBench's Lean files, checked on a
pool of Lean REPLs (:class:`~lemmata.provers.lean.pool.LeanPool`), with Kimina-compatible
input and output (:mod:`lemmata.provers.lean.kimina`).

    lemmata lean-check snippets.jsonl --out results.jsonl
    lemmata lean-check PutnamBench/lean4/src --proofs proofs.jsonl [--inline-solutions]

Each result is appended to ``--out`` as it finishes (a Ctrl-C leaves a valid file and
``--resume`` goes on from it), with the toolchain it ran under. Exit codes as for every
``lemmata`` command: 0 the run completed; 2 bad input or configuration (no Lean REPL here,
with how to get one); 130 interrupted.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from lemmata.cli_kit import JsonOpt, ResumeOpt, WorkersOpt, console, progress_bar, settings_of

__all__ = ["lean_check", "register"]


def _is_putnam(source: Path) -> bool:
    return source.is_dir() or source.suffix == ".lean"


def lean_check(
    ctx: typer.Context,
    source: Annotated[
        Path,
        typer.Argument(
            help="Snippets as the Kimina server reads them (JSONL {id, code}, or a JSON "
            "request {snippets: [...]}) or PutnamBench's putnam_*.lean files (a folder or one "
            "file)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Results, one JSON line each.")] = Path(
        "lean-results.jsonl"
    ),
    proofs: Annotated[
        Path | None,
        typer.Option(
            "--proofs",
            help="PutnamBench only: JSONL {id, proof, answer?} or {id, code}; problems without "
            "one are checked as published (sorry is then the good result).",
        ),
    ] = None,
    inline_solutions: Annotated[
        bool,
        typer.Option(
            "--inline-solutions", help="PutnamBench only: put each answer into its statement."
        ),
    ] = False,
    pool_size: Annotated[
        int, typer.Option("--pool-size", min=1, max=64, help="Lean REPLs kept running.")
    ] = 2,
    workers: WorkersOpt = 2,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.1, help="Seconds per snippet (default: the settings')."),
    ] = None,
    untrusted: Annotated[
        bool,
        typer.Option("--untrusted", help="Run the REPLs confined (bubblewrap); refuse otherwise."),
    ] = False,
    resume: ResumeOpt = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the results file if it exists.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check Lean snippets or PutnamBench problems on a pool of Lean REPLs."""
    from lemmata.provers.cli import read_batch
    from lemmata.provers.lean.kimina import read_kimina, run_kimina
    from lemmata.provers.lean.pool import LeanPool
    from lemmata.provers.lean.putnam import putnam_batch
    from lemmata.provers.lean.repl import find_repl

    if not source.exists():
        raise typer.BadParameter(f"no such file or folder: {source}", param_hint="SOURCE")
    putnam = _is_putnam(source)
    if not putnam and (proofs is not None or inline_solutions):
        raise typer.BadParameter(
            "--proofs and --inline-solutions are for PutnamBench's .lean files",
            param_hint="--proofs",
        )
    if proofs is not None and not proofs.is_file():
        raise typer.BadParameter(f"no such file: {proofs}", param_hint="--proofs")
    if out.exists() and not (resume or overwrite):
        raise typer.BadParameter(
            f"{out} exists: --resume to go on from it, or --overwrite to replace it",
            param_hint="--out",
        )
    if putnam:

        def reader(path: Path) -> tuple[list[Any], list[Any]]:
            return putnam_batch(path, proofs, inline_solutions=inline_solutions)

        items, problems = read_batch(source, reader, folders=True)
    else:
        items, problems = read_batch(source, read_kimina)
    if not items:
        raise typer.BadParameter(f"nothing to check in {source}", param_hint="SOURCE")
    settings = settings_of(ctx)
    if untrusted:
        settings = settings.model_copy(update={"untrusted_input": True})
    command = shlex.split(settings.lean_repl) if settings.lean_repl else None
    find_repl(command, settings.lean_project)  # no Lean here: exit 2 with how to get it, once
    options: dict[str, Any] = {"untrusted": True} if settings.untrusted_input else {}
    err = console(stderr=True)
    progress = progress_bar(
        "lean-check", err, disable=as_json and not err.is_terminal, fields=("tally",)
    )
    tally: dict[str, int] = {}
    with (
        LeanPool(
            command,
            project=settings.lean_project,
            size=pool_size,
            timeout_s=timeout or settings.verifier_timeout_s,
            repl_options=options,
        ) as pool,
        progress,
    ):
        task = progress.add_task("lean-check", total=len(items), tally="")

        def finished(result: Any) -> None:
            tally[result.status] = tally.get(result.status, 0) + 1
            progress.update(
                task, advance=1, tally=" ".join(f"{k} {v}" for k, v in sorted(tally.items()))
            )

        run = run_kimina(
            items, pool=pool, out=out, resume=resume, timeout=timeout, workers=workers,
            on_result=finished,
        )  # fmt: skip
        toolchain = pool.toolchain()
    report = run.summary() | {
        "out": str(out),
        "toolchain": toolchain,
        "input_problems": [str(p) for p in problems],
    }
    if as_json:
        typer.echo(json.dumps(report))
        return
    from lemmata.provers.report import print_counts

    counts = {k: report[k] for k in ("total", "valid", "sorry", "lean_error", "repl_error")}
    counts |= {"timeout": report["timeout_error"], "skipped": report["skipped_already_done"]}
    print_counts(console(), f"{source.name}: Lean {report['toolchain']}", counts)
    console().print(f"results: {out}", markup=False)


def register(app: typer.Typer) -> None:
    """Add ``lean-check`` to ``app``."""
    app.command("lean-check")(lean_check)
