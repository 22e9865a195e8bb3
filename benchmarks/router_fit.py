"""Fit the offline router's memory gate (:class:`lemmata.agents.router.Gate`) on the
development tasks of ``benchmarks/agent_routing.py``, choose its regularisation by
leave-one-source-out, and write ``agents/router_weights.json``.

    python benchmarks/agent_routing.py \\
        --sources generated,fresh,fresh2,fresh3,fresh4,fresh5,fresh6,fresh7,fresh8,fresh9,fresh10,fresh11,fresh12 \\
        --no-e2e --no-overhead --json /tmp/dev.json
    python benchmarks/router_fit.py /tmp/dev.json [--write]

The rows of the benchmark's JSON carry each task's text, expected operation and the memory
evidence the agent measured (memory's best match, which does not depend on the router). The
gate is a multinomial logistic model (L2, fitted with scipy's L-BFGS) over
:meth:`Router.features`, trained on the tasks that reach it (no extractor outside memory
settles them). For each regularisation strength it is fitted on all sources but one and the
whole router (form, gate, readers) is run on the one left out, scored as the benchmark scores
it (route, arguments, declined); the strength with the best mean routing is fitted on all of
them and written with ``--write``. Rows of a sealed source (``agent_routing.SEALED``) are
refused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agent_routing as bench  # noqa: E402

SOURCES = bench.IN_SAMPLE  # the development sources (sealed ones are refused)
STRENGTHS = (0.03, 0.1, 0.3, 1.0, 3.0)


class CachedEmbedder:
    """The embedder with every text's vector kept: the tasks are routed many times."""

    def __init__(self, inner: Any, path: Path | None = None) -> None:
        self.inner = inner
        self.path = path
        self.cache: dict[str, np.ndarray] = {}
        if path is not None and path.is_file():
            saved = np.load(path, allow_pickle=False)
            self.cache = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))

    def save(self) -> None:
        if self.path is not None and self.cache:
            texts = list(self.cache)
            np.savez(
                self.path, texts=np.asarray(texts), vectors=np.stack([self.cache[t] for t in texts])
            )

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for t, vec in zip(missing, self.inner.embed(missing), strict=True):
                self.cache[t] = np.asarray(vec)
        return np.stack([self.cache[t] for t in texts])


def label(row: dict[str, Any]) -> str:
    want = row["expected"]
    if want in ("memory_recall", "memory_reason"):
        return "question"
    if want in ("memory_remember", "memory_forget"):
        return str(want)
    return "none"


