"""The provers' commands in ``lemmata shell``: ``prove`` (a batch file) and ``check`` (one Coq
theorem, typed in)."""

from __future__ import annotations

import glob
import shlex
from pathlib import Path

from lemmata.commands import CommandContext, CommandParser, ShellCommand
from lemmata.errors import UsageError

__all__ = ["COMMANDS"]


def _prove_parser() -> CommandParser:
    p = CommandParser(prog="prove", add_help=False)
    p.add_argument("file", type=Path)
    p.add_argument("--backend", "-b", choices=("coq", "lean"), default="coq")
    p.add_argument("--workers", "-w", type=int, default=1)
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument("--out", "-o", type=Path, default=None)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--overwrite", action="store_true")
    return p


def _prove(ctx: CommandContext, args: str) -> None:
    from lemmata.provers import make_verifier, read_theorems, run_batch
    from lemmata.provers.report import print_summary

    ns = _prove_parser().parse_args(shlex.split(args))
    if not ns.file.is_file():
        raise UsageError(f"prove: no such file: {ns.file}")
    if not 1 <= ns.workers <= 64:
        raise UsageError("prove: --workers must be between 1 and 64")
    theorems, problems = read_theorems(ns.file)
    for problem in problems:
        ctx.console.print(f"{ns.file}:{problem.line}: {problem.message}, skipped", markup=False)
    limit = ns.timeout or ctx.settings.verifier_timeout_s
    make_verifier(ns.backend, ctx.settings, timeout_s=limit).close()
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

    with ctx.console.status(f"proving {ns.file.name}: 0/{len(theorems)}") as status:
        summary = run_batch(
            theorems,
            lambda: make_verifier(ns.backend, ctx.settings, timeout_s=limit),
            out=out,
            workers=ns.workers,
            timeout=limit,
            resume=ns.resume,
            on_result=tick,
        )
    print_summary(
        summary,
        ctx.console,
        title=f"{ns.file.name}: {ns.backend}",
        bad_lines=len(problems),
        out=str(out),
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
        "check or search proofs for a JSONL batch of theorems",
        _prove,
        usage="prove FILE [--backend coq|lean] [--workers N] [--timeout S] [--out PATH] [--resume | --overwrite]",
        complete=_complete_path,
    ),
    ShellCommand(
        "check",
        "check one Coq theorem and its proof, typed in",
        _check,
        usage="check Theorem NAME : STATEMENT. PROOF",
    ),
]
