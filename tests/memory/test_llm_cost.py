"""The LLM-cost benchmark's counting, on one short session against the scripted server."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lemmata.memory import Episode, Memory
from lemmata.settings import Settings

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "memory_llm_cost.py"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("memory_llm_cost", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_llm_cost"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = _load()


class HashEmbedder:
    """Deterministic vectors, so that no embedding model loads."""

    name = "test-hash"
    dim = 32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest(), np.uint8)[: self.dim] for t in texts
        ]
        out = np.asarray(rows, np.float32).reshape(len(texts), self.dim) - 127.5
        return out / np.linalg.norm(out, axis=1, keepdims=True)


WHEN = datetime(2023, 5, 8, 13, 56)
TURNS = [
    ("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool! My kids painted a sunset with me at the lake last weekend."),
    ("Caroline", "I'm keen on counseling; I want to help trans people find acceptance."),
    ("Melanie", "You'd be a great counselor. Running a charity race next month is my plan."),
]
SESSION = [
    Episode.model_validate(
        {"content": text, "speaker": who, "session": "session_1", "timestamp": WHEN}
    )
    for who, text in TURNS
]


@pytest.fixture()
def meter() -> Iterator[Any]:
    with bench.Meter() as m:
        yield m


def _memory(tmp_path: Path, meter: Any, name: str) -> Memory:
    return Memory(
        tmp_path / name,
        user="u",
        settings=Settings.load(config_file=None),
        embedder=HashEmbedder(),
        model=meter.model(),
    )


def test_session_calls_and_tokens_match_what_the_server_recorded(
    tmp_path: Path, meter: Any
) -> None:
    mem = _memory(tmp_path, meter, "a")
    before = len(meter.server.chat_requests())
    cost = bench.ingest_session(mem, meter, "s1", SESSION)
    recorded = meter.server.chat_requests()[before:]
    # a short session is one extraction call, and every call is counted
    assert cost.n_calls == len(recorded) == 1
    assert [c.kind for c in cost.calls] == ["extract"]
    assert mem.model is not None and mem.model.usage.calls == cost.n_calls  # litellm's side
    expected = sum(bench.prompt_tokens(r["messages"]) for r in recorded)
    assert cost.prompt_tokens == expected > 0
    assert cost.largest_prompt == expected
    assert cost.chars == sum(len(m["content"]) for r in recorded for m in r["messages"])
    # the scripted reply is valid and made of the session's sentences: the memory took it
    assert cost.completion_tokens > 0
    texts = [f.statement for f in mem.facts()]
    assert any("support group" in t for t in texts), texts

    q = bench.ask(mem, meter, "What did Caroline go to?")
    assert q.n_calls == 1 and q.calls[0].kind == "reason" and q.prompt_tokens > 0
    mem.close()


def test_a_retry_adds_exactly_one_call(tmp_path: Path, meter: Any) -> None:
    ok_mem, bad_mem = _memory(tmp_path, meter, "ok"), _memory(tmp_path, meter, "bad")
    ok = bench.ingest_session(ok_mem, meter, "s1", SESSION)
    bad = bench.measure_retry(bad_mem, meter, "s1", SESSION)
    assert bad.n_calls == ok.n_calls + 1
    assert bad.retries == 1 and [c.valid for c in bad.calls] == [False, True]
    # the retry resends the prompt with the invalid reply and the validation error
    assert bad.prompt_tokens > 2 * ok.prompt_tokens
    assert len(bad_mem.facts()) == len(ok_mem.facts()) > 0
    ok_mem.close()
    bad_mem.close()


def test_turns_pair_a_message_with_its_reply() -> None:
    turns = bench.exchanges(SESSION + SESSION[:1])
    assert [len(t) for t in turns] == [2, 2, 1]


def test_a_hosted_model_is_no_longer_charged_the_schema_twice(tmp_path: Path, meter: Any) -> None:
    mem = _memory(tmp_path, meter, "h")
    before = len(meter.server.chat_requests())
    bench.ingest_session(mem, meter, "s1", SESSION)
    first = meter.server.chat_requests()[before]["messages"]
    cost = bench.hosted_schema_cost(first)
    schema_alone = cost["hosted_twice"] - cost["local"]
    assert schema_alone > 200  # the extraction schema is a few hundred tokens
    # now: the schema once (as the response format) and a one-line instruction
    assert abs(cost["hosted_once"] - cost["local"]) < 0.1 * cost["local"]
    assert cost["hosted_twice"] - cost["hosted_once"] > 0.8 * schema_alone
    mem.close()


def test_batched_turns_make_fewer_calls_for_the_same_episodes(tmp_path: Path, meter: Any) -> None:
    one = _memory(tmp_path, meter, "one")
    by_turn = bench.ingest_by_turn(one, meter, "s1", SESSION)
    batched_mem = Memory(
        tmp_path / "batched",
        user="u",
        settings=Settings.load(config_file=None),
        embedder=HashEmbedder(),
        model=meter.model(),
        batch_episodes=8,
    )
    batched = bench.ingest_by_turn(batched_mem, meter, "s1", SESSION)
    assert sum(c.n_calls for c in by_turn) == len(by_turn) == 2  # one call per exchange
    assert [c.n_calls for c in batched] == [0, 1]  # one call, at the session's end
    assert batched_mem.pending() == 0 and len(batched_mem.facts()) > 0
    assert sum(c.prompt_tokens for c in batched) < sum(c.prompt_tokens for c in by_turn)
    one.close()
    batched_mem.close()
