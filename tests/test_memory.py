"""PlugMem memory: real SQLite, real embedded chromadb, the bundled MiniLM, offline extractor."""

from __future__ import annotations

import pytest

from lemmata.errors import UsageError
from lemmata.memory import Memory


@pytest.fixture(scope="module")
def embedder():
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


def test_episodes_become_facts_with_exact_provenance(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="alice", embedder=embedder)
    ids = mem.add_episodes(
        [
            {"content": "Hi Bob!", "speaker": "Alice", "timestamp": "2024-05-02T10:00"},
            {
                "content": "I adopted a cat named Miso yesterday.",
                "speaker": "Alice",
                "timestamp": "2024-05-02T10:01",
            },
            {
                "content": "I work at the city library.",
                "speaker": "Bob",
                "timestamp": "2024-05-02T10:02",
            },
        ]
    )
    assert mem.pending() == 3
    found = mem.retrieve("What is the name of Alice's cat?", k=3)
    assert mem.pending() == 0
    top = found.items[0]
    assert "Miso" in top.text and "1 May 2024" in top.text
    assert top.provenance == (ids[1],)
    assert not any(item.text.startswith("Alice said: Hi Bob") for item in found.items)


def test_namespaces_cannot_read_each_other(tmp_path, embedder):
    alice = Memory(tmp_path / "m", user="alice", embedder=embedder)
    bob = alice.scoped(user="bob")
    alice.add_episode("My bank PIN is hidden in the blue notebook.", speaker="Alice")
    alice.consolidate()
    secret = alice.facts()[0]
    assert bob.retrieve("bank PIN blue notebook").items == ()
    assert bob.get(secret.id) is None
    assert bob.forget([secret.id]).items == []
    assert alice.get(secret.id) is not None


def test_forget_removes_from_every_path(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    mem.add_episode("Zorblax the robot repairs bicycles on Tuesdays.", speaker="Ann")
    mem.consolidate()
    fact = mem.facts()[0]
    assert mem.retrieve("Zorblax bicycles").items[0].id == fact.id
    mem.forget([fact.id])
    assert all(i.id != fact.id for i in mem.retrieve("Zorblax bicycles").items)
    assert [e.op for e in mem.audit()][-1] == "forget"


def test_contradiction_closes_the_older_fact(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    old = mem.add_fact("Caroline lives in Boston.", valid_from="2023-01-01")
    new = mem.add_fact("Caroline moved to Denver.", valid_from="2024-01-01")
    closed = mem.get(old)
    assert closed is not None and closed.valid_to is not None and closed.superseded_by == new
    texts = [i.text for i in mem.retrieve("Where does Caroline live?").items]
    assert "Caroline lives in Boston." not in texts
    history = mem.retrieve("Where does Caroline live?", include_history=True)
    assert any("Boston" in i.text for i in history.items)


def test_bad_episode_is_named_and_nothing_is_stored(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    with pytest.raises(UsageError, match="episode 1: content"):
        mem.add_episodes([{"content": "fine"}, {"content": "   "}])
    assert mem.episodes() == []