def fit(x: np.ndarray, y: np.ndarray, k: int, strength: float) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression, L2 penalty ``strength`` (per row) on the weights."""
    from scipy.optimize import minimize

    n, d = x.shape
    onehot = np.eye(k)[y]

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[: k * d].reshape(k, d), theta[k * d :]
        z = x @ w.T + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        nll = -np.sum(onehot * np.log(p + 1e-12)) / n + strength * np.sum(w * w) / 2
        g = (p - onehot) / n
        gw = g.T @ x + strength * w
        return float(nll), np.concatenate([gw.ravel(), g.sum(axis=0)])

    res = minimize(loss, np.zeros(k * d + k), jac=True, method="L-BFGS-B")
    return res.x[: k * d].reshape(k, d), res.x[k * d :]


def make_gate(rows: list[dict[str, float]], labels: list[str], strength: float, meta: dict) -> Any:
    from lemmata.agents.router import GATE_CLASSES, Gate

    names = tuple(sorted(rows[0]))
    x = np.asarray([[r[k] for k in names] for r in rows], float)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    y = np.asarray([GATE_CLASSES.index(c) for c in labels])
    w, b = fit((x - mean) / scale, y, len(GATE_CLASSES), strength)
    return Gate(names, GATE_CLASSES, mean, scale, w, b, meta)


def score(router: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Route ``rows`` as the agent's plan node does, scored as the benchmark scores them."""
    scored = []
    for r in rows:
        route = router.route(r["text"], evidence=r["evidence"])
        right = {r["expected"], *r.get("accept", [])}
        ok = route.operation in right
        wrong = (
            bench.compare_args(route.operation, route.args, r["expected_args"])
            if ok and route.operation
            else []
        )
        scored.append(
            {
                **r,
                "got": route.operation,
                "routed_right": ok,
                "args_right": ok and bool(route.operation) and not wrong,
                "why": route.reason,
                "got_args": route.args,
            }
        )
    return {"summary": bench.summarise(scored), "rows": scored}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", type=Path, help="the benchmark's --json output on the dev sources")
    ap.add_argument("--write", action="store_true", help="write agents/router_weights.json")
    ap.add_argument("--show", action="store_true", help="list the left-out misroutes")
    ap.add_argument("--vectors", type=Path, default=None, help="keep the task vectors here (.npz)")
    args = ap.parse_args()
    data = json.loads(args.rows.read_text())
    rows = [r for r in data["rows"] if r["source"] in SOURCES]
    if any(r["source"] in bench.SEALED for r in data["rows"]):
        sys.exit("the rows include a sealed source: run the benchmark on the dev sources only")

    from lemmata.agents.router import GATE_CLASSES, Gate, Router
    from lemmata.embeddings import get_embedder
    from lemmata.operations import load_registry
    from lemmata.settings import Settings

    embedder = CachedEmbedder(
        get_embedder(Settings.load(config_file=None), cache=False), args.vectors
    )
    k = len(GATE_CLASSES)
    blank = Gate(
        ("evidence",),
        GATE_CLASSES,
        np.zeros(1),
        np.ones(1),
        np.zeros((k, 1)),
        np.array([1.0, 0, 0, 0]),
    )
    router = Router(load_registry(), embedder, weights=blank)
    feats: list[dict[str, float] | None] = []
    for r in rows:
        v = router._vector(r["text"])
        _, settled = router.formal(r["text"].strip(), router._similarities(v))
        feats.append(None if settled else router.features(r["text"].strip(), r["evidence"], v=v))
    embedder.save()
    print(f"{len(rows)} dev tasks; {sum(f is not None for f in feats)} reach the gate")

    def gate_on(sources: tuple[str, ...], strength: float) -> Gate:
        pick = [i for i, r in enumerate(rows) if r["source"] in sources and feats[i] is not None]
        meta = {"fitted_on": list(sources), "strength": strength, "tasks": len(pick)}
        return make_gate([feats[i] for i in pick], [label(rows[i]) for i in pick], strength, meta)  # type: ignore[misc]

    results: dict[float, dict[str, Any]] = {}
    for strength in STRENGTHS:
        results[strength] = {}
        for out in SOURCES:
            router.gate = gate_on(tuple(s for s in SOURCES if s != out), strength)
            results[strength][out] = score(router, [r for r in rows if r["source"] == out])
        line = "  ".join(
            f"{out} {results[strength][out]['summary']['routing']:.3f}/{results[strength][out]['summary']['arguments']:.3f}/{results[strength][out]['summary']['declined']:.3f}"
            for out in SOURCES
        )
        print(f"L2 {strength:<5} left out (route/args/declined): {line}")
    best = max(
        STRENGTHS, key=lambda s: np.mean([results[s][o]["summary"]["routing"] for o in SOURCES])
    )
    print(f"chosen L2 {best}")
    if args.show:
        for out in SOURCES:
            for r in results[best][out]["rows"]:
                if not r["routed_right"] or (r["expected"] and not r["args_right"]):
                    print(
                        f"- [{out}] {r['text'][:110]!r}: want {r['expected']} {r['expected_args']}, got {r['got']} {r['got_args']} ({r['why'][:70]})"
                    )
    router.gate = gate_on(SOURCES, best)
    router.gate.meta["left_out"] = {
        o: {k2: results[best][o]["summary"][k2] for k2 in ("routing", "arguments", "declined")}
        for o in SOURCES
    }
    inside = {o: score(router, [r for r in rows if r["source"] == o])["summary"] for o in SOURCES}
    print(
        "in-sample (fitted on all of them): "
        + "  ".join(
            f"{o} {s['routing']:.3f}/{s['arguments']:.3f}/{s['declined']:.3f}"
            for o, s in inside.items()
        )
    )
    if args.write:
        from lemmata.agents.router import WEIGHTS_FILE

        WEIGHTS_FILE.write_text(json.dumps(router.gate.to_dict(), indent=1) + "\n")
        print(f"written: {WEIGHTS_FILE}")


if __name__ == "__main__":
    main()
