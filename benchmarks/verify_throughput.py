"""Proof checks per second on the bundled Coq suite: reused sessions against a fresh coqtop per
check, with 1 and 2 workers, side by side.

    python benchmarks/verify_throughput.py [--rounds N] [--repeats R]

First the tactic portfolio finds a proof for every theorem (not timed). Then each
configuration checks every (theorem, proof) pair ``--rounds`` times over, split among the
workers; the figure is checks per second, the median of ``--repeats`` runs. Targets: reuse at
least 5x a fresh process per check; 2 workers at least 1.7x one.
"""

from __future__ import annotations

import argparse
import queue
import statistics
import threading
import time
from pathlib import Path

from lemmata.provers import CoqTop, read_theorems
from lemmata.provers.runner import prove_one

SUITE = Path(__file__).resolve().parents[1] / "provers" / "suites" / "coq_basic.jsonl"


def proved_pairs() -> list[tuple[str, str, str]]:
    theorems, _ = read_theorems(SUITE)
    pairs = []
    with CoqTop() as coq:
        for t in theorems:
            r = prove_one(coq, t, 30)
            if r.status == "proved" and r.proof:
                pairs.append((t.header, t.statement, r.proof))
    return pairs


def run(pairs: list[tuple[str, str, str]], workers: int, reuse: bool) -> tuple[float, int]:
    """Check every pair with ``workers`` verifiers; return (checks per second, failures)."""
    jobs: queue.Queue[tuple[str, str, str]] = queue.Queue()
    for pair in pairs:
        jobs.put(pair)
    verifiers = [CoqTop(reuse=reuse) for _ in range(workers)]
    if reuse:  # sessions start and load their header before the clock starts
        for v in verifiers:
            v.check(pairs[0][0], "Theorem warm : True.", "exact I.")
    failures = [0] * workers

    def worker(i: int) -> None:
        while True:
            try:
                header, statement, proof = jobs.get_nowait()
            except queue.Empty:
                return
            if not verifiers[i].check(header, statement, proof, 60).ok:
                failures[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    for v in verifiers:
        v.close()
    return len(pairs) / elapsed, sum(failures)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--rounds", type=int, default=5, help="passes over the suite per run (reused sessions)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    pairs = proved_pairs()
    print(f"Coq suite: {len(pairs)} theorems with proofs found by the portfolio")
    rates: dict[tuple[bool, int], float] = {}
    for reuse in (True, False):
        # A fresh process per check is slow: one pass over the suite is enough for its median.
        work = pairs * (args.rounds if reuse else 1)
        for workers in (1, 2):
            runs = [run(work, workers, reuse) for _ in range(args.repeats)]
            bad = sum(f for _, f in runs)
            rates[(reuse, workers)] = statistics.median(r for r, _ in runs)
            label = "reused session" if reuse else "fresh process"
            print(
                f"  {label:15} {workers} worker(s): {rates[(reuse, workers)]:8.1f} checks/s"
                f"  ({len(work)} checks a run, median of {args.repeats}{f', {bad} FAILED' if bad else ''})"
            )
    print()
    print(f"{'':18}{'1 worker':>12}{'2 workers':>12}{'2 vs 1':>9}")
    for reuse in (True, False):
        one, two = rates[(reuse, 1)], rates[(reuse, 2)]
        label = "reused session" if reuse else "fresh process"
        print(f"{label:18}{one:12.1f}{two:12.1f}{two / one:8.2f}x")
    print(
        f"{'reuse vs fresh':18}{rates[(True, 1)] / rates[(False, 1)]:11.1f}x"
        f"{rates[(True, 2)] / rates[(False, 2)]:11.1f}x"
    )
    print("targets: reuse vs fresh >= 5x; 2 workers vs 1 >= 1.7x")


if __name__ == "__main__":
    main()
