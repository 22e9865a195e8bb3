"""A learned reranker over the fused candidates of :func:`~lemmata.memory.retrieve.retrieve`.

Reciprocal-rank fusion adds the channels' ranks with one weight each, whatever the question.
The reranker reads, for each of the best ``pool`` fused candidates, what the channels and the
question's form say about it (each channel's rank, the query's similarity, whether the named
speaker said it, whether the question asks for a list or a date, how many other candidates
come from its session and its turns) and orders the pool by a logistic model of "this item
holds an evidence turn". The model is a few dozen numbers: they ship as JSON
(``memory/rerank_weights.json``) and ``scripts/fit_rerank.py`` refits them from LoCoMo
conversations, leaving one out at a time to report what the fit gives on unseen ones.

>>> r = Reranker(("fused_rank",), mean=(0.5,), scale=(0.5,), coef=(2.0,), intercept=-1.0)
>>> [round(float(s), 3) for s in r.score(np.array([[1.0], [0.0]]))]
[1.0, -3.0]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lemmata.errors import ConfigError

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "CHANNELS",
    "FEATURES",
    "Reranker",
    "candidate_features",
    "default_reranker",
    "load_reranker",
]

# the channels whose rank of a candidate is a feature (absent: 0)
CHANNELS = (
    "dense",
    "bm25",
    "terms",
    "graph",
    "adjacent",
    "recency",
    "dated",
    "kinds",
    "spread",
)
# ranks are read as 10 / (10 + rank): 1 near the top, falling slowly (a rank of 50 is 0.17)
RANK_SCALE = 10.0
# the candidates whose sessions and turns are counted for the shares
SHARE_TOP = 20

FEATURES: tuple[str, ...] = (
    "fused_rank",
    "fused_rel",
    *(f"rank_{c}" for c in CHANNELS),
    "similarity",
    "similarity_gap",
    "speaker_named",
    "speaker_other",
    "list_question",
    "when_question",
    "list_x_speaker",
    "list_x_fused_rank",
    "list_x_dense",
    "list_x_bm25",
    "list_x_session_share",
    "session_share",
    "turn_share",
    "sources",
    "tokens",
    "dated_item",
    "when_x_dated",
    "procedure",
)


def _rank(ranks: Mapping[str, int], channel: str) -> float:
    r = ranks.get(channel)
    return 0.0 if r is None else RANK_SCALE / (RANK_SCALE + r)


def candidate_features(
    pool: Sequence[str],
    fused: Mapping[str, float],
    rows: Mapping[str, sqlite3.Row | Mapping[str, Any]],
    channel_ranks: Mapping[str, Mapping[str, int]],
    similarity: Mapping[str, float],
    sources: Mapping[str, Sequence[str]],
    tokens: Mapping[str, int],
    *,
    named_speaker: Mapping[str, bool | None],
    list_question: bool,
    when_question: bool,
) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate of ``pool`` (in fused order).

    ``named_speaker``: per candidate, True if the one speaker the query names said it, False if
    someone else did, None when the query names no single speaker (or nobody said it).
    """
    n = len(pool)
    x = np.zeros((n, len(FEATURES)), np.float64)
    if n == 0:
        return x
    col = {f: j for j, f in enumerate(FEATURES)}
    top = max(fused[i] for i in pool) or 1.0
    sims = [similarity.get(i) for i in pool]
    best_sim = max((s for s in sims if s is not None), default=0.0)
    head = pool[:SHARE_TOP]
    sessions: dict[Any, int] = {}
    turns: dict[str, int] = {}
    for i in head:
        sessions[rows[i]["session"]] = sessions.get(rows[i]["session"], 0) + 1
        for e in set(sources[i]):
            turns[e] = turns.get(e, 0) + 1
    lq, wq = float(list_question), float(when_question)
    for r, i in enumerate(pool):
        row = rows[i]
        ranks = channel_ranks.get(i, {})
        f = x[r]
        f[col["fused_rank"]] = 1.0 / (1.0 + r)
        f[col["fused_rel"]] = fused[i] / top
        for c in CHANNELS:
            f[col[f"rank_{c}"]] = _rank(ranks, c)
        s = sims[r]
        f[col["similarity"]] = 0.0 if s is None else s
        f[col["similarity_gap"]] = -1.0 if s is None else s - best_sim
        said = named_speaker.get(i)
        f[col["speaker_named"]] = float(said is True)
        f[col["speaker_other"]] = float(said is False)
        f[col["list_question"]] = lq
        f[col["when_question"]] = wq
        f[col["list_x_speaker"]] = lq * float(said is True)
        f[col["list_x_fused_rank"]] = lq / (1.0 + r)
        f[col["list_x_dense"]] = lq * f[col["rank_dense"]]
        f[col["list_x_bm25"]] = lq * f[col["rank_bm25"]]
        # others from the same session / turns among the best candidates (itself not counted)
        own = 1 if r < SHARE_TOP else 0
        share = (sessions.get(row["session"], 0) - own) / len(head)
        f[col["session_share"]] = share
        f[col["list_x_session_share"]] = lq * share
        src = set(sources[i])
        f[col["turn_share"]] = max((turns.get(e, 0) - own for e in src), default=0) / len(head)
        f[col["sources"]] = math.log1p(len(src))
        f[col["tokens"]] = math.log1p(tokens[i])
        dated = row["event_dates"] not in (None, "[]")
        f[col["dated_item"]] = float(dated)
        f[col["when_x_dated"]] = wq * float(dated)
        f[col["procedure"]] = float(row["kind"] == "procedure")
    return x


