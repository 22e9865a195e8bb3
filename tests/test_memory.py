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


def test_the_reply_next_to_a_hit_is_retrieved_through_the_adjacent_channel(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    # other talk of Chicago outranks the reply (which names neither Chicago nor the marathon)
    # in every channel but the hop from the question it answers
    mem.add_episodes(
        [
            {"content": f"My cousin number {n} moved to Chicago for a job.", "speaker": "Cy"}
            for n in range(12)
        ],
    )
    ids = mem.add_episodes(
        [
            {"content": "Did you run the Chicago marathon last weekend?", "speaker": "Bob"},
            {"content": "Yes, I finished in four hours and ten minutes.", "speaker": "Alice"},
        ]
    )
    found = mem.retrieve("Chicago marathon", k=20)
    reply = next(i for i in found.items if i.provenance == (ids[1],))
    assert "adjacent" in reply.channels


def test_items_from_turns_not_yet_covered_come_before_repeats(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    first = mem.add_episode(
        "I bake sourdough bread every week. I bake rye bread on Sundays.", speaker="Ann"
    )
    second = mem.add_episode("I bake cornbread for the school fair.", speaker="Ben")
    found = mem.retrieve("Who bakes bread?", k=2)
    assert {p for i in found.items for p in i.provenance} == {first, second}


def test_bm25_keeps_its_cost_bounded_without_losing_the_specific_item(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    ids = mem.add_facts(
        [f"Nora sings {n}." for n in range(6)]
        + [f"Omar repairs clocks near Lisbon {n}." for n in range(8)]
        + ["Nora repairs old clocks in Lisbon."]
    )
    words = ["nora", "clocks", "lisbon"]
    # over the budget of 5 postings, only the rarest word ("nora", 7 items) would rank, and
    # its short items would come first: the AND of all the words puts the specific item first
    hits = mem.log.search_text(mem.namespace, words, 3, max_postings=5)
    assert hits[0][0] == ids[-1]
    # another namespace's items filling FTS5's head do not crowd this one's out
    other = mem.scoped(user="v")
    other.add_facts([f"Nora repairs clocks in Lisbon, shop {n}." for n in range(40)])
    hits = mem.log.search_text(mem.namespace, words, 2)
    assert [h for h, _ in hits][:1] == [ids[-1]] and len(hits) == 2


def test_bm25_never_ranks_a_word_over_the_budget_when_the_and_finds_items(
    tmp_path, embedder, monkeypatch
):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    ids = mem.add_facts(
        [f"Nora sings {n}." for n in range(6)]
        + [f"Omar repairs clocks near Lisbon {n}." for n in range(8)]
        + ["Nora repairs old clocks in Lisbon."]
    )
    ranked: list[str] = []
    rank = mem.log._rank_text

    def spy(ns, match, limit):
        ranked.append(match)
        return rank(ns, match, limit)

    monkeypatch.setattr(mem.log, "_rank_text", spy)
    # every word is on more items than the budget of 5: only the AND of all of them is
    # ranked (scoring a frequent word's postings is what grew with the memory)
    hits = mem.log.search_text(mem.namespace, ["nora", "clocks", "lisbon"], 3, max_postings=5)
    assert hits[0][0] == ids[-1]
    assert ranked == ['"nora" AND "clocks" AND "lisbon"']
    # no item holds every word: the rarest word's best, rather than nothing
    ranked.clear()
    hits = mem.log.search_text(mem.namespace, ["sings", "clocks"], 3, max_postings=5)
    assert ranked[-1] == '"sings"' and {h for h, _ in hits} <= set(ids[:6]) and hits


def test_a_reply_is_found_by_the_question_it_answers_and_forgetting_the_question_undoes_it(
    tmp_path, embedder
):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    ids = mem.add_episodes(
        [
            {"content": "How long have you two been married now?", "speaker": "Caroline"},
            {"content": "Five years already! Time flies.", "speaker": "Melanie"},
            {"content": "I painted a lake at sunrise last week.", "speaker": "Caroline"},
        ]
    )
    found = mem.retrieve("married", k=5)
    reply = next(i for i in found.items if i.provenance == (ids[1],))
    assert "bm25" in reply.channels  # by the words of the question before it
    assert "married" not in reply.text.lower()  # which are not its text
    assert reply.provenance == (ids[1],)  # nor its provenance
    mem.forget(episodes=[ids[0]])
    after = mem.retrieve("married", k=5)
    assert not any(i.provenance == (ids[1],) and "bm25" in i.channels for i in after.items)
    assert mem.retrieve("five years", k=3).items  # the reply itself is still there


def test_acknowledgements_are_not_facts_but_short_news_is(tmp_path, embedder):
    from lemmata.memory.extract import OfflineExtractor, StoredEpisode

    def facts(text: str, speaker: str = "Gina", meta: dict | None = None) -> list[str]:
        turns = [
            StoredEpisode("e0", "s", "utterance", "Jon", "How is the store?", None),
            StoredEpisode("e1", "s", "utterance", speaker, text, None, meta=meta or {}),
        ]
        return [f.statement for f in OfflineExtractor().extract(turns).facts if f.sources == ["e1"]]

    assert facts("Sounds great, Jon!") == []
    assert facts("Yep, Jon. Talk to you soon!") == []
    assert facts("Hey Jon! The store's doing great!") == ["Gina said: The store's doing great!"]
    # a caption that already says "a photo of" is not said twice
    shown = facts("Look!", meta={"blip_caption": "a photo of a red dress on a hanger"})
    assert shown == ["Gina shared a photo of a red dress on a hanger."]


def test_a_question_naming_a_speaker_prefers_what_that_speaker_said(tmp_path, embedder):
    from lemmata.memory.retrieve import DEFAULT_WEIGHTS, RetrievalConfig

    turns = [
        {"content": "Hi!", "speaker": "Melanie"},
        {"content": "Melanie paints sunrises so well.", "speaker": "Caroline"},
        {
            "content": "I finished a new one last week: a lake at dawn, in oils.",
            "speaker": "Melanie",
        },
    ]
    no_person = {**DEFAULT_WEIGHTS, "person": 0.0}
    configs = {
        "words": RetrievalConfig(speaker_boost=0.0, weights=no_person),
        "boost": RetrievalConfig(speaker_boost=0.3, weights=no_person),
        "defaults": RetrievalConfig(),  # the speaker boost and the person channel
    }
    tops = {}
    for name, config in configs.items():
        mem = Memory(tmp_path / name, user="u", embedder=embedder, retrieval=config)
        ids = mem.add_episodes(turns)
        top = mem.retrieve("What does Melanie paint?", k=2).items[0]
        tops[name] = ids.index(top.provenance[0])
        mem.close()
    # on its words alone, Caroline's remark about Melanie ranks first; Melanie's own comes
    # first once the speaker the question names counts, by the boost or by the defaults
    assert tops == {"words": 1, "boost": 2, "defaults": 2}


def test_facts_of_the_same_time_rank_newest_stored_first_in_recency(tmp_path, embedder):
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    ids = mem.add_facts([f"Teodor keeps bees in hive number {n}." for n in range(8)])
    found = mem.retrieve("Teodor bees hive", k=8)
    by_recency = sorted(found.items, key=lambda i: i.channels["recency"])
    # no time on any of them: the newest stored first, never the order a set iterates in
    assert [i.id for i in by_recency] == ids[::-1]


def test_a_query_vector_given_is_used_and_items_carry_their_similarity(tmp_path, embedder):
    import numpy as np

    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    mem.add_episodes(
        [
            {"content": "Zorblax the robot repairs bicycles on Tuesdays.", "speaker": "Ann"},
            {"content": "The harbour ferry leaves at seven.", "speaker": "Ann"},
        ]
    )
    query = "Who repairs bicycles?"
    plain = mem.retrieve(query, k=2)
    vector = embedder.embed([query])[0]
    given = mem.retrieve(query, k=2, vector=vector)
    assert [i.id for i in given.items] == [i.id for i in plain.items]
    top = given.items[0]
    assert "Zorblax" in top.text
    assert top.similarity == pytest.approx(float(embedder.embed([top.text])[0] @ vector), abs=1e-3)
    # a vector pointing elsewhere changes what the dense channel finds: it was used
    away = mem.retrieve(query, k=2, vector=embedder.embed(["ferry harbour seven"])[0])
    assert away.items[0].similarity != pytest.approx(top.similarity, abs=1e-3)
    with pytest.raises(UsageError, match="shape"):
        mem.retrieve(query, vector=np.zeros(3, np.float32))


def test_two_views_of_one_namespace_never_structure_the_same_episodes_twice(tmp_path, embedder):
    import threading
    import time

    from lemmata.memory.extract import OfflineExtractor

    slow = OfflineExtractor()
    extract = slow.extract
    slow.extract = lambda segment: (time.sleep(0.3), extract(segment))[1]  # type: ignore[method-assign]
    mem = Memory(tmp_path / "m", user="u", embedder=embedder, extractor=slow)
    mem.add_episodes(
        [{"content": f"Room {n} has a green door.", "speaker": "Ann"} for n in range(3)]
    )
    views = [mem.scoped(user="u"), mem.scoped(user="u")]
    reports = []
    workers = [threading.Thread(target=lambda v=v: reports.append(v.consolidate())) for v in views]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(r.episodes for r in reports) == [0, 3]
    assert len(mem.facts()) == 3
