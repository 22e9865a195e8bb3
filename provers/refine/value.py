"""The learned value model: which local repair to try first at a node.

A small MLP (torch, CPU, trained in a minute) scores an (node, action) pair from features of
the failure class that conditions the node, the goal (domain, head symbol, size, hypotheses,
shape flags), the depth, and the action (family, its words hashed, the tactic it answers).
It is trained on the search's own traces: an attempt on the path of a proof found is a
positive, one that ran but led nowhere a weak positive, a failure a negative. The search
mixes its score with the policy's prior (``SearchConfig.value_weight``).

The package ships weights for the default action set, trained on the validation split of
miniF2F-rocq (``default_scorer()``); ``lemmata prove-train TRACES --out MODEL`` trains one on
your own traces.

>>> x = featurize({"condition": "tactic_failed", "domain": "R", "head": "<=", "features": {},
...                "depth": 1, "goals_before": 1, "family": "close", "tactic": "nra",
...                "reacting_to": "lra", "prior": 0.8})
>>> len(x) == FEATURE_DIM
True
"""

from __future__ import annotations

import math
import random
import re
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.provers.refine.goal import DOMAINS
from lemmata.provers.refine.policy import FAMILIES, Action, NodeView
from lemmata.provers.refine.trace import ProblemTrace

if TYPE_CHECKING:
    import torch

__all__ = [
    "DEFAULT_MODEL",
    "FEATURE_DIM",
    "FEATURE_VERSION",
    "TrainReport",
    "ValueScorer",
    "default_scorer",
    "examples_from",
    "featurize",
    "load_scorer",
    "train",
]

FEATURE_VERSION = 1
DEFAULT_MODEL = Path(__file__).with_name("value_model.pt")

# The failure classes the features know, frozen with FEATURE_VERSION: a class added to the
# taxonomy later (the soundness verdicts, say) reads as "other" here instead of changing the
# feature width under the shipped weights.
_KINDS = [
    "unknown_identifier",
    "type_mismatch",
    "unsolved_goals",
    "tactic_failed",
    "syntax_error",
    "timeout",
    "uses_sorry",
    "bad_axiom",
    "statement_changed",
    "header_error",
    "structure",
    "name_clash",
    "not_a_product",
    "vacuous",
    "crash",
    "other",
]
_HEADS = ["forall", "->", "/\\", "\\/", "exists", "<->", "~", "=", "<=", "<", ">=", ">", "<>"]
_HEADS += ["False", "True", "other"]
_FAMILIES = [*FAMILIES, "draft", "repair"]
_NUMERIC = [
    "n_hyps",
    "n_vars",
    "size",
    "transcendental",
    "abs",
    "division",
    "power",
    "exists",
    "conj",
    "disj",
    "hyp_conj",
    "hyp_disj",
    "hyp_exists",
    "hyp_eq_var",
    "neq",
    "nonlinear",
    "numeric_only",
]
_TACTIC_BUCKETS = 64
_REACT_BUCKETS = 32
FEATURE_DIM = (
    len(_KINDS)
    + 1
    + len(DOMAINS)
    + len(_HEADS)
    + len(_NUMERIC)
    + 3
    + len(_FAMILIES)
    + _TACTIC_BUCKETS
    + _REACT_BUCKETS
    + 1
)
_WORD = re.compile(r"[A-Za-z_][\w']*")


def _one_hot(value: str | None, vocab: list[str] | tuple[str, ...]) -> list[float]:
    return [1.0 if value == v else 0.0 for v in vocab]


def _hashed(text: str | None, buckets: int) -> list[float]:
    out = [0.0] * buckets
    for word in _WORD.findall(text or ""):
        out[zlib.crc32(word.encode()) % buckets] = 1.0
    return out


def featurize(rec: dict[str, Any]) -> list[float]:
    """Features of one (node, action) pair from a trace-shaped record (see trace.py)."""
    feats = rec.get("features") or {}
    numeric = []
    for name in _NUMERIC:
        v = float(feats.get(name, 0.0))
        numeric.append(
            math.log1p(v) / 6 if name == "size" else min(v, 10.0) / (1 if v <= 1 else 10)
        )
    condition = rec.get("condition")
    kind = condition if condition is None or condition in _KINDS else "other"
    return [
        *_one_hot(kind, _KINDS),
        1.0 if condition is None else 0.0,
        *_one_hot(rec.get("domain"), DOMAINS),
        *_one_hot(rec.get("head"), _HEADS),
        *numeric,
        min(float(rec.get("depth") or 0), 10.0) / 10,
        min(float(rec.get("goals_before") or 1), 10.0) / 10,
        1.0 if rec.get("reacting_to") else 0.0,
        *_one_hot(rec.get("family"), _FAMILIES),
        *_hashed(rec.get("tactic"), _TACTIC_BUCKETS),
        *_hashed(rec.get("reacting_to"), _REACT_BUCKETS),
        float(rec.get("prior") or 0.5),
    ]


