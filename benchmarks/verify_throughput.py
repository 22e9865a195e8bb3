"""Proof checks per second on the bundled Coq suite: reused sessions against a fresh coqtop per
check, with 1 and 2 workers, side by side; and the reused sessions in Ray actors on a local Ray
instance (``lemmata prove --ray local``) beside the same number of threads.

    python benchmarks/verify_throughput.py [--rounds N] [--repeats R] [--no-ray]

First the tactic portfolio finds a proof for every theorem (not timed). Then each
configuration checks every (theorem, proof) pair ``--rounds`` times over, split among the
workers; the figure is checks per second, the median of ``--repeats`` runs. Workers (threads
here, or actors) start and load their header before the clock starts; Ray's start-up is not
timed either. Targets: reuse at least 5x a fresh process per check; 2 workers at least 1.7x
one. Ray adds a round trip per check: the comparison shows what that costs.
"""

from __future__ import annotations

import argparse
import queue
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lemmata.provers import CoqTop, read_theorems
from lemmata.provers.runner import Theorem, prove_one

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


def timed(
    pairs: list[tuple[str, str, str]], checks: list[Callable[..., bool]]
) -> tuple[float, int]:
    """Check every pair, one thread per checker; return (checks per second, failures)."""
    jobs: queue.Queue[tuple[str, str, str]] = queue.Queue()
    for pair in pairs:
        jobs.put(pair)
    failures = [0] * len(checks)

    def worker(i: int) -> None:
        while True:
            try:
                header, statement, proof = jobs.get_nowait()
            except queue.Empty:
                return
            if not checks[i](header, statement, proof):
                failures[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(checks))]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(pairs) / (time.perf_counter() - start), sum(failures)


def run(pairs: list[tuple[str, str, str]], workers: int, reuse: bool) -> tuple[float, int]:
    """Check every pair with ``workers`` verifiers; return (checks per second, failures)."""
    verifiers = [CoqTop(reuse=reuse) for _ in range(workers)]
    if reuse:  # sessions start and load their header before the clock starts
        for v in verifiers:
            v.check(pairs[0][0], "Theorem warm : True.", "exact I.")
    try:
        return timed(pairs, [lambda h, s, p, v=v: v.check(h, s, p, 60).ok for v in verifiers])
    finally:
        for v in verifiers:
            v.close()


def run_ray(cluster: object, pairs: list[tuple[str, str, str]], workers: int) -> tuple[float, int]:
    """As :func:`run` with reused sessions, each in a Ray actor (as ``lemmata prove --ray``)."""
    import functools

    from lemmata.provers.ray_workers import RayCluster, check_worker, remote_settings
    from lemmata.settings import Settings

    assert isinstance(cluster, RayCluster)
    build = functools.partial(check_worker, "coq", remote_settings(Settings.load()), 60)
    actors = [cluster.make_worker(build, "coq") for _ in range(workers)]

    def check(actor: object, header: str, statement: str, proof: str) -> bool:
        result = actor.prove(Theorem("t", statement, header, proof), 60)  # type: ignore[attr-defined]
        return bool(result.status == "proved" and result.details.get("ray_actor_id"))

    for a in actors:  # each actor starts its coqtop and loads the header before the clock
        check(a, pairs[0][0], "Theorem warm : True.", "exact I.")
    try:
        return timed(pairs, [functools.partial(check, a) for a in actors])
    finally:
        for a in actors:
            a.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--rounds", type=int, default=5, help="passes over the suite per run (reused sessions)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-ray", action="store_true", help="leave out the Ray actors")
    args = ap.parse_args()
    pairs = proved_pairs()
    print(f"Coq suite: {len(pairs)} theorems with proofs found by the portfolio")
    rates: dict[tuple[str, int], float] = {}
    labels = {"reuse": "reused session", "fresh": "fresh process", "ray": "Ray local, reused"}

    def measure(kind: str, workers: int, work: list[tuple[str, str, str]], once: Callable) -> None:
        runs = [once() for _ in range(args.repeats)]
        bad = sum(f for _, f in runs)
        rates[(kind, workers)] = statistics.median(r for r, _ in runs)
        print(
            f"  {labels[kind]:18} {workers} worker(s): {rates[(kind, workers)]:8.1f} checks/s"
            f"  ({len(work)} checks a run, median of {args.repeats}{f', {bad} FAILED' if bad else ''})"
        )

    for reuse in (True, False):
        # A fresh process per check is slow: one pass over the suite is enough for its median.
        work = pairs * (args.rounds if reuse else 1)
        for workers in (1, 2):
            measure(
                "reuse" if reuse else "fresh",
                workers,
                work,
                lambda w=work, n=workers, r=reuse: run(w, n, r),
            )
    kinds = ["reuse", "fresh"]
    if not args.no_ray:
        from lemmata.provers.ray_workers import RayCluster

        work = pairs * args.rounds
        with RayCluster("local", workers=2) as cluster:
            for workers in (1, 2):
                measure("ray", workers, work, lambda n=workers: run_ray(cluster, work, n))
        kinds.insert(1, "ray")
    print()
    print(f"{'':20}{'1 worker':>12}{'2 workers':>12}{'2 vs 1':>9}")
    for kind in kinds:
        one, two = rates[(kind, 1)], rates[(kind, 2)]
        print(f"{labels[kind]:20}{one:12.1f}{two:12.1f}{two / one:8.2f}x")
    print(
        f"{'reuse vs fresh':20}{rates[('reuse', 1)] / rates[('fresh', 1)]:11.1f}x"
        f"{rates[('reuse', 2)] / rates[('fresh', 2)]:11.1f}x"
    )
    if "ray" in kinds:
        print(
            f"{'Ray vs threads':20}{rates[('ray', 1)] / rates[('reuse', 1)]:11.2f}x"
            f"{rates[('ray', 2)] / rates[('reuse', 2)]:11.2f}x"
        )
    print("targets: reuse vs fresh >= 5x; 2 workers vs 1 >= 1.7x")


if __name__ == "__main__":
    main()
