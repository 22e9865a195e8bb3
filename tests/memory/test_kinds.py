"""Type-aware expansion (the ``kinds`` channel): a list question's head noun, the concepts
near it in the memory's own vector index, the facts tagged with them, what the question's
subject said only, and concepts stored after the first look (real SQLite, real chromadb, the
bundled MiniLM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemmata.embeddings import Embedder
from lemmata.errors import ConfigError
from lemmata.memory import Memory
from lemmata.memory.kinds import (
    ConceptVectors,
    aggregate_question,
    concept_space,
    head_phrase,
    joined_people,
    question_focus,
)
from lemmata.memory.retrieve import DEFAULT_WEIGHTS, RetrievalConfig

KINDS = RetrievalConfig(weights={**DEFAULT_WEIGHTS, "kinds": 0.5})  # off by default
NO_KINDS = RetrievalConfig(weights={**DEFAULT_WEIGHTS, "kinds": 0.0})
QUESTION = "What instruments does Melanie play?"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


@pytest.mark.parametrize(
    ("question", "head"),
    [
        ("What activities does Melanie partake in?", "activities"),
        ("What LGBTQ+ events has Caroline participated in?", "LGBTQ+ events"),
        ("What kind of art does Caroline make?", "art"),
        ("Which cities has Jon visited?", "cities"),
        ("What musical artists/bands has Melanie seen?", "musical artists/bands"),
        ("What are Melanie's pets' names?", "pets'"),
        ("What did Caroline research?", None),
        ("What can Andrew potentially do to relax?", None),
        ("When did Caroline go to the parade?", None),
        ("What time does the club open?", None),
        ("What is Jon offering to the dancers?", None),
    ],
)
def test_the_head_noun_of_a_list_question(question: str, head: str | None) -> None:
    assert head_phrase(question) == head


def _band_memory(tmp_path: Path, embedder: Embedder) -> tuple[Memory, dict[str, str]]:
    mem = Memory(tmp_path / "m", user="u", embedder=embedder, retrieval=KINDS)
    said = {
        "violin": mem.add_episode(
            "Every evening I practise the violin for an hour.", speaker="Melanie", session="a"
        ),
        "clarinet": mem.add_episode(
            "I dug out my old clarinet from the attic yesterday.", speaker="Melanie", session="b"
        ),
        "other": mem.add_episode(
            "I dug out my old trumpet from the garage.", speaker="Caroline", session="b"
        ),
    }
    # what the question's words meet: playing, but no instrument
    games = ["cards", "chess", "tag", "football", "board games", "hide and seek", "frisbee"]
    for i in range(30):
        mem.add_episode(
            f"On day {i} I played {games[i % len(games)]} with the kids before lunch.",
            speaker="Melanie",
            session=f"d{i % 4}",
        )
    mem.consolidate()
    return mem, said


def _rank(items: tuple, episode: str) -> int:
    return next((n for n, i in enumerate(items) if episode in i.provenance), len(items))


@pytest.mark.parametrize(
    ("question", "people", "focus"),
    [
        ("What is Caroline's relationship status?", ["Caroline"], "relationship status"),
        (
            "What activities has Melanie done with her family?",
            ["Melanie"],
            "activities done with family",
        ),
        ("what books has TIM read?", ["Tim"], "books read"),
        ("Who is Caroline?", ["Caroline"], ""),
    ],
)
def test_the_focus_of_a_question_about_a_person(
    question: str, people: list[str], focus: str
) -> None:
    assert question_focus(question, people) == focus


def test_the_instances_of_the_asked_type_are_found(tmp_path: Path, embedder: Embedder) -> None:
    mem, said = _band_memory(tmp_path, embedder)
    found = mem.retrieve(QUESTION, k=40).items
    for instrument in ("violin", "clarinet"):
        hit = [i for i in found if said[instrument] in i.provenance]
        assert hit, (instrument, [i.text for i in found])
        assert "kinds" in hit[0].channels
        assert hit[0].provenance == (said[instrument],)
    # the channel keeps what the question's subject said: Caroline's trumpet is not in it
    assert all("kinds" not in i.channels for i in found if said["other"] in i.provenance)
    # the same question without the channel: the instances rank lower
    mem.retrieval = NO_KINDS
    without = mem.retrieve(QUESTION, k=40).items
    ranks = [(_rank(found, said[x]), _rank(without, said[x])) for x in ("violin", "clarinet")]
    assert all(w <= wo for w, wo in ranks) and any(w < wo for w, wo in ranks), ranks
    assert all("kinds" not in i.channels for i in without)
    mem.close()


def test_concepts_stored_after_a_retrieval_are_embedded_at_the_next(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, _ = _band_memory(tmp_path, embedder)
    mem.retrieve(QUESTION, k=10)
    space = concept_space((mem.namespace.user, mem.namespace.agent))
    before = mem.index.count(space)
    assert before > 0
    cello = mem.add_episode("My neighbour lent me her cello last week.", speaker="Melanie")
    mem.consolidate()
    found = mem.retrieve(QUESTION, k=40).items
    assert mem.index.count(space) > before
    hit = [i for i in found if cello in i.provenance]
    assert hit and "kinds" in hit[0].channels, [i.text for i in found]
    mem.close()


def test_a_question_that_asks_for_no_type_leaves_the_channel_empty(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, _ = _band_memory(tmp_path, embedder)
    found = mem.retrieve("What did Melanie dig out yesterday?", k=40).items
    assert found
    assert all("kinds" not in i.channels for i in found)
    mem.close()


def test_kinds_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="kinds_concepts"):
        RetrievalConfig(kinds_concepts=0)
    with pytest.raises(ConfigError, match="kinds_min_similarity"):
        RetrievalConfig(kinds_min_similarity=1.5)


def test_a_backlog_of_concepts_is_embedded_a_bounded_batch_at_a_time(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, _ = _band_memory(tmp_path, embedder)
    space = concept_space((mem.namespace.user, mem.namespace.agent))
    vectors = ConceptVectors(max_new=5)
    counts = []
    for _ in range(3):
        vectors.sync(mem.log, mem.index, mem.embedder, mem.namespace)
        counts.append(mem.index.count(space))
    assert counts == [5, 10, 15]
    with pytest.raises(ValueError, match="max_new"):
        ConceptVectors(max_new=0)
    mem.close()


def test_the_channel_works_after_the_memory_is_reindexed_with_another_embedder(
    tmp_path: Path, embedder: Embedder
) -> None:
    from lemmata.embeddings import SentenceTransformerEmbedder, minilm_path

    mem, said = _band_memory(tmp_path, embedder)
    mem.retrieve(QUESTION, k=10)  # the concepts' vectors are made with the first embedder
    mem.close()
    other = SentenceTransformerEmbedder(minilm_path(), name="another-embedder", threads=2)
    again = Memory(tmp_path / "m", user="u", embedder=other, retrieval=KINDS)
    again.reindex()
    found = again.retrieve(QUESTION, k=40).items
    hit = [i for i in found if said["violin"] in i.provenance]
    assert hit and "kinds" in hit[0].channels, [i.text for i in found]
    again.close()


def _concepts_near(mem: Memory, embedder: Embedder, words: str) -> list[str]:
    space = concept_space((mem.namespace.user, mem.namespace.agent))
    return [c for c, _ in mem.index.query(space, embedder.embed([words]), 40)[0]]


def test_forgetting_removes_the_words_only_forgotten_facts_held(
    tmp_path: Path, embedder: Embedder
) -> None:
    """A concept's vector is stored under the concept's own word: after a forget, no word
    that only the forgotten facts held stays in the index, and the rest come back when a
    list question needs them."""
    mem, said = _band_memory(tmp_path, embedder)
    mem.retrieve(QUESTION, k=10)
    assert any("attic" in c for c in _concepts_near(mem, embedder, "attic clarinet"))
    mem.forget(episodes=[said["clarinet"]])
    assert not any("attic" in c for c in _concepts_near(mem, embedder, "attic clarinet"))
    found = mem.retrieve(QUESTION, k=40).items
    assert not any(said["clarinet"] in i.provenance for i in found)
    hit = [i for i in found if said["violin"] in i.provenance]
    assert hit and "kinds" in hit[0].channels, [i.text for i in found]
    assert not any("attic" in c for c in _concepts_near(mem, embedder, "attic clarinet"))
    mem.close()


@pytest.mark.parametrize(
    ("question", "aggregate"),
    [
        ("What books has John read?", True),
        ("What items has Melanie bought?", True),
        ("How many times has Jon injured his ankle?", True),
        ("What kind of art does Caroline make?", True),
        ("What do Jon and Gina both like?", True),
        ("What has Caroline ever painted?", True),
        ("What is Caroline's relationship status?", False),
        ("How will John share the recipe with the other person?", False),
        ("Which book was John reading during his recovery?", False),
    ],
)
def test_a_question_that_asks_for_several_things(question: str, aggregate: bool) -> None:
    assert aggregate_question(question) is aggregate


@pytest.mark.parametrize(
    ("question", "people", "joined"),
    [
        ("What do Jon and Gina both like?", ["Jon", "Gina"], ["Jon", "Gina"]),
        ("Who is Tim and John's favourite player?", ["John", "Tim"], ["Tim", "John"]),
        ("what do jon & gina share?", ["Jon", "Gina"], ["Jon", "Gina"]),
        ("What did Jon tell Gina about the studio?", ["Jon", "Gina"], []),
        ("What does Jon and his dog like?", ["Jon"], []),
    ],
)
def test_two_people_joined_as_one_subject(
    question: str, people: list[str], joined: list[str]
) -> None:
    assert joined_people(question, people) == joined
