"""Evidence recall of PlugMem retrieval on LoCoMo, against dense and BM25 over raw turns.

    python benchmarks/locomo_retrieval.py [--data ../shared/data/locomo] [--k 5 10 20] [--ablate]
        [--diagnose] [--no-tune] [--json]

Each conversation goes into a fresh memory (offline extractor, bundled MiniLM, embedded
chromadb). For every question outside category 5, the top-k items are retrieved and scored by
evidence recall@k: the share of the question's ``evidence`` turns among the provenance of the
top-k items. The baselines rank the raw turns ("Speaker: text") of the same conversation:
dense (the same MiniLM, exact cosine) and BM25 (SQLite FTS5, the same query rule). Context
tokens are counted by one rule for all three (``lemmata.memory.text.count_tokens``).

Printed: recall@k, context tokens per question at each k, retrieval latency p50/p95 (ours:
the whole hybrid retrieval including the query embedding; the embedding is cached per query
for neither side), ingestion throughput (turns stored and structured per second, embedding
included), and provenance ids per item. ``--ablate`` also retrieves with each channel (and the
speaker preference) switched off in turn, on the same memories, and prints recall@10 without
each next to the whole. ``--diagnose`` says, by category, where each evidence turn is: in
the top 10, ranked 11 to 30, extracted but ranked lower, or in no stored item at all (an
extraction miss rather than a ranking one). ``--json`` prints one JSON object instead.

Settings chosen with one conversation left out (on by default; ``--no-tune`` skips it): the
retriever's settings in :data:`VARIANTS` (channel weights, the fusion constant, the seeds,
the speaker preference and its addition for list questions, the person channel's weight,
its gate by the question's form and its search per person for two people joined by 'and',
the entity walk's weight and constants, the type-aware expansion's weight, source (WordNet's
types, the concepts' embeddings, or both) and constants) are varied one at a time around the shipped defaults;
for each conversation left out, the variants that beat the defaults on the other
conversations are combined, and the best of defaults, single changes and the combination
*on the other conversations* is scored on the one left out. Printed: recall@5/10/20 and recall@10 by
category, in-sample (the same selection made on all conversations, scored on all) beside
left-one-out (each conversation scored with the setting chosen without it), each with the
graph channels (``graph`` and ``spread``) on and off, and the setting chosen each time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from lemmata.embeddings import Embedder
from lemmata.memory import Memory
from lemmata.memory.graph import ENTITY_KINDS
from lemmata.memory.ingest import Conversation, Question, read_locomo
from lemmata.memory.retrieve import DEFAULT_WEIGHTS, RetrievalConfig
from lemmata.memory.text import count_tokens, fts_query
from lemmata.settings import Settings

NAMED_KINDS = tuple(k for k in ENTITY_KINDS if k != "concept")

# the development split, beside the repository on the team's machines
DEV_SPLIT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo"


def recall(evidence: tuple[str, ...], provenance: list[str]) -> float:
    got = set(provenance)
    return sum(e in got for e in evidence) / len(evidence)


PLACES = ("top 10", "ranks 11-30", "extracted, lower", "never extracted")


def place(evidence: str, ranks: dict[str, int], extracted: set[str]) -> str:
    """Where one evidence turn is (see ``--diagnose``): ``ranks`` maps each episode to the
    rank of the first retrieved item it is a source of (ranks up to 30)."""
    rank = ranks.get(evidence)
    if rank is not None:
        return PLACES[0] if rank <= 10 else PLACES[1]
    return PLACES[2] if evidence in extracted else PLACES[3]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


class Baselines:
    """Dense and BM25 top-k over a conversation's raw turns."""

    def __init__(self, conv: Conversation, embedder: Embedder) -> None:
        self.ids = [e.id or "" for e in conv.episodes]
        self.texts = [f"{e.speaker}: {e.content}" for e in conv.episodes]
        self.embedder = embedder
        self.vectors = embedder.embed(self.texts)
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
        self.db.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", enumerate(self.texts))

    def dense(self, query: str, k: int) -> list[int]:
        q = self.embedder.embed([query])[0]
        return list(np.argsort(-(self.vectors @ q))[:k])

    def bm25(self, query: str, k: int) -> list[int]:
        match = fts_query(query)
        if not match:
            return []
        rows = self.db.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (match, k)
        ).fetchall()
        return [r[0] for r in rows]


