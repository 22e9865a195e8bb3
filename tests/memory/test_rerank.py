"""The retrieval reranker: its features, its weights file and the checks on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lemmata.errors import ConfigError
from lemmata.memory.rerank import (
    FEATURES,
    Reranker,
    candidate_features,
    default_reranker,
    load_reranker,
)


def _row(session: str, dates: str | None = None, kind: str = "fact") -> dict[str, Any]:
    return {"session": session, "event_dates": dates, "kind": kind}


def _features(**kw: Any) -> np.ndarray:
    pool = ["a", "b", "c"]
    args: dict[str, Any] = {
        "named_speaker": {"a": True, "b": False},
        "list_question": True,
        "when_question": False,
    }
    args.update(kw)
    return candidate_features(
        pool,
        {"a": 0.3, "b": 0.2, "c": 0.1},
        {"a": _row("s1"), "b": _row("s1", '["2023-05-07"]'), "c": _row("s2")},
        {"a": {"dense": 1}, "b": {"bm25": 1, "dense": 5}, "c": {}},
        {"a": 0.8, "b": 0.5},
        {"a": ("e1",), "b": ("e1", "e2"), "c": ("e3",)},
        {"a": 10, "b": 20, "c": 5},
        **args,
    )


def test_features_say_what_each_candidate_is() -> None:
    x = _features()
    f = {name: x[:, j] for j, name in enumerate(FEATURES)}
    assert x.shape == (3, len(FEATURES))
    # who said it: the named speaker, someone else, nobody known
    assert list(f["speaker_named"]) == [1.0, 0.0, 0.0]
    assert list(f["speaker_other"]) == [0.0, 1.0, 0.0]
    assert list(f["list_x_speaker"]) == [1.0, 0.0, 0.0]
    # a channel that did not reach an item gives 0, rank 1 the most
    assert f["rank_dense"][0] > f["rank_dense"][1] > 0.0 == f["rank_dense"][2]
    assert f["rank_bm25"][1] == f["rank_dense"][0]
    # a and b share a session and a turn; c shares neither
    assert f["session_share"][0] == f["session_share"][1] > f["session_share"][2] == 0.0
    assert f["turn_share"][0] > 0.0 == f["turn_share"][2]
    # no similarity known: the largest gap
    assert f["similarity_gap"][0] == 0.0 > f["similarity_gap"][1] > f["similarity_gap"][2]
    assert list(f["dated_item"]) == [0.0, 1.0, 0.0]
    assert not f["when_x_dated"].any()
    when = _features(when_question=True, list_question=False)
    g = {name: when[:, j] for j, name in enumerate(FEATURES)}
    assert list(g["when_x_dated"]) == [0.0, 1.0, 0.0]
    assert not g["list_x_speaker"].any()


def test_a_reranker_orders_by_its_score_and_keeps_ties_in_order() -> None:
    r = Reranker(("speaker_other",), (0.0,), (1.0,), (2.0,), 0.0)
    x = _features()
    assert r.rank(["a", "b", "c"], x) == ["b", "a", "c"]
    flat = Reranker(("procedure",), (0.0,), (1.0,), (1.0,), 0.0)
    assert flat.rank(["a", "b", "c"], x) == ["a", "b", "c"]


def test_the_shipped_weights_load() -> None:
    r = default_reranker()
    assert set(r.features) <= set(FEATURES)
    assert r.pool >= 10
    assert Reranker.from_json(r.to_json()) == r


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"coef": [1.0, 2.0]}, "one mean, scale and coefficient per feature"),
        ({"scale": [0.0]}, "scales must be positive"),
        ({"features": ["colour"]}, "unknown feature"),
        ({"intercept": "high"}, "malformed"),
        ({"mean": [float("nan")]}, "finite"),
        ({"pool": 1}, "pool must be at least 2"),
    ],
)
def test_bad_weights_are_named(change: dict[str, Any], message: str) -> None:
    good = {"features": ["fused_rank"], "mean": [0.0], "scale": [1.0], "coef": [1.0]}
    good["intercept"] = 0.0
    with pytest.raises(ConfigError, match=message):
        Reranker.from_json({**good, **change})


def test_a_missing_or_broken_weights_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read reranker weights"):
        load_reranker(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([1, 2]))
    with pytest.raises(ConfigError, match="must be a JSON object"):
        load_reranker(bad)
    bad.write_text(json.dumps({"features": ["fused_rank"]}))
    with pytest.raises(ConfigError, match="fit_rerank.py"):
        load_reranker(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(default_reranker().to_json()))
    assert load_reranker(good) == default_reranker()
