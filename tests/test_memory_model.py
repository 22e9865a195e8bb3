"""The memory's LLM path through litellm, against the scripted OpenAI-compatible server on
127.0.0.1 (tests/scripted_server.py): a test device that replies from a script, not a model."""

from __future__ import annotations

import json

import pytest
from scripted_server import ScriptedOpenAIServer

from lemmata.llm import LiteLLMModel
from lemmata.memory import Memory, OfflineExtractor


@pytest.fixture(scope="module")
def embedder():
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


def _model(server: ScriptedOpenAIServer) -> LiteLLMModel:
    return LiteLLMModel("openai/scripted-model", api_base=server.base_url, backoff_s=0.01)


def _reply(obj: dict) -> dict:
    return {"content": json.dumps(obj)}


EPISODES = [
    {"content": "Hey Bob, how are you?", "speaker": "Alice", "timestamp": "2024-05-02T10:00"},
    {
        "content": "I adopted a cat named Miso yesterday.",
        "speaker": "Alice",
        "timestamp": "2024-05-02T10:01",
    },
    {"content": "I started a pottery class.", "speaker": "Bob", "timestamp": "2024-05-02T10:02"},
]


def test_one_batched_call_per_segment_with_exact_sources(tmp_path, embedder):
    knowledge = {
        "facts": [
            {
                "statement": "Alice adopted a cat named Miso on 1 May 2024.",
                "sources": [2],
                "tags": ["pet"],
                "entities": ["Alice", "Miso"],
                "when": "2024-05-01",
            },
            {"statement": "Bob takes a pottery class.", "sources": [3], "tags": ["hobby"]},
            {"statement": "An invented fact.", "sources": [7]},
        ]
    }
    with ScriptedOpenAIServer([_reply(knowledge)]) as srv:
        mem = Memory(tmp_path / "m", user="u", embedder=embedder, model=_model(srv))
        ids = mem.add_episodes(EPISODES)
        report = mem.consolidate()
        sent = srv.chat_requests()
    assert len(sent) == 1 and report.model_calls == 1
    prompt = sent[0]["messages"][-1]["content"]
    assert "2. (2024-05-02T10:01) Alice: I adopted a cat named Miso yesterday." in prompt
    assert report.facts_added == 2 and report.rejected == 1  # the fact citing episode 7
    facts = {f.statement: f for f in mem.facts()}
    miso = facts["Alice adopted a cat named Miso on 1 May 2024."]
    assert miso.sources == (ids[1],) and miso.origin.startswith("model:")
    assert "miso" in miso.entities
    top = mem.retrieve("What is Alice's cat called?", k=1).items[0]
    assert top.id == miso.id and top.provenance == (ids[1],)


def test_the_model_sees_the_image_a_turn_shares(tmp_path, embedder):
    """A turn whose words are only "Look!" carries its news in the image's caption: the model
    must be shown it, or the fact it holds can never be extracted."""
    knowledge = {"facts": [{"statement": "Alice painted a sunset over a lake.", "sources": [1]}]}
    shared = {
        "content": "Look what I made!",
        "speaker": "Alice",
        "timestamp": "2024-05-02T10:03",
        "meta": {"blip_caption": "a photo of a painting of a sunset over a lake"},
    }
    with ScriptedOpenAIServer([_reply(knowledge)]) as srv:
        mem = Memory(tmp_path / "m", user="u", embedder=embedder, model=_model(srv))
        mem.add_episodes([shared])
        mem.consolidate()
        prompt = srv.chat_requests()[0]["messages"][-1]["content"]
    line = next(x for x in prompt.splitlines() if x.startswith("1. "))
    assert "Look what I made!" in line
    assert "a photo of a painting of a sunset over a lake" in line


def test_a_retried_reply_is_counted_as_the_call_it_is(tmp_path, embedder):
    """A reply that does not validate is sent back with the error: two calls, and the report
    says two (it is what a user budgets by)."""
    knowledge = {"facts": [{"statement": "Bob takes a pottery class.", "sources": [3]}]}
    with ScriptedOpenAIServer([{"content": "no JSON here"}, _reply(knowledge)]) as srv:
        mem = Memory(tmp_path / "m", user="u", embedder=embedder, model=_model(srv))
        mem.add_episodes(EPISODES)
        report = mem.consolidate()
        sent = srv.chat_requests()
    assert len(sent) == 2 and report.model_calls == 2
    assert report.facts_added == 1 and mem.pending() == 0


def test_a_model_reply_that_never_validates_stores_nothing(tmp_path, embedder):
    with ScriptedOpenAIServer([{"content": "no JSON here"}, {"content": "still none"}]) as srv:
        mem = Memory(tmp_path / "m", user="u", embedder=embedder, model=_model(srv))
        mem.add_episodes(EPISODES)
        report = mem.consolidate()  # the segment stays pending, counted as failed
    assert report.failed == 1 and report.failed_episodes == 3 and report.episodes == 0
    assert report.errors[0].startswith("default: [model_output]")
    assert mem.facts() == [] and mem.pending() == 3
    # the episodes are intact: the offline extractor structures them later
    offline = Memory(tmp_path / "m", user="u", embedder=embedder, extractor=OfflineExtractor())
    assert offline.consolidate().facts_added >= 2 and offline.pending() == 0