# The changes to the shipped defaults that are tried, one at a time (see the module
# docstring): channel weights by channel name, the rest RetrievalConfig fields. The walk's
# constants are tried with the walk switched on (it is off by default).
WALK = 0.5
VARIANTS: list[dict[str, Any]] = [
    {"spread": 0.25},
    {"spread": WALK},
    {"spread": 1.0},
    {"spread": WALK, "spread_max_degree": 20},
    {"spread": WALK, "spread_max_degree": 80},
    {"spread": WALK, "spread_damping": 0.7},
    {"spread": WALK, "spread_kinds": NAMED_KINDS},
    {"graph": 0.0},
    {"graph": 0.6},
    {"dense": 1.5},
    {"bm25": 1.5},
    {"terms": 0.0},
    {"adjacent": 0.0},
    {"rrf_k": 60},
    {"seeds": 16},
    {"speaker_boost": 0.0},
    {"list_speaker_boost": 0.3},
    {"list_speaker_boost": 0.6},
    # the kinds channel is off by default (its gain was within noise); tried switched on,
    # with the embeddings (its default source), WordNet's types, and both fused
    {"kinds": 0.25},
    {"kinds": 0.5},
    {"kinds": 1.0},
    {"kinds": 0.5, "kinds_source": "wordnet"},
    {"kinds": 0.5, "kinds_source": "both"},
    {"kinds": 0.25, "kinds_source": "both"},
    {"kinds": 0.5, "kinds_subject": False},
    {"kinds": 0.5, "kinds_min_similarity": 0.45},
    # the person channel (what the one named person said, nearest the question's focus), on
    # by default for the questions with no one best turn (an aggregate question, or a short
    # focus) and with one search per person for "X and Y both"; tried off, at other weights,
    # for every question, without pairs, deeper, and on "when" questions too
    {"person": 0.0},
    {"person": 0.4},
    {"person": 1.0},
    {"person_by_form": False},
    {"person_max_focus": 3},
    {"person_pairs": False},
    {"person_depth": 120},
    {"person_when": True},
]
GRAPH_CHANNELS = ("graph", "spread")


def configure(changes: dict[str, Any]) -> RetrievalConfig:
    """The shipped defaults with ``changes`` (channel weights and RetrievalConfig fields)."""
    weights = {**DEFAULT_WEIGHTS, **{k: v for k, v in changes.items() if k in DEFAULT_WEIGHTS}}
    rest = {k: v for k, v in changes.items() if k not in DEFAULT_WEIGHTS}
    return RetrievalConfig(weights=weights, **rest)


def key(changes: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(changes.items())) or "defaults"


