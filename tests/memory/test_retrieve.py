"""The retriever's speaker preference for list questions (``list_speaker_boost``), its
``person`` channel (what the one person a question names said, nearest the question's focus)
and its learned reranker (``reranker``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemmata.embeddings import Embedder
from lemmata.errors import ConfigError
from lemmata.memory import Memory
from lemmata.memory.rerank import Reranker, default_reranker
from lemmata.memory.retrieve import DEFAULT_WEIGHTS, RetrievalConfig

LIST_QUESTION = "What hobbies does Melanie have?"
OPEN_QUESTION = "Does Melanie have hobbies?"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=1)


def _memory(tmp_path: Path, embedder: Embedder) -> tuple[Memory, str, str]:
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    own = mem.add_episode("I took up pottery as a hobby this spring.", speaker="Melanie")
    other = mem.add_episode(
        "Melanie, hobbies matter: my hobbies are hiking and chess.", speaker="Caroline"
    )
    for n in range(12):
        mem.add_episode(f"The bus number {n} was late again this morning.", speaker="Caroline")
    mem.consolidate()
    return mem, own, other


def _score(items: tuple, episode: str) -> float:
    return next(i.score for i in items if episode in i.provenance)


def test_a_list_question_prefers_what_its_subject_said(tmp_path: Path, embedder: Embedder) -> None:
    mem, own, other = _memory(tmp_path, embedder)
    plain = mem.retrieve(LIST_QUESTION, k=20).items
    mem.retrieval = RetrievalConfig(list_speaker_boost=2.0)
    boosted = mem.retrieve(LIST_QUESTION, k=20).items
    # Melanie's own fact gains (1 + 0.3 + 2) / (1 + 0.3); Caroline's keeps its score
    assert _score(boosted, own) == pytest.approx(_score(plain, own) * 3.3 / 1.3, rel=1e-3)
    assert _score(boosted, other) == pytest.approx(_score(plain, other), rel=1e-3)
    assert boosted[0].provenance == (own,), [i.text for i in boosted]
    # a question that asks for no list of things is left as it was
    assert [i.id for i in mem.retrieve(OPEN_QUESTION, k=20).items] == [
        i.id for i in _plain(mem, OPEN_QUESTION)
    ]
    mem.close()


def _plain(mem: Memory, question: str) -> tuple:
    config = mem.retrieval
    mem.retrieval = RetrievalConfig()
    try:
        return mem.retrieve(question, k=20).items
    finally:
        mem.retrieval = config


def test_speaker_boosts_are_checked() -> None:
    with pytest.raises(ConfigError, match="list_speaker_boost"):
        RetrievalConfig(list_speaker_boost=-0.5)
    with pytest.raises(ConfigError, match="speaker_boost"):
        RetrievalConfig(speaker_boost=-1.0)


STATUS_QUESTION = "What is Caroline's relationship status?"


def _status_memory(tmp_path: Path, embedder: Embedder) -> tuple[Memory, str, str, set[str]]:
    """Caroline's one turn about being single, under forty turns that name her and ask about
    the status of things, so that the whole question's embedding finds those first."""
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    own = mem.add_episode(
        "I'm adopting a kid next year. It'll be tough as a single parent, but I'm ready.",
        speaker="Caroline",
    )
    other = mem.add_episode("Being a single parent is tough, my sister says.", speaker="Melanie")
    hers = {own}
    for what in (
        "pottery class", "new car", "garden", "painting", "bike ride", "concert", "book club",
        "camping trip", "museum visit", "beach day", "yoga", "piano lessons", "job search",
        "flat hunt", "road trip", "cooking course", "choir", "volunteering", "tax return",
        "dentist visit",
    ):  # fmt: skip
        mem.add_episode(
            f"Caroline, what is the status of your {what}? Tell me about it, Caroline.",
            speaker="Melanie",
        )
        hers.add(
            mem.add_episode(
                f"The {what} went well, Melanie, thanks for asking about it.", speaker="Caroline"
            )
        )
    mem.consolidate()
    return mem, own, other, hers


def _with_person(weight: float, *, person_when: bool = False, **more: object) -> RetrievalConfig:
    return RetrievalConfig(
        weights={**DEFAULT_WEIGHTS, "person": weight},
        depth=5,
        person_when=person_when,
        **more,  # type: ignore[arg-type]
    )


