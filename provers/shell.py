"""The provers' commands in ``lemmata shell``: ``prove`` (a batch: JSONL, a Coq ``.v`` file or a
folder of them; checked and searched, or proved by the refinement search) and ``check`` (one
Coq theorem, typed in)."""

from __future__ import annotations

import glob
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.commands import CommandContext, CommandParser, ShellCommand
from lemmata.errors import UsageError

if TYPE_CHECKING:
    from lemmata.provers.runner import Worker

__all__ = ["COMMANDS"]


def _prove_parser() -> CommandParser:
    p = CommandParser(prog="prove", add_help=False)
    p.add_argument("file", type=Path)
    p.add_argument("--backend", "-b", choices=("coq", "lean"), default="coq")
    p.add_argument("--method", choices=("check", "refine"), default="check")
    p.add_argument("--workers", "-w", type=int, default=1)
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument("--budget-calls", type=int, default=64)
    p.add_argument("--budget-seconds", type=float, default=60.0)
    p.add_argument("--trace-dir", type=Path, default=None)
    p.add_argument("--no-value", dest="value", action="store_false")
    p.add_argument("--out", "-o", type=Path, default=None)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--overwrite", action="store_true")
    return p


def _refine_worker(ctx: CommandContext, ns: Any) -> Worker:
    """A worker that proves by the refinement search (``--method refine``), with the shipped
    value model (Coq, unless ``--no-value``) and the session's model, if any."""
    from lemmata.provers import make_verifier
    from lemmata.provers.refine.cli import RefineWorker
    from lemmata.provers.refine.search import SearchConfig
    from lemmata.provers.refine.value import DEFAULT_MODEL, load_scorer

    scorer = None
    if ns.value and ns.backend == "coq" and DEFAULT_MODEL.exists():
        scorer = load_scorer(DEFAULT_MODEL)
    return RefineWorker(
        make_verifier(ns.backend, ctx.settings),
        SearchConfig(budget_calls=ns.budget_calls, budget_seconds=ns.budget_seconds),
        scorer=scorer,
        model=ctx.model,
        trace_dir=ns.trace_dir,
    )


def _prove(ctx: CommandContext, args: str) -> None:
    from lemmata.provers import make_verifier, read_problems, run_batch
    from lemmata.provers.report import print_summary

    ns = _prove_parser().parse_args(shlex.split(args))
    coq_files = ns.file.is_dir() or ns.file.suffix == ".v"
    if not (ns.file.is_file() or ns.file.is_dir()):
        raise UsageError(f"prove: no such file: {ns.file}")
    if coq_files and ns.backend != "coq":
        raise UsageError(f"prove: {ns.file} is Coq: use --backend coq, or leave --backend out")
    if not 1 <= ns.workers <= 64:
        raise UsageError("prove: --workers must be between 1 and 64")
    refine = ns.method == "refine"
    if refine and ns.budget_calls < 1:
        raise UsageError(f"prove: --budget-calls must be at least 1, got {ns.budget_calls}")
    if refine and not ns.budget_seconds > 0:
        raise UsageError(f"prove: --budget-seconds must be positive, got {ns.budget_seconds:g}")
    try:
        theorems, problems = read_problems(ns.file)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"prove: cannot read {ns.file}: {exc}") from None
    for problem in problems:
        # A problem in one of a folder's files names that file; a JSONL line names FILE.
        where = problem.source or ns.file
        ctx.console.print(f"{where}:{problem.line}: {problem.message}, skipped", markup=False)
    limit = ns.budget_seconds if refine else ns.timeout or ctx.settings.verifier_timeout_s
    make_verifier(ns.backend, ctx.settings, timeout_s=limit).close()  # a missing prover, once
    out = ns.out or ns.file.with_name(ns.file.stem + ".results.jsonl")
    if out.exists() and out.stat().st_size and not (ns.resume or ns.overwrite):
        raise UsageError(
            f"{out} already holds results: add --resume to continue it or --overwrite to start over"
        )
    done = 0

    def tick(_result: object) -> None:
        nonlocal done
        done += 1
        status.update(f"proving {ns.file.name}: {done}/{len(theorems)}")

    def make_worker() -> Any:
        if refine:
            return _refine_worker(ctx, ns)
        return make_verifier(ns.backend, ctx.settings, timeout_s=limit)

    with ctx.console.status(f"proving {ns.file.name}: 0/{len(theorems)}") as status:
        summary = run_batch(
            theorems,
            make_worker,
            out=out,
            workers=ns.workers,
            timeout=limit,
            resume=ns.resume,
            on_result=tick,
        )
    method = f", refine ({ns.budget_calls} calls / {ns.budget_seconds:g} s a theorem)"
    print_summary(
        summary,
        ctx.console,
        title=f"{ns.file.name}: {ns.backend}{method if refine else ''}",
        bad_lines=len(problems),
        out=str(out),
    )
    if refine and ns.trace_dir is not None:
        ctx.console.print(
            f"traces: {ns.trace_dir} (draw one: lemmata prove-draw TRACE)", markup=False
        )


def _check(ctx: CommandContext, args: str) -> None:
    """``check Theorem t : 2 + 2 = 4. Proof. reflexivity. Qed.``: the first sentence is the
    statement, the rest the proof (Coq, under the standard library's arithmetic)."""
    from lemmata.provers import make_verifier
    from lemmata.provers.coq.sentences import split_sentences

    text = args.strip()
    if not text:
        raise UsageError(
            "check: give a Coq theorem and its proof, e.g. check Theorem t : 1 + 1 = 2. lia."
        )
    try:
        sentences = split_sentences(text)
    except ValueError as exc:
        raise UsageError(f"check: {exc}") from None
    if len(sentences) < 2:
        raise UsageError("check: give the statement and then the proof")
    statement = sentences[0].text
    proof = text[sentences[1].start :]
    verifier = make_verifier("coq", ctx.settings)
    try:
        r = verifier.check("From Coq Require Import Arith Lia List.", statement, proof)
    finally:
        verifier.close()
    if r.ok:
        axioms = f" (axioms: {', '.join(r.axioms)})" if r.axioms else ""
        ctx.console.print(f"[green]proved[/] in {r.elapsed_s:.2f}s{axioms}")
        return
    fm = r.failure_mode
    where = f" at line {fm.line}, column {fm.column}" if fm and fm.line else ""
    ctx.console.print(
        f"[red]{r.status.value}[/]: {fm.kind.value if fm else '?'}{where}", highlight=False
    )
    if fm:
        ctx.console.print(fm.message, markup=False)
    for goal in r.goals:
        ctx.console.print(goal, markup=False)


def _complete_path(prefix: str) -> list[str]:
    return sorted(glob.glob(prefix + "*"))[:50]


COMMANDS = [
    ShellCommand(
        "prove",
        "check, search or refine proofs for a batch of theorems (JSONL, a .v file or a folder)",
        _prove,
        usage="prove FILE [--backend coq|lean] [--method check|refine] [--workers N] "
        "[--timeout S] [--budget-calls N] [--budget-seconds S] [--trace-dir DIR] [--no-value] "
        "[--out PATH] [--resume | --overwrite]",
        complete=_complete_path,
    ),
    ShellCommand(
        "check",
        "check one Coq theorem and its proof, typed in",
        _check,
        usage="check Theorem NAME : STATEMENT. PROOF",
    ),
]
