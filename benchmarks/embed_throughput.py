"""Embedding throughput of the bundled MiniLM: batch sizes, and the disk cache cold vs warm.

    python benchmarks/embed_throughput.py [--texts N] [--repeats R]

Prints texts per second (median of R runs) for each batch size, then for the cache: a cold
pass (every text computed and stored) against a warm pass (every text read back), and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from lemmata.embeddings import CachedEmbedder, SentenceTransformerEmbedder


def corpus(n: int) -> list[str]:
    subjects = ["the prover", "a lemma", "the agent", "memory", "the database", "a screen"]
    verbs = ["checks", "recalls", "explores", "grounds", "refines", "summarises"]
    objects = ["a goal", "an episode", "the schema", "a button", "the proof", "an insight"]
    return [
        f"{subjects[i % 6]} {verbs[(i // 6) % 6]} {objects[(i // 36) % 6]} number {i}"
        for i in range(n)
    ]


def rate(fn, n: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return n / statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    texts = corpus(args.texts)
    model = SentenceTransformerEmbedder.minilm(threads=2)
    model.embed(texts[:8])  # load the weights outside the timings

    print(f"MiniLM, {args.texts} texts, median of {args.repeats} runs")
    print(f"{'batch size':>12} {'texts/s':>10}")
    for batch in (1, 16, 64, 256):
        model.batch_size = batch
        print(f"{batch:>12} {rate(lambda: model.embed(texts), len(texts), args.repeats):>10.1f}")

    model.batch_size = 64
    with tempfile.TemporaryDirectory() as tmp:
        cold_rates, warm_rates = [], []
        for r in range(args.repeats):
            cached = CachedEmbedder(model, Path(tmp) / f"cache{r}.sqlite")
            cold_rates.append(rate(lambda c=cached: c.embed(texts), len(texts), 1))
            warm_rates.append(rate(lambda c=cached: c.embed(texts), len(texts), 1))
            cached.close()
    cold, warm = statistics.median(cold_rates), statistics.median(warm_rates)
    print(f"\n{'cache':>12} {'texts/s':>10}")
    print(f"{'cold':>12} {cold:>10.1f}")
    print(f"{'warm':>12} {warm:>10.1f}")
    print(f"warm/cold: {warm / cold:.1f}x")


if __name__ == "__main__":
    main()