@dataclass(frozen=True)
class Reranker:
    """A logistic model over standardised :data:`FEATURES`: ``score = coef . (x - mean) /
    scale + intercept``. ``features`` names the columns it was fitted on (in order)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    # how many of the best fused candidates it reorders
    pool: int = 40

    def __post_init__(self) -> None:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n) or n == 0:
            raise ConfigError(
                "a reranker needs one mean, scale and coefficient per feature "
                f"({n} features, {len(self.mean)}/{len(self.scale)}/{len(self.coef)} given)"
            )
        if any(s <= 0 or not math.isfinite(s) for s in self.scale):
            raise ConfigError("a reranker's feature scales must be positive and finite")
        if not all(math.isfinite(v) for v in (*self.mean, *self.coef, self.intercept)):
            raise ConfigError("a reranker's weights must be finite numbers")
        if self.pool < 2:
            raise ConfigError(f"a reranker's pool must be at least 2, not {self.pool}")

    def score(self, x: np.ndarray) -> np.ndarray:
        """The model's logit for each row of ``x`` (columns as :attr:`features`)."""
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.asarray(z @ np.asarray(self.coef) + self.intercept, np.float64)

    def rank(self, ids: Sequence[str], x: np.ndarray) -> list[str]:
        """``ids`` (rows of the :data:`FEATURES` matrix ``x``) best first; ties keep their
        order."""
        scores = self.score(self.select(x))
        return [ids[r] for r in sorted(range(len(ids)), key=lambda r: (-scores[r], r))]

    def select(self, x: np.ndarray) -> np.ndarray:
        """The columns of a :data:`FEATURES` matrix that this model reads, in its order."""
        return x[:, [FEATURES.index(f) for f in self.features]]

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "pool": self.pool,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], origin: str = "the reranker's weights") -> Reranker:
        """Read :meth:`to_json`'s form; a malformed one raises :class:`ConfigError` naming
        ``origin`` and what is wrong."""
        try:
            features = tuple(str(f) for f in data["features"])
            out = cls(
                features=features,
                mean=tuple(float(v) for v in data["mean"]),
                scale=tuple(float(v) for v in data["scale"]),
                coef=tuple(float(v) for v in data["coef"]),
                intercept=float(data["intercept"]),
                pool=int(data.get("pool", 40)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"{origin} are malformed ({type(exc).__name__}: {exc}); refit them with "
                "scripts/fit_rerank.py"
            ) from exc
        unknown = set(features) - set(FEATURES)
        if unknown:
            raise ConfigError(
                f"{origin} name unknown feature(s) {sorted(unknown)}; the features are "
                f"{list(FEATURES)}"
            )
        return out


def load_reranker(path: str | Path) -> Reranker:
    """A reranker from a JSON file written by ``scripts/fit_rerank.py``."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read reranker weights {p}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"reranker weights {p} must be a JSON object")
    return Reranker.from_json(data, origin=f"reranker weights {p}")


@lru_cache(maxsize=1)
def default_reranker() -> Reranker:
    """The shipped weights (``memory/rerank_weights.json``), read once."""
    text = resources.files("lemmata.memory").joinpath("rerank_weights.json").read_text()
    return Reranker.from_json(json.loads(text), origin="the shipped reranker weights")
