"""Learning-to-refine on miniF2F-rocq: the failure-conditioned search against its ablations.

    python benchmarks/refine_minif2f.py [--data DIR] [--budget-calls 64] [--budget-seconds 60]
        [--configs a,b,c,d] [--workers 2] [--limit N] [--out DIR] [--resume]

Offline, real Coq, on the problems of DIR that compile with what is installed (the others
are listed and left out, as are the audit's three wrong statements), in one run, every
configuration at the same budget of verifier calls (each request counts: a tactic, a replay,
a whole-proof check):

  (a) one-shot: the tactic portfolio, each candidate a whole proof;
  (b) fixed: the search's action set, best-first, in one fixed order, blind to failures;
  (c) refine: the failure-conditioned refinement search (the embedded default);
  (d) refine + value: (c) with the value model ordering the repairs. Reported twice: with
      the model trained on (c)'s traces of *the other half* of the problems (held out,
      two folds by a stable hash of the name), and with the shipped model trained on all of
      them (in-sample).

Prints solved counts overall and per source, median seconds per problem, the ratios the
targets name ((c)/(a), (d)/(a), (d)/(b)), and draws solved-versus-calls curves to
OUT/solved_vs_calls.png. Traces go to OUT/traces/<config>/; ``--train-default`` writes the
in-sample model to the package (the shipped weights).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import zlib
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "minif2f-rocq" / "valid"
SOURCES = ("mathd", "amc", "aime", "imo", "algebra", "numbertheory", "induction")
NAMES = {
    "a": "one-shot portfolio",
    "b": "fixed order, unconditioned",
    "c": "failure-conditioned refine",
    "d_heldout": "refine + value (held out)",
    "d_insample": "refine + value (in-sample)",
}

_coq: Any = None


def source_of(pid: str) -> str:
    for s in SOURCES:
        if pid.startswith(s):
            return s
    return "other"


def fold_of(pid: str) -> int:
    return zlib.crc32(pid.encode()) % 2


def _init() -> None:
    global _coq
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    from lemmata.provers import CoqTop

    _coq = CoqTop(timeout_s=30)


def _run(
    config: str,
    problem: dict[str, Any],
    budget_calls: int,
    budget_s: float,
    trace_dir: str,
    model: str | None,
) -> dict[str, Any]:
    from lemmata.provers.refine import FixedOrderPolicy, OfflinePolicy, SearchConfig, search
    from lemmata.provers.refine.baselines import one_shot
    from lemmata.provers.refine.value import load_scorer

    cfg = SearchConfig(budget_calls=budget_calls, budget_seconds=budget_s)
    trace = Path(trace_dir) / config / (problem["id"].replace("/", "__") + ".jsonl")
    if trace.exists():
        trace.unlink()
    started = time.monotonic()
    args = dict(id=problem["id"], config=cfg, trace=trace)
    if config == "a":
        r = one_shot(_coq, problem["statement"], problem["header"], **args)
    elif config == "b":
        r = search(_coq, problem["statement"], problem["header"], policy=FixedOrderPolicy(), **args)
    elif config == "c":
        r = search(_coq, problem["statement"], problem["header"], policy=OfflinePolicy(), **args)
    else:
        assert model is not None
        r = search(
            _coq,
            problem["statement"],
            problem["header"],
            policy=OfflinePolicy(),
            scorer=load_scorer(Path(model)),
            **args,
        )
    calls_to_solve = r.calls if r.proved else None
    return {
        "config": config,
        "id": problem["id"],
        "status": r.status,
        "calls": r.calls,
        "calls_to_solve": calls_to_solve,
        "seconds": time.monotonic() - started,
        "vacuous": r.vacuous,
        "proof": r.proof,
        "failure": r.failure.kind.value if r.failure else None,
        "message": r.failure.message[:200] if r.failure else None,
    }


def load_problems(data: Path, limit: int | None) -> tuple[list[dict[str, Any]], list[str]]:
    from lemmata.provers.coq.files import read_coq_files

    theorems, problems = read_coq_files(data)
    excluded = [f"input: {p}" for p in problems]
    wrong: set[str] = set()
    audit = data.parent / "audit.json"
    if audit.exists():
        for name, entry in json.loads(audit.read_text()).items():
            if "wrong" in str(entry.get("status", "")).lower():
                wrong.add(name)
    out = []
    for t in theorems:
        if t.id in wrong:
            excluded.append(f"{t.id}: wrong as stated (audit)")
            continue
        out.append({"id": t.id, "statement": t.statement, "header": t.header})
    if limit:
        # A spread over the sources, not the first N alphabetically.
        out.sort(key=lambda p: zlib.crc32(p["id"].encode()))
        out = sorted(out[:limit], key=lambda p: p["id"])
    return out, excluded


def compiles(
    problems: list[dict[str, Any]], workers: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """Keep the problems whose header and statement load with what is installed."""
    ok, excluded = [], []
    with ProcessPoolExecutor(workers, initializer=_init) as pool:
        futs = {
            pool.submit(_precheck, p): p
            for p in sorted(problems, key=lambda p: (p["header"], p["id"]))
        }
        for fut in as_completed(futs):
            p = futs[fut]
            why = fut.result()
            if why is None:
                ok.append(p)
            else:
                excluded.append(f"{p['id']}: {why}")
    return sorted(ok, key=lambda p: p["id"]), excluded


def _precheck(problem: dict[str, Any]) -> str | None:
    from lemmata.provers.refine.backend import header_for

    header, _ = header_for("coq", problem["header"], True, True)
    try:
        s = _coq.open(header, problem["statement"], timeout=60)
    except ValueError as exc:
        return str(exc)[:160]
    s.close()
    return None


def run_config(
    config: str,
    problems: list[dict[str, Any]],
    args: argparse.Namespace,
    models: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    out = []
    done = 0
    with ProcessPoolExecutor(args.workers, initializer=_init) as pool:
        # Problems with the same header run one after another: a worker's coqtop then loads
        # each header once (Reals with Hammer and Interval take seconds).
        futs = [
            pool.submit(
                _run,
                config,
                p,
                args.budget_calls,
                args.budget_seconds,
                str(args.out / "traces"),
                (models or {}).get(p["id"]),
            )
            for p in sorted(problems, key=lambda p: (p["header"], p["id"]))
        ]
        for fut in as_completed(futs):
            r = fut.result()
            out.append(r)
            done += 1
            solved = sum(1 for x in out if x["status"] == "proved")
            print(
                f"\r  ({config}) {done}/{len(problems)} solved {solved}",
                end="",
                file=sys.stderr,
                flush=True,
            )
    print(file=sys.stderr)
    return sorted(out, key=lambda r: r["id"])


def train_models(
    problems: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[dict[str, str], dict[str, str], str]:
    from lemmata.provers.refine.trace import read_trace
    from lemmata.provers.refine.value import train

    traces = read_trace(args.out / "traces" / "c")
    by_fold: dict[int, list] = defaultdict(list)
    for t in traces:
        by_fold[fold_of(t.id)].append(t)
    heldout: dict[str, str] = {}
    for fold in (0, 1):
        path = args.out / f"value_trained_without_fold{fold}.pt"
        _, report = train(by_fold[1 - fold], path)
        print(f"  fold {fold} model: {report}", file=sys.stderr)
        for p in problems:
            if fold_of(p["id"]) == fold:
                heldout[p["id"]] = str(path)
    full = args.out / "value_all.pt"
    _, report = train(traces, full)
    print(f"  in-sample model: {report}", file=sys.stderr)
    if args.train_default:
        from lemmata.provers.refine.value import DEFAULT_MODEL

        train(traces, DEFAULT_MODEL)
        print(f"  shipped model written: {DEFAULT_MODEL}", file=sys.stderr)
    return heldout, {p["id"]: str(full) for p in problems}, str(full)


def curve(results: list[dict[str, Any]], budget: int) -> list[int]:
    solved = sorted(r["calls_to_solve"] for r in results if r["calls_to_solve"] is not None)
    return [sum(1 for c in solved if c <= k) for k in range(1, budget + 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--budget-calls", type=int, default=64)
    ap.add_argument("--budget-seconds", type=float, default=60.0)
    ap.add_argument("--configs", default="a,b,c,d")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="a hash-spread sample of N problems")
    ap.add_argument("--out", type=Path, default=Path("out/refine-bench"))
    ap.add_argument("--train-default", action="store_true", help="write the shipped value model")
    ap.add_argument("--no-insample", action="store_true", help="(d) held out only")
    ap.add_argument(
        "--report-only", action="store_true", help="print the table of OUT/results.json again"
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="keep the configurations already in OUT/results.json (same budgets) and run the rest",
    )
    args = ap.parse_args()
    if args.budget_calls < 1:
        ap.error("--budget-calls must be at least 1")
    if not args.data.is_dir():
        ap.error(f"--data {args.data}: no such folder (the miniF2F-rocq valid split)")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    problems, excluded = load_problems(args.data, args.limit)
    if not args.report_only:
        problems, more = compiles(problems, args.workers)
        excluded += more
    print(f"{len(problems)} problems compile with what is installed; {len(excluded)} left out")
    for e in excluded:
        print(f"  left out: {e}")
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    results: dict[str, list[dict[str, Any]]] = {}
    saved = args.out / "results.json"
    settings = args.out / "run.json"
    if args.report_only:
        results = json.loads(saved.read_text())
        configs = []
        if settings.exists():  # the budgets the results were run with
            ran = json.loads(settings.read_text())
            args.budget_calls, args.budget_seconds = ran["budget_calls"], ran["budget_seconds"]
            args.workers = ran["workers"]
    else:
        if args.resume and saved.exists():
            ran = json.loads(settings.read_text()) if settings.exists() else {}
            same = (ran.get("budget_calls"), ran.get("budget_seconds")) == (
                args.budget_calls,
                args.budget_seconds,
            )
            if not same:
                ap.error(f"--resume: {saved} was run with other budgets ({ran})")
            ids = {p["id"] for p in problems}
            results = {
                c: rs
                for c, rs in json.loads(saved.read_text()).items()
                if {r["id"] for r in rs} == ids
            }
            print(f"kept from {saved}: {', '.join(results) or 'nothing'}")
        settings.write_text(
            json.dumps(
                {
                    "budget_calls": args.budget_calls,
                    "budget_seconds": args.budget_seconds,
                    "workers": args.workers,
                    "data": str(args.data),
                }
            )
        )

    def run(name: str, models: dict[str, str] | None = None) -> None:
        results[name] = run_config(name, problems, args, models)
        saved.write_text(json.dumps(results, indent=1))  # each configuration as it ends

    for c in configs:
        if c == "d":
            if "c" not in results:
                run("c")
            heldout, insample, _ = train_models(problems, args)
            run("d_heldout", heldout)
            if not args.no_insample:
                run("d_insample", insample)
        elif c not in results:
            run(c)
    problems = [
        p for p in problems if any(r["id"] == p["id"] for rs in results.values() for r in rs)
    ]

    n = len(problems)
    by_source = Counter(source_of(p["id"]) for p in problems)
    print(
        f"\nminiF2F-rocq valid, {n} problems, budget {args.budget_calls} calls / "
        f"{args.budget_seconds:g} s each, {args.workers} workers"
    )
    head = f"{'config':<30}{'solved':>8}{'share':>8}{'med s':>8}{'med calls*':>11}  " + " ".join(
        f"{s[:6]:>7}" for s in SOURCES
    )
    print(head)
    print(
        f"{'(problems per source)':<30}{n:>8}{'':>8}{'':>8}{'':>11}  "
        + " ".join(f"{by_source.get(s, 0):>7}" for s in SOURCES)
    )
    solved_of: dict[str, int] = {}
    for c, rs in results.items():
        solved = [r for r in rs if r["status"] == "proved"]
        solved_of[c] = len(solved)
        per = Counter(source_of(r["id"]) for r in solved)
        med_s = statistics.median(r["seconds"] for r in rs) if rs else 0.0
        med_calls = statistics.median(r["calls_to_solve"] for r in solved) if solved else 0
        vac = sum(1 for r in solved if r["vacuous"])
        print(
            f"{'(' + c + ') ' + NAMES.get(c, c):<30}{len(solved):>8}{len(solved) / max(1, n):>8.3f}"
            f"{med_s:>8.2f}{med_calls:>11}  "
            + " ".join(f"{per.get(s, 0):>7}" for s in SOURCES)
            + (f"   ({vac} vacuous)" if vac else "")
        )
    print("* median verifier calls to the proof, over the problems solved")
    marks = [k for k in (4, 8, 16, 32, 64, 128) if k <= args.budget_calls]
    print("\nsolved within N verifier calls (the curves below, at a few budgets):")
    print(f"{'config':<30}" + "".join(f"{k:>7}" for k in marks))
    curves = {c: curve(rs, args.budget_calls) for c, rs in results.items()}
    for c, cv in curves.items():
        print(f"{'(' + c + ')':<30}" + "".join(f"{cv[k - 1]:>7}" for k in marks))
    for x, y in (("c", "a"), ("d_heldout", "b")):
        if x in curves and y in curves:
            print(
                f"{x}/{y} at each: "
                + "  ".join(
                    f"{k}: {curves[x][k - 1] / curves[y][k - 1]:.2f}"
                    if curves[y][k - 1]
                    else f"{k}: n/a"
                    for k in marks
                )
            )

    def ratio(x: str, y: str) -> str:
        if x in solved_of and y in solved_of and solved_of[y]:
            return f"{solved_of[x] / solved_of[y]:.2f}"
        return "n/a"

    print("\nratios (targets: c/a and d/a >= 1.5, d/b >= 1.2):")
    for x, y in (
        ("c", "a"),
        ("d_heldout", "a"),
        ("d_insample", "a"),
        ("d_heldout", "b"),
        ("d_insample", "b"),
        ("c", "b"),
        ("d_heldout", "c"),
    ):
        print(f"  {x}/{y} = {ratio(x, y)}")
    only = {}
    for c, rs in results.items():
        only[c] = {r["id"] for r in rs if r["status"] == "proved"}
    if "a" in only and "c" in only:
        print(
            f"  solved by (c) not (a): {len(only['c'] - only['a'])}; by (a) not (c): "
            f"{len(only['a'] - only['c'])} {sorted(only['a'] - only['c'])[:8]}"
        )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = list(range(1, args.budget_calls + 1))
    for c, rs in results.items():
        ax.plot(xs, curve(rs, args.budget_calls), label=f"({c}) {NAMES.get(c, c)}")
    ax.set_xlabel("verifier calls")
    ax.set_ylabel("problems solved")
    ax.set_title(f"miniF2F-rocq valid ({n} problems): solved vs calls")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    png = args.out / "solved_vs_calls.png"
    fig.savefig(png, dpi=120)
    print(
        f"\ncurves: {png}; traces: {args.out / 'traces'}; total {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