class Tuner:
    """Recall of a setting on each conversation's questions, computed once per setting."""

    def __init__(self, convs: list[tuple[str, Memory, list[Question], np.ndarray]], ks: list[int]):
        self.convs = convs
        self.ks = ks
        self.cache: dict[str, list[list[tuple[int, dict[int, float]]]]] = {}

    def scores(self, changes: dict[str, Any]) -> list[list[tuple[int, dict[int, float]]]]:
        """Per conversation, per question: (category, {k: recall@k})."""
        name = key(changes)
        if name not in self.cache:
            t0 = time.perf_counter()
            cfg = configure(changes)
            out = []
            for _, mem, questions, vectors in self.convs:
                mem.retrieval = cfg
                rows = []
                for q, v in zip(questions, vectors, strict=True):
                    items = mem.retrieve(q.question, k=max(self.ks), fresh=False, vector=v).items
                    rows.append(
                        (
                            q.category,
                            {
                                k: recall(q.evidence, [e for i in items[:k] for e in i.provenance])
                                for k in self.ks
                            },
                        )
                    )
                out.append(rows)
            self.cache[name] = out
            print(
                f"  {name}: recall@10 "
                + " ".join(
                    f"{statistics.fmean(r[10] for _, r in rows):.3f}" for rows in out if rows
                )
                + f" ({time.perf_counter() - t0:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        return self.cache[name]

    def mean(self, changes: dict[str, Any], convs: list[int], k: int = 10) -> float:
        per = self.scores(changes)
        vals = [r[k] for c in convs for _, r in per[c]]
        return float(statistics.fmean(vals)) if vals else 0.0

    def choose(self, train: list[int]) -> dict[str, Any]:
        """The setting with the best recall@10 on the ``train`` conversations: the defaults,
        each variant, or the variants that beat the defaults, combined (the better one's
        value where two set the same knob)."""
        base = self.mean({}, train)
        best, best_score = {}, base
        better: list[tuple[float, dict[str, Any]]] = []
        for variant in VARIANTS:
            score = self.mean(variant, train)
            if score > best_score:
                best, best_score = variant, score
            if score > base:
                better.append((score, variant))
        if len(better) > 1:
            combined: dict[str, Any] = {}
            for _, variant in sorted(better, key=lambda sv: sv[0]):
                combined.update(variant)
            if self.mean(combined, train) > best_score:
                best = combined
        return best


def graph_off(changes: dict[str, Any]) -> dict[str, Any]:
    return {**changes, **{c: 0.0 for c in GRAPH_CHANNELS}}


def tune(tuner: Tuner, names: list[str]) -> dict[str, Any]:
    """In-sample and left-one-out figures, with the graph channels on and off."""
    n = len(tuner.convs)
    everything = list(range(n))
    chosen_all = tuner.choose(everything)
    folds = [tuner.choose([c for c in everything if c != left]) for left in everything]

    def summary(rows: list[tuple[int, dict[int, float]]]) -> dict[str, Any]:
        by_cat: dict[int, list[float]] = {}
        for cat, r in rows:
            by_cat.setdefault(cat, []).append(r[10])
        return {
            **{f"recall@{k}": round(statistics.fmean(r[k] for _, r in rows), 4) for k in tuner.ks},
            "recall@10_by_category": {
                str(c): round(statistics.fmean(v), 4) for c, v in sorted(by_cat.items())
            },
        }

    out: dict[str, Any] = {}
    for label, transform in (("graph_on", lambda c: c), ("graph_off", graph_off)):
        inside = [row for conv in tuner.scores(transform(chosen_all)) for row in conv]
        left_out = [
            row for left in everything for row in tuner.scores(transform(folds[left]))[left]
        ]
        out[label] = {"in_sample": summary(inside), "left_one_out": summary(left_out)}
    out["chosen_on_all"] = key(chosen_all)
    out["chosen_without"] = {names[left]: key(folds[left]) for left in everything}
    out["settings_tried"] = len(tuner.cache)
    return out


def print_tuning(tuned: dict[str, Any], ks: list[int]) -> None:
    cats = sorted(
        {
            c
            for part in tuned.values()
            if isinstance(part, dict) and "in_sample" in part
            for half in part.values()
            for c in half["recall@10_by_category"]
        }
    )
    print(
        f"\nsettings chosen with one conversation left out ({tuned['settings_tried']} tried); "
        "recall@10 by category in the last columns"
    )
    print(
        f"{'':26}"
        + "".join(f"{'recall@' + str(k):>11}" for k in ks)
        + "".join(f"{'cat ' + c:>9}" for c in cats)
    )
    for label in ("graph_on", "graph_off"):
        for half in ("in_sample", "left_one_out"):
            r = tuned[label][half]
            print(
                f"{half.replace('_', '-') + ', ' + label.replace('_', ' '):26}"
                + "".join(f"{r[f'recall@{k}']:>11.3f}" for k in ks)
                + "".join(f"{r['recall@10_by_category'].get(c, 0.0):>9.3f}" for c in cats)
            )
    print(f"chosen on all conversations: {tuned['chosen_on_all']}")
    for name, chosen in tuned["chosen_without"].items():
        print(f"chosen without {name}: {chosen}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"folder of LoCoMo JSON files (default: {DEV_SPLIT}, where it exists)",
    )
    ap.add_argument("--k", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument(
        "--ablate", action="store_true", help="recall@10 with each channel switched off in turn"
    )
    ap.add_argument(
        "--diagnose",
        action="store_true",
        help="where each evidence turn is: top 10, ranks 11-30, lower, never extracted",
    )
    ap.add_argument(
        "--no-tune",
        dest="tune",
        action="store_false",
        help="skip choosing the settings with one conversation left out",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if args.data is None:
        if not DEV_SPLIT.is_dir():
            sys.exit(f"give --data DIR: a folder of LoCoMo JSON files ({DEV_SPLIT} is not here)")
        args.data = DEV_SPLIT
    files = sorted(args.data.glob("*.json"))
    if not files:
        sys.exit(f"no .json files in {args.data}")
    ks = sorted(set(args.k))
    kmax = max(ks)
    settings = Settings.load(config_file=None)

    ours: dict[int, list[float]] = {k: [] for k in ks}
    ours_tokens: dict[int, list[int]] = {k: [] for k in ks}
    base: dict[str, dict[int, list[float]]] = {
        n: {k: [] for k in ks} for n in ("dense_turns", "bm25_turns")
    }
    base_tokens: dict[str, dict[int, list[int]]] = {n: {k: [] for k in ks} for n in base}
    base_ms: dict[str, list[float]] = {n: [] for n in base}
    latency: list[float] = []
    prov_per_item: list[int] = []
    turns = 0
    ingest_s = 0.0
    by_category: dict[int, list[float]] = {}
    shared_embedder = None
    ablations: dict[str, RetrievalConfig] = {}
    if args.ablate:
        ablations = {
            f"-{name}": RetrievalConfig(weights={**DEFAULT_WEIGHTS, name: 0.0})
            for name in DEFAULT_WEIGHTS
        }
        ablations["-speaker"] = RetrievalConfig(speaker_boost=0.0)
    ablated: dict[str, list[float]] = {name: [] for name in ablations}
    places: dict[int, dict[str, int]] = {}

    kept: list[tuple[str, Memory, list[Question], np.ndarray]] = []
    stack = contextlib.ExitStack()
    for path in files:
        for conv in read_locomo(path):
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            if True:  # one memory per conversation, kept open for the tuning
                mem = Memory(tmp, user=conv.sample_id, settings=settings, embedder=shared_embedder)
                shared_embedder = mem.embedder
                shared_embedder.embed(["warm up"])  # load the weights outside the timings
                t0 = time.perf_counter()
                mem.add_episodes(conv.episodes)
                report = mem.consolidate()
                ingest_s += time.perf_counter() - t0
                turns += len(conv.episodes)
                base_sys = Baselines(conv, shared_embedder)
                questions = [q for q in conv.questions if q.category != 5 and q.evidence]
                if not args.json:
                    print(
                        f"{path.name} ({conv.sample_id}): {len(conv.episodes)} turns -> "
                        f"{report.facts_added} facts, {len(questions)} questions",
                        file=sys.stderr,
                    )
                for q in questions:
                    res = mem.retrieve(q.question, k=kmax, fresh=False)
                    latency.append(res.elapsed_ms)
                    for k in ks:
                        top = res.items[:k]
                        prov = [e for item in top for e in item.provenance]
                        ours[k].append(recall(q.evidence, prov))
                        ours_tokens[k].append(sum(item.tokens for item in top))
                    by_category.setdefault(q.category, []).append(
                        recall(q.evidence, [e for it in res.items[:10] for e in it.provenance])
                    )
                    prov_per_item += [len(item.provenance) for item in res.items[:10]]
                    if args.diagnose:
                        ranks: dict[str, int] = {}
                        deep = mem.retrieve(q.question, k=30, fresh=False).items
                        for rank, item in enumerate(deep, 1):
                            for e in item.provenance:
                                ranks.setdefault(e, rank)
                        extracted = {
                            e
                            for eps in mem.log.items_of_episodes(
                                mem.namespace, list(q.evidence)
                            ).values()
                            for e in eps
                        }
                        counts = places.setdefault(q.category, dict.fromkeys(PLACES, 0))
                        for e in q.evidence:
                            counts[place(e, ranks, extracted)] += 1
                    config = mem.retrieval
                    for name, cfg in ablations.items():
                        mem.retrieval = cfg
                        top = mem.retrieve(q.question, k=10, fresh=False).items
                        ablated[name].append(
                            recall(q.evidence, [e for i in top for e in i.provenance])
                        )
                    mem.retrieval = config
                    for name, fn in (
                        ("dense_turns", base_sys.dense),
                        ("bm25_turns", base_sys.bm25),
                    ):
                        t1 = time.perf_counter()
                        idx = fn(q.question, kmax)
                        base_ms[name].append((time.perf_counter() - t1) * 1000)
                        for k in ks:
                            top_i = idx[:k]
                            base[name][k].append(
                                recall(q.evidence, [base_sys.ids[i] for i in top_i])
                            )
                            base_tokens[name][k].append(
                                sum(count_tokens(base_sys.texts[i]) for i in top_i)
                            )
                kept.append(
                    (
                        conv.sample_id,
                        mem,
                        questions,
                        shared_embedder.embed([q.question for q in questions]),
                    )
                )

    tuned: dict[str, Any] | None = None
    if args.tune:
        if not args.json:
            print(
                f"tuning: {len(VARIANTS) + 1} settings, each on every conversation...",
                file=sys.stderr,
            )
        tuned = tune(Tuner(kept, ks), [name for name, *_ in kept])
    for _, mem, _, _ in kept:
        mem.close()
    stack.close()

    def mean(xs: list[float] | list[int]) -> float:
        return round(float(statistics.fmean(xs)), 4) if xs else 0.0

    out: dict = {f"recall@{k}": mean(ours[k]) for k in ks}
    out["context_tokens_mean"] = mean(ours_tokens[10 if 10 in ks else kmax])
    out["context_tokens_by_k"] = {str(k): mean(ours_tokens[k]) for k in ks}
    out["retrieve_ms_p50"] = round(pct(latency, 50), 2)
    out["retrieve_ms_p95"] = round(pct(latency, 95), 2)
    out["ingest_turns_per_s"] = round(turns / ingest_s, 1) if ingest_s else 0.0
    out["provenance_per_item_mean"] = mean(prov_per_item)
    out["questions"] = len(latency)
    out["recall@10_by_category"] = {str(c): mean(v) for c, v in sorted(by_category.items())}
    if places:
        out["evidence_places"] = {
            str(c): {p: round(n / max(1, sum(v.values())), 4) for p, n in v.items()}
            | {"turns": sum(v.values())}
            for c, v in sorted(places.items())
        }
    if ablations:
        out["ablations_recall@10"] = {name: mean(v) for name, v in ablated.items()}
    if tuned is not None:
        out["tuning"] = tuned
    out["baselines"] = {
        name: {
            **{f"recall@{k}": mean(base[name][k]) for k in ks},
            "context_tokens_mean": mean(base_tokens[name][10 if 10 in ks else kmax]),
            "context_tokens_by_k": {str(k): mean(base_tokens[name][k]) for k in ks},
            "retrieve_ms_p50": round(pct(base_ms[name], 50), 2),
            "retrieve_ms_p95": round(pct(base_ms[name], 95), 2),
        }
        for name in base
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"\nLoCoMo ({', '.join(f.name for f in files)}), {out['questions']} questions (category 5 left out)"
    )
    head = (
        f"{'':14}"
        + "".join(f"{'recall@' + str(k):>11}" for k in ks)
        + f"{'tokens@10':>11}{'p50 ms':>9}{'p95 ms':>9}"
    )
    print(head)
    rows = [("plugmem", out)] + [(n, out["baselines"][n]) for n in base]
    for name, r in rows:
        print(
            f"{name:14}"
            + "".join(f"{r[f'recall@{k}']:>11.3f}" for k in ks)
            + f"{r['context_tokens_mean']:>11.1f}{r['retrieve_ms_p50']:>9.1f}{r['retrieve_ms_p95']:>9.1f}"
        )
    print(f"ingestion: {out['ingest_turns_per_s']} turns/s (stored, structured, embedded, indexed)")
    print(f"provenance ids per item: {out['provenance_per_item_mean']}")
    print(
        "recall@10 by category: "
        + ", ".join(f"{c}: {v}" for c, v in out["recall@10_by_category"].items())
    )
    if ablations:
        whole = mean([r for rs in by_category.values() for r in rs])  # recall@10, whatever --k
        print(
            f"recall@10 without each part (whole {whole:.3f}): "
            + ", ".join(
                f"{n} {v:.3f} ({v - whole:+.3f})" for n, v in out["ablations_recall@10"].items()
            )
        )
    if places:
        print("\nwhere the evidence turns are, by category (share of the category's turns)")
        print(f"{'':9}" + "".join(f"{p:>18}" for p in PLACES) + f"{'turns':>8}")
        for c, v in out["evidence_places"].items():
            print(
                f"{'cat ' + c:9}" + "".join(f"{v[p]:>18.3f}" for p in PLACES) + f"{v['turns']:>8}"
            )
    if tuned is not None:
        print_tuning(tuned, ks)
    for k in ks:
        best = max(out["baselines"][n][f"recall@{k}"] for n in base)
        print(
            f"recall@{k}: plugmem {out[f'recall@{k}']:.3f} vs best baseline {best:.3f} ({out[f'recall@{k}'] - best:+.3f})"
        )


if __name__ == "__main__":
    main()
