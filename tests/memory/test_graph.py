"""The entity graph: entities normalised and linked across facts and sessions, the ``spread``
channel's walk (Personalized PageRank, bounded), exact provenance of what it finds, and the
migration of a memory file written before the graph existed (real SQLite, real chromadb, the
bundled MiniLM)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lemmata.embeddings import Embedder
from lemmata.errors import ConfigError
from lemmata.memory import Memory
from lemmata.memory.graph import _pagerank, classify_entity, entity_key, spread
from lemmata.memory.retrieve import DEFAULT_WEIGHTS, RetrievalConfig


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    from lemmata.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.minilm(threads=2)


def _nodes(mem: Memory) -> dict[str, tuple[str, int]]:
    return {
        r["id"]: (r["kind"], r["items"])
        for r in mem.log.read(
            "SELECT id, kind, items FROM entities WHERE user=? AND agent=?",
            [mem.namespace.user, mem.namespace.agent],
        )
    }


def test_entity_names_are_normalised_to_one_key() -> None:
    assert (
        entity_key("Caroline's")
        == entity_key("caroline")
        == entity_key(" CAROLINE ")
        == ("caroline")
    )
    assert entity_key("the Pride Parade") == "pride parade"
    assert entity_key('"Charlotte\u2019s Web"') == "charlotte's web"


@pytest.mark.parametrize(
    ("key", "text", "kind"),
    [
        ("sweden", "Caroline moved from Sweden four years ago.", "place"),
        ("pride parade", "Caroline went to the Pride Parade.", "event"),
        ("jon", "Caroline went hiking with Jon.", "person"),
        ("melanie", "Melanie paints.", "person"),  # a speaker of the memory
        ("stanford university", "Gina studies at Stanford University.", "organisation"),
        ("charlotte's web", 'Melanie read "Charlotte\'s Web".', "object"),
    ],
)
def test_named_things_get_their_kind(key: str, text: str, kind: str) -> None:
    assert classify_entity(key, text, people=["Melanie"]) == kind


def test_entities_are_linked_across_facts_and_sessions(tmp_path: Path, embedder: Embedder) -> None:
    mem = Memory(tmp_path / "m", user="u", embedder=embedder)
    mem.add_episode("My grandma gave me this necklace in Sweden.", speaker="Caroline", session="s1")
    mem.add_episode("I miss Sweden's long summer evenings a lot.", speaker="Caroline", session="s2")
    mem.add_episode("I went hiking with Jon near the lake.", speaker="Melanie", session="s2")
    mem.consolidate()
    nodes = _nodes(mem)
    # one node for "Sweden" and "Sweden's", mentioned by facts of two sessions
    assert nodes["sweden"] == ("place", 2)
    assert nodes["caroline"][0] == "person"
    assert nodes["jon"][0] == "person"
    assert nodes["necklace"] == ("concept", 1)
    # dates and numbers are not nodes
    assert not [k for k in nodes if k.startswith(("date:", "claim:")) or k[0].isdigit()]

    # forgetting the facts that mention a node removes the node with them
    mem.forget(session="s1")
    nodes = _nodes(mem)
    assert nodes["sweden"] == ("place", 1)
    assert "necklace" not in nodes and "grandma" not in nodes


def test_pagerank_matches_networkx() -> None:
    nx = pytest.importorskip("networkx")
    edges = [("i:a", "e:x"), ("i:b", "e:x"), ("i:b", "e:y"), ("i:c", "e:y"), ("i:d", "e:y")]
    personal = {"i:a": 1.0, "e:y": 0.5}
    ours = _pagerank(edges, personal, 0.5, 60)
    g = nx.Graph(edges)
    theirs = nx.pagerank(
        g, alpha=0.5, personalization={n: personal.get(n, 0.0) for n in g}, tol=1e-12
    )
    for node, score in theirs.items():
        assert ours[node] == pytest.approx(score, abs=1e-6)


# the walk switched on whatever weight the shipped defaults give it
# the person channel is off here: it reaches Caroline's own facts by another road, and these
# tests measure the walk
WALK = RetrievalConfig(weights={**DEFAULT_WEIGHTS, "spread": 0.5, "person": 0.0})


def _puppy_memory(tmp_path: Path, embedder: Embedder, distractors: int = 40) -> tuple[Memory, str]:
    mem = Memory(tmp_path / "m", user="u", embedder=embedder, retrieval=WALK)
    mem.add_episode("I adopted a puppy named Biscuit last spring.", speaker="Caroline", session="a")
    target = mem.add_episode(
        "Biscuit chewed through the garden hose this morning.", speaker="Caroline", session="b"
    )
    hobbies = ["painting", "running", "pottery", "chess", "baking", "cycling", "reading", "yoga"]
    for i in range(distractors):
        mem.add_episode(
            f"I tried {hobbies[i % len(hobbies)]} at the club on day {i} with my neighbours.",
            speaker="Caroline",
            session=f"d{i % 5}",
        )
    mem.consolidate()
    return mem, target


def test_spread_reaches_a_second_hop_fact_with_exact_provenance(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, target = _puppy_memory(tmp_path, embedder)
    # the question's words find the adoption; only the name "Biscuit" links it to the hose
    query = "What did Caroline's new puppy ruin?"
    found = mem.retrieve(query, k=50).items
    hit = [i for i in found if i.provenance == (target,)]
    assert hit, [i.text for i in found]
    assert hit[0].text.endswith("Biscuit chewed through the garden hose this morning.")
    assert hit[0].channels["spread"] == 1
    # the same question without the walk: the linked fact ranks far lower
    mem.retrieval = RetrievalConfig(weights={**DEFAULT_WEIGHTS, "spread": 0.0, "person": 0.0})
    without = mem.retrieve(query, k=50).items
    rank = lambda items: next(  # noqa: E731
        (n for n, i in enumerate(items) if i.provenance == (target,)), len(items)
    )
    assert rank(found) + 10 <= rank(without)


def test_spread_does_not_walk_through_hubs(tmp_path: Path, embedder: Embedder) -> None:
    mem, target = _puppy_memory(tmp_path, embedder)
    seed = next(f.id for f in mem.facts() if "adopted" in f.statement)
    ns = mem.namespace
    assert _nodes(mem)["caroline"][1] > 40  # every fact mentions her
    walked = spread(mem.log, ns, [seed], [], max_degree=40, max_nodes=48)
    reached = {r["id"]: r["text"] for r in mem.log.items(ns, [i for i, _ in walked])}
    # through "Biscuit" (two facts) to the hose; "Caroline" (a hub) links to nothing
    assert [t.split(": ")[-1] for t in reached.values()] == [
        "Biscuit chewed through the garden hose this morning."
    ]
    # with the hub allowed, the walk reaches the rest, the rare link still first
    everywhere = spread(mem.log, ns, [seed], [], max_degree=1000, max_nodes=48)
    assert len(everywhere) > 10
    assert everywhere[0][0] in reached


def test_a_memory_file_from_before_the_graph_is_migrated(
    tmp_path: Path, embedder: Embedder
) -> None:
    mem, target = _puppy_memory(tmp_path, embedder, distractors=10)
    before = _nodes(mem)
    facts = [f.statement for f in mem.facts()]
    mem.close()
    # turn the file into schema 1 as earlier releases wrote it: no entities table, no triggers
    db = sqlite3.connect(tmp_path / "m" / "memory.sqlite3")
    db.executescript(
        "DROP TRIGGER entities_link; DROP TRIGGER entities_unlink; DROP TABLE entities; "
        "UPDATE meta SET value = '1' WHERE key = 'schema';"
    )
    db.close()

    again = Memory(tmp_path / "m", user="u", embedder=embedder, retrieval=WALK)
    assert again.log.get_meta("schema") == "2"
    assert _nodes(again) == before
    assert [f.statement for f in again.facts()] == facts
    hit = again.retrieve("What did Caroline's new puppy ruin?", k=50).items
    assert any(i.provenance == (target,) and i.channels.get("spread") == 1 for i in hit)
    # new facts keep the migrated counts up to date
    again.add_episode("Biscuit loves the beach.", speaker="Caroline", session="c")
    again.consolidate()
    assert _nodes(again)["biscuit"][1] == before["biscuit"][1] + 1


def test_retrieval_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="unknown retrieval channel"):
        RetrievalConfig(weights={"dense": 1.0, "sideways": 1.0})
    with pytest.raises(ConfigError, match="unknown entity kind"):
        RetrievalConfig(spread_kinds=("person", "planet"))
    with pytest.raises(ConfigError, match="spread_damping"):
        RetrievalConfig(spread_damping=1.0)