def test_reason_answers_from_the_items_and_keeps_only_real_citations(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    fid = mem.add_fact("Alice's cat is named Miso.")
    mem.add_fact("Bob takes a pottery class on Thursdays.")
    answer = {"answer": "The cat is called Miso.", "cited": [f"[{fid}]", "fa_invented"]}
    with ScriptedOpenAIServer([_reply(answer)]) as srv:
        mem.model = _model(srv)
        out = mem.reason("What is the cat's name?", k=2)
        sent = srv.chat_requests()[0]["messages"][-1]["content"]
    assert out.answer == "The cat is called Miso." and out.cited == [fid]
    assert f"[{fid}] Alice's cat is named Miso." in sent and "Question: What is the cat" in sent
    assert out.model == "openai/scripted-model"
    mem.model = None
    offline = mem.reason("What is the cat's name?", k=2)
    assert offline.answer is None and offline.items[0].id == fid


def test_pairs_the_rules_leave_open_go_to_the_model(tmp_path, embedder):
    verdicts = [_reply({"relation": "contradiction"}), _reply({"relation": "duplicate"})]
    with ScriptedOpenAIServer(verdicts) as srv:
        mem = Memory(
            tmp_path / "m", user="u", embedder=embedder, model=_model(srv), ambiguous_at=0.75
        )
        red = mem.add_fact("Caroline drives a red car.", valid_from="2023-01-01")
        blue = mem.add_fact("Caroline drives a blue car.", valid_from="2024-01-01")
        hike = mem.add_fact("Caroline enjoys hiking in the mountains.")
        mem.add_fact("Caroline really enjoys hiking in the mountains every summer.")
        asked = [r["messages"][-1]["content"] for r in srv.chat_requests()]
    assert len(asked) == 2 and "Older fact (2023-01-01" in asked[0]
    closed = mem.get(red)
    assert closed is not None and closed.valid_to is not None and closed.superseded_by == blue
    assert mem.get(hike) is not None  # a duplicate is noted, never deleted
    ops = [(a.op, a.detail.get("decided_by")) for a in mem.audit()]
    assert ("near_duplicate", "model") in ops
    # offline, the same pair is counted as ambiguous and both facts stay current
    off = Memory(tmp_path / "o", user="u", embedder=embedder, ambiguous_at=0.75)
    off.add_fact("Caroline drives a red car.", valid_from="2023-01-01")
    off.add_fact("Caroline drives a blue car.", valid_from="2024-01-01")
    assert len(off.facts(current_only=True)) == 2


def test_a_session_can_wait_for_a_fuller_model_call(tmp_path, embedder, monkeypatch):
    """With batch_episodes=4, an exchange costs no call until the session has four pending
    episodes (or the newest waits batch_wait_s, or a flush), then one call takes them all."""
    import lemmata.memory.core as core
    from lemmata.errors import UsageError

    replies = [
        _reply({"facts": [{"statement": "Alice adopted a cat named Miso.", "sources": [2]}]}),
        _reply({"facts": [{"statement": "Bob bakes bread.", "sources": [1]}]}),
        _reply({"facts": [{"statement": "Alice sings.", "sources": [1]}]}),
    ]
    more = [
        {"content": "Nice! I bake bread on Sundays.", "speaker": "Bob"},
        {"content": "Yum.", "speaker": "Alice"},
    ]
    with ScriptedOpenAIServer(replies) as srv:
        mem = Memory(
            tmp_path / "m", user="u", embedder=embedder, model=_model(srv), batch_episodes=4
        )
        mem.add_episodes(EPISODES[:2])
        runs: list[bool] = []
        real_consolidate = mem.consolidate
        monkeypatch.setattr(
            mem, "consolidate", lambda **kw: runs.append(True) or real_consolidate(**kw)
        )
        assert mem.retrieve("What is Alice's cat called?").items == ()  # nothing structured yet
        assert runs == []  # a waiting session is not due: a fresh read does not try to structure it
        monkeypatch.undo()
        report = mem.consolidate()
        assert (report.waiting, report.waiting_episodes, report.model_calls) == (1, 2, 0)
        assert srv.chat_requests() == [] and mem.pending() == 2

        mem.add_episodes([EPISODES[2], more[0]])  # four pending: one call takes them all
        report = mem.consolidate()
        assert (report.episodes, report.model_calls, report.waiting) == (4, 1, 0)
        assert len(srv.chat_requests()) == 1 and mem.pending() == 0
        prompt = srv.chat_requests()[0]["messages"][-1]["content"]
        assert "4. (" in prompt and "bake bread" in prompt

        mem.add_episodes([more[1]])
        assert mem.consolidate().waiting == 1
        assert mem.consolidate(flush=True).model_calls == 1  # a flush does not wait
        mem.add_episodes([{"content": "I sing in a choir.", "speaker": "Alice"}])
        assert not mem._due()
        later = core._clock() + 301
        monkeypatch.setattr(core, "_clock", lambda: later)  # the newest has waited long enough
        assert mem._due()
        assert mem.consolidate().model_calls == 1
        assert len(srv.chat_requests()) == 3 and mem.pending() == 0
        assert mem.scoped(session="s2").batch_episodes == 4  # a scoped view batches alike

    with pytest.raises(UsageError, match="batch_episodes"):
        Memory(tmp_path / "m2", user="u", embedder=embedder, batch_episodes=0)