def _record_of(view: NodeView, action: Action, depth: int) -> dict[str, Any]:
    return {
        "condition": view.failure.kind.value if view.failure else None,
        "domain": view.goal.domain,
        "head": view.goal.head,
        "features": view.goal.features,
        "depth": depth,
        "goals_before": view.n_goals,
        "family": action.family,
        "tactic": action.tactic,
        "reacting_to": action.reacting_to,
        "prior": action.prior,
    }


_SKIP = {"check", "one-shot", "repair", "draft", "model-ask"}


def examples_from(traces: Iterable[ProblemTrace]) -> tuple[list[list[float]], list[float]]:
    """Features and soft labels from traces: on the proof's path 1.0, ran and led nowhere
    0.3, a duplicate 0.05, a failure 0.0. Whole-proof checks and repairs are not choices of
    the kind the model ranks, and are left out."""
    xs: list[list[float]] = []
    ys: list[float] = []
    for t in traces:
        path = t.on_path()
        for i, a in enumerate(t.attempts):
            if a.get("family") in _SKIP or a.get("status") in ("ask", "repair", "replay"):
                continue
            status = a.get("status")
            if i in path:
                y = 1.0
            elif status in ("open", "finished"):
                y = 0.3
            elif status == "duplicate":
                y = 0.05
            else:
                y = 0.0
            xs.append(featurize(a))
            ys.append(y)
    return xs, ys


def _net(dim: int) -> torch.nn.Module:
    import torch

    return torch.nn.Sequential(
        torch.nn.Linear(dim, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 1),
    )


@dataclass
class TrainReport:
    examples: int
    positives: int
    problems: int
    epochs: int
    final_loss: float
    out: Path | None

    def __str__(self) -> str:
        return (
            f"trained on {self.examples} attempts ({self.positives} on proofs) from "
            f"{self.problems} searches, {self.epochs} epochs, loss {self.final_loss:.4f}"
            + (f" -> {self.out}" if self.out else "")
        )


def train(
    traces: list[ProblemTrace],
    out: Path | None = None,
    *,
    epochs: int = 40,
    seed: int = 0,
    on_epoch: Callable[[int, float], None] | None = None,
) -> tuple[ValueScorer, TrainReport]:
    """Train the value model on ``traces``; save it to ``out`` when given."""
    import torch

    xs, ys = examples_from(traces)
    if not xs:
        raise ValueError(
            "the traces hold no attempts to learn from (were they written by a search?)"
        )
    torch.manual_seed(seed)
    random.seed(seed)
    torch.set_num_threads(min(2, torch.get_num_threads()))
    x = torch.tensor(xs, dtype=torch.float32)
    y = torch.tensor(ys, dtype=torch.float32).unsqueeze(1)
    net = _net(FEATURE_DIM)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3, weight_decay=1e-4)
    # Failures outnumber the rest many times over: weigh the classes to balance them.
    weight = torch.where(y > 0.5, (y <= 0.5).sum() / max(1, int((y > 0.5).sum())), 1.0)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    n = len(xs)
    loss_value = float("nan")
    for epoch in range(epochs):
        perm = torch.randperm(n)
        total = 0.0
        for start in range(0, n, 256):
            idx = perm[start : start + 256]
            opt.zero_grad()
            loss = (loss_fn(net(x[idx]), y[idx]) * weight[idx]).mean()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        loss_value = total / n
        if on_epoch:
            on_epoch(epoch, loss_value)
    net.eval()
    scorer = ValueScorer(net, name=f"value:{out.name if out else 'trained'}")
    report = TrainReport(
        n, int(sum(1 for v in ys if v > 0.5)), len(traces), epochs, loss_value, out
    )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        torch.save(
            {
                "version": FEATURE_VERSION,
                "dim": FEATURE_DIM,
                "state_dict": net.state_dict(),
                "examples": n,
                "problems": len(traces),
            },
            out,
        )
    return scorer, report


class ValueScorer:
    """A trained value model as the search's ``scorer``: ``(node, action, depth) -> (0, 1)``."""

    def __init__(self, net: torch.nn.Module, name: str = "value") -> None:
        self.net = net
        self.name = name

    def __call__(self, view: NodeView, action: Action, depth: int) -> float:
        import torch

        with torch.no_grad():
            x = torch.tensor([featurize(_record_of(view, action, depth))], dtype=torch.float32)
            return float(torch.sigmoid(self.net(x))[0, 0])


def load_scorer(path: Path) -> ValueScorer:
    """A scorer from weights saved by :func:`train`. A file of another feature version or a
    damaged one raises ``ValueError`` naming the file and what to do."""
    import torch

    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such value model") from None
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a damaged file
        raise ValueError(
            f"{path}: not a value model ({exc}); train one with lemmata prove-train"
        ) from None
    if (
        not isinstance(blob, dict)
        or blob.get("version") != FEATURE_VERSION
        or blob.get("dim") != FEATURE_DIM
    ):
        raise ValueError(
            f"{path}: value model of another feature version; retrain it with lemmata prove-train"
        )
    net = _net(FEATURE_DIM)
    net.load_state_dict(blob["state_dict"])
    net.eval()
    return ValueScorer(net, name=f"value:{path.name}")


def default_scorer() -> ValueScorer:
    """The shipped model, trained on miniF2F-rocq's validation split."""
    return load_scorer(DEFAULT_MODEL)