def test_the_person_channel_reaches_what_the_named_person_said_about_the_focus(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, own, other, hers = _status_memory(tmp_path, embedder)
    mem.retrieval = _with_person(0.0)
    without = mem.retrieve(STATUS_QUESTION, k=10).items
    assert own not in {e for i in without for e in i.provenance}
    mem.retrieval = _with_person(2.0)
    found = mem.retrieve(STATUS_QUESTION, k=10).items
    assert own in {e for i in found for e in i.provenance}, [i.text for i in found]
    # the channel draws only on Caroline's own turns: Melanie's "single parent" is not in it
    drawn = [i for i in mem.retrieve(STATUS_QUESTION, k=30).items if "person" in i.channels]
    assert drawn and all(set(i.provenance) <= hers for i in drawn)
    assert other not in {e for i in drawn for e in i.provenance}
    # a question that names both people, or a "when" question, does not use it
    for question in (
        "What is Caroline's and Melanie's relationship status?",
        "When did Caroline talk about her relationship status?",
    ):
        assert not any("person" in i.channels for i in mem.retrieve(question, k=30).items)
    mem.retrieval = _with_person(2.0, person_when=True)
    when = mem.retrieve("When did Caroline talk about her relationship status?", k=30).items
    assert any("person" in i.channels for i in when)
    mem.close()


def test_person_depth_is_checked() -> None:
    with pytest.raises(ConfigError, match="person_depth"):
        RetrievalConfig(person_depth=0)
    with pytest.raises(ConfigError, match="person_max_focus"):
        RetrievalConfig(person_max_focus=-1)


def _drawn(mem: Memory, question: str) -> list:
    return [i for i in mem.retrieve(question, k=30).items if "person" in i.channels]


def test_by_form_the_person_channel_serves_only_questions_without_one_best_turn(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, own, _, _ = _status_memory(tmp_path, embedder)
    mem.retrieval = _with_person(2.0, person_by_form=True)
    # a short focus ("relationship status") has no one turn that says it: the channel runs
    found = mem.retrieve(STATUS_QUESTION, k=10).items
    assert own in {e for i in found for e in i.provenance}, [i.text for i in found]
    # so does a question that asks for several things, however long
    assert _drawn(mem, "What things did Caroline say went well after she asked about them?")
    # a question about one exact thing (a long focus, no word of number) is left to the rest
    exact = "How did Caroline feel about the dentist visit she had on Monday morning?"
    assert not _drawn(mem, exact)
    mem.retrieval = _with_person(2.0, person_by_form=False)
    assert _drawn(mem, exact)
    mem.close()


def test_a_question_about_two_people_reads_each_ones_own_turns(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    jon = mem.add_episode("Dancing is how I unwind after a long week.", speaker="Jon")
    gina = mem.add_episode("I unwind by dancing in my living room.", speaker="Gina")
    for n in range(15):
        mem.add_episode(f"Jon, did you see the game {n}? Gina liked it too.", speaker="Max")
        mem.add_episode(f"Order {n} for the store shipped today.", speaker="Gina")
    mem.consolidate()
    question = "How do Jon and Gina both like to unwind?"
    mem.retrieval = _with_person(1.0, person_pairs=False)
    assert not _drawn(mem, question)  # one named person only, without pairs
    mem.retrieval = _with_person(1.0, person_pairs=True)
    drawn = _drawn(mem, question)
    sources = {e for i in drawn for e in i.provenance}
    assert {jon, gina} <= sources, [i.text for i in drawn]
    # each person's nearest turn comes before either one's second
    assert {e for i in drawn if i.channels["person"] <= 2 for e in i.provenance} == {jon, gina}
    mem.close()


def test_a_reranker_reorders_the_best_candidates(tmp_path: Path, embedder: Embedder) -> None:
    mem, own, other = _memory(tmp_path, embedder)
    fused = mem.retrieve(LIST_QUESTION, k=20).items
    assert fused[0].provenance == (own,)  # Melanie's own fact, preferred by the speaker boost
    # a model that ranks what the named speaker said last, over a pool of every candidate
    against = Reranker(("speaker_named",), (0.0,), (1.0,), (-5.0,), 0.0, pool=len(fused))
    mem.retrieval = RetrievalConfig(reranker=against)
    reranked = mem.retrieve(LIST_QUESTION, k=20).items
    assert {i.id for i in reranked} == {i.id for i in fused}
    assert own not in reranked[0].provenance
    assert own in reranked[-1].provenance
    # the items keep their exact provenance and fused scores, only the order changes
    by_id = {i.id: i for i in fused}
    assert all(i.provenance == by_id[i.id].provenance for i in reranked)
    assert all(i.score == by_id[i.id].score for i in reranked)
    mem.close()


def test_the_shipped_reranker_runs_on_a_memory(tmp_path: Path, embedder: Embedder) -> None:
    mem, own, _ = _memory(tmp_path, embedder)
    mem.retrieval = RetrievalConfig(reranker=default_reranker())
    items = mem.retrieve(LIST_QUESTION, k=5).items
    assert len(items) == 5
    assert own in {e for i in items for e in i.provenance}
    mem.close()
