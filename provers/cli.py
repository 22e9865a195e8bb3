"""``lemmata prove`` (check, search, refine or WZ-prove a batch) and ``lemmata convert-lean``;
:func:`register` adds them, with ``prove-train`` and ``prove-draw``, to the ``lemmata`` app
(entry-point group ``lemmata.cli_commands``, see :mod:`lemmata.cli_kit`).

Exit codes as for every ``lemmata`` command: 0 the run completed; 2 bad input or
configuration, one line naming what to fix; 130 interrupted.
"""

from __future__ import annotations

import contextlib
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lemmata.cli_kit import JsonOpt, ResumeOpt, WorkersOpt, console, progress_bar, settings_of

if TYPE_CHECKING:
    from lemmata.settings import Settings

__all__ = ["convert_lean", "prove", "read_batch", "register"]


def read_batch(file: Path, reader: Any, *, folders: bool = False) -> tuple[list[Any], list[Any]]:
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
        print_input_problems(console(stderr=True), where, pairs)
    return items, problems


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
    workers: WorkersOpt = 1,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.1, help="Seconds per theorem (default: settings)."),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Results, one JSON line a theorem.")
    ] = Path("results.jsonl"),
    resume: ResumeOpt = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Start the results over if they exist.")
    ] = False,
    as_json: JsonOpt = False,
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
    untrusted: Annotated[
        bool,
        typer.Option(
            "--untrusted",
            help="The input is untrusted: run the provers confined (bubblewrap; fails when "
            "confinement is not available here).",
        ),
    ] = False,
) -> None:
    """Check or search proofs for a batch of theorems (or prove sum identities with --method wz);
    exit 0 when the run completed."""
    from lemmata.provers import BACKENDS, make_verifier, read_problems, run_batch

    if ray is not None:
        from lemmata.provers.ray_workers import check_address

        check_address(ray)
    results = (out_dir or Path("wz-results")) / "results.jsonl" if method == "wz" else out
    if results.exists() and results.stat().st_size and not (resume or overwrite):
        raise typer.BadParameter(
            f"{results} already holds results: pass --resume to continue it or --overwrite to start over",
            param_hint="--out" if method != "wz" else "--out-dir",
        )
    if method == "wz":
        _prove_wz(
            settings_of(ctx),
            file,
            out_dir or Path("wz-results"),
            timeout,
            resume,
            as_json,
            ray=ray,
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
    theorems, problems = read_batch(file, read_problems, folders=True)
    settings = settings_of(ctx)
    if untrusted:
        settings = settings.model_copy(update={"untrusted_input": True})
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
            ray=ray,
        )
        return
    err = console(stderr=True)
    limit = timeout or settings.verifier_timeout_s
    if ray is None:
        make_verifier(
            backend, settings, timeout_s=limit
        ).close()  # a missing Coq/Lean fails here, once

    progress = progress_bar(
        "prove", err, disable=as_json and not err.is_terminal, fields=("tally",)
    )
    tally: dict[str, int] = {}
    make: Any = lambda: make_verifier(backend, settings, timeout_s=limit)  # noqa: E731
    cluster: Any = contextlib.nullcontext()
    if ray is not None:
        from lemmata.provers.ray_workers import RayCluster, check_worker, remote_settings

        cluster = RayCluster(ray, workers=workers)
        make = cluster.factory(
            functools.partial(check_worker, backend, remote_settings(settings), limit), backend
        )
    with cluster, progress:
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
            make,
            out=out,
            workers=workers,
            timeout=limit,
            resume=resume,
            on_result=finished,
            on_start=started,
        )
    report = summary.to_dict() | {
        "backend": backend,
        "ray": ray,
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
        console(),
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
    *,
    ray: str | None = None,
) -> None:
    """``lemmata prove FILE --method wz``: Zeilberger proofs, no LLM; in a worker process
    here, or in a Ray actor with ``ray``. Lean checks and the model stay in this process."""
    from rich.markup import escape

    from lemmata.provers.report import print_counts
    from lemmata.provers.wz.identity import read_identities
    from lemmata.provers.wz.runner import run_wz

    identities, problems = read_batch(file, read_identities)
    err = console(stderr=True)
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
    progress = progress_bar("wz", err, disable=as_json and not err.is_terminal, fields=("last",))
    limit = timeout or settings.verifier_timeout_s
    cluster: Any = contextlib.nullcontext()
    if ray is not None:
        from lemmata.provers.ray_workers import RayCluster

        cluster = RayCluster(ray)
    with cluster, progress:
        task = progress.add_task("wz", total=len(identities), last="")
        summary = run_wz(
            identities,
            out_dir,
            resume=resume,
            timeout_s=limit,
            prover=None if ray is None else cluster.wz_prover(3, limit),
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
        "ray": ray,
    }
    if as_json:
        typer.echo(json.dumps(report))
        return
    c = summary.counts
    title = f"{file.name}: WZ (Zeilberger" + (f", obligations to {model.name})" if model else ")")
    title += f" on Ray ({ray})" if ray else ""
    screen = console()
    print_counts(
        screen,
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
        screen.print(f"Lean sketches written, {escape(why)}", highlight=False)
    screen.print(
        f"results: {escape(str(out_dir / 'results.jsonl'))}; Lean sketches: {len(summary.lean_files)} "
        f"in {escape(str(out_dir / 'lean'))}",
        highlight=False,
    )


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

    err = console(stderr=True)
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


def register(app: typer.Typer) -> None:
    """Add ``prove``, ``convert-lean``, ``lean-check``, ``prove-train`` and ``prove-draw`` to
    ``app``."""
    from lemmata.provers.lean.cli import register as register_lean
    from lemmata.provers.refine.cli import register as register_refine
    from lemmata.provers.refine.cli_draw import register as register_draw

    app.command("prove")(prove)
    app.command("convert-lean")(convert_lean)
    register_lean(app)
    register_refine(app)
    register_draw(app)
