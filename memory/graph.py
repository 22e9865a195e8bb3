"""The entity graph: the things facts mention, linked across facts and sessions, and the
``spread`` retrieval channel that walks it.

Nodes are the (user, agent) pair's entities, one row each in ``entities``: named things
(people, places, organisations, events, objects: capitalised word runs and quoted titles, see
:func:`~lemmata.memory.text.entities`) and concepts (the stemmed content words a fact is
tagged with). A node's id is its normalised name (:func:`entity_key`), so "Caroline's",
"caroline" and "CAROLINE" are one node in every session. Edges are ``item_terms`` rows (a fact
-> each entity and tag it mentions, indexed both ways); ``entities.items`` counts a node's
facts, kept by triggers on ``item_terms``, so a hub (the speaker of half the conversation) is
known without counting.

The ``spread`` channel is Personalized PageRank (HippoRAG's answer to multi-hop questions) on
a bounded neighbourhood: personalised on the first-pass results (by rank) and on the query's
own entities, over the facts that share a non-hub entity with them. Every step is an index
lookup: the seeds' edges (``item_terms`` by item), the nodes' counts (``entities`` by key),
and the facts of at most ``max_nodes`` nodes of at most ``max_degree`` facts each (by key);
so the work is bounded by ``max_nodes * max_degree`` edges at any memory size. A fact found by
the walk is an ordinary stored item: its provenance is its own source episodes, exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import sqlite3

    from lemmata.memory.log import MemoryLog
    from lemmata.memory.types import Namespace

__all__ = [
    "ENTITY_KINDS",
    "GRAPH_TERM_SQL",
    "classify_entity",
    "entity_key",
    "graph_term",
    "set_kinds",
    "spread",
]

ENTITY_KINDS = ("person", "place", "organisation", "event", "object", "concept")

_ORGANISATION = frozenset(
    [
        "inc",
        "ltd",
        "llc",
        "corp",
        "company",
        "co",
        "university",
        "college",
        "school",
        "academy",
        "institute",
        "club",
        "association",
        "foundation",
        "society",
        "church",
        "hospital",
        "clinic",
        "bank",
        "agency",
        "center",
        "centre",
        "museum",
        "library",
        "council",
        "committee",
        "department",
        "team",
        "band",
        "group",
        "studio",
        "shelter",
    ]
)
_EVENT = frozenset(
    [
        "parade",
        "festival",
        "conference",
        "concert",
        "party",
        "wedding",
        "race",
        "marathon",
        "show",
        "fair",
        "summit",
        "week",
        "day",
        "cup",
        "championship",
        "tournament",
        "game",
        "match",
        "ceremony",
        "meetup",
        "convention",
        "workshop",
        "retreat",
        "camp",
        "tour",
        "exhibition",
        "exhibit",
        "gala",
        "fundraiser",
        "protest",
        "rally",
    ]
)
_PLACE = frozenset(
    [
        "city",
        "town",
        "village",
        "country",
        "state",
        "county",
        "park",
        "beach",
        "lake",
        "river",
        "mountain",
        "mountains",
        "street",
        "avenue",
        "road",
        "island",
        "valley",
        "forest",
        "bay",
        "coast",
        "island",
        "cafe",
        "restaurant",
    ]
)
# a capitalised name right after one of these words is a place ("moved from Sweden")
_PLACE_BEFORE = re.compile(
    r"\b(?:in|at|from|to|near|visited|visiting|visit|around|across)\s+(?:the\s+)?$", re.I
)
# ... or a person ("with Jon", "my friend Gina")
_PERSON_BEFORE = re.compile(
    r"\b(?:with|friend|friends|named|called|met|sister|brother|mom|mum|dad|son|daughter|"
    r"husband|wife|partner|cousin|aunt|uncle|grandma|grandpa|boss|mr|mrs|ms|dr)\.?\s+$",
    re.I,
)
_APOSTROPHE_S = re.compile(r"'s$")
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def entity_key(name: str) -> str:
    """The normalised id of a named thing: lower case, no possessive, no leading article,
    no surrounding punctuation, single spaces.

    >>> entity_key("  The Pride Parade's ")
    'pride parade'
    >>> entity_key('"Charlotte\u2019s Web"')
    "charlotte's web"
    """
    key = " ".join(name.lower().replace("\u2019", "'").split())
    key = _EDGES.sub("", key)
    key = _APOSTROPHE_S.sub("", key)
    key = re.sub(r"^(?:the|a|an)\s+", "", key)
    return _EDGES.sub("", key)


def classify_entity(key: str, text: str, people: Iterable[str] = ()) -> str:
    """The kind of the named thing ``key`` as ``text`` mentions it: ``person`` (one of
    ``people``, the speakers, or named after "with", "my friend"...), ``organisation`` or
    ``event`` (by its last word), ``place`` (by its last word, or named after "in", "from",
    "visited"...), else ``object``.

    >>> classify_entity("sweden", "Caroline moved from Sweden four years ago.")
    'place'
    >>> classify_entity("pride parade", "Caroline went to a Pride Parade.")
    'event'
    """
    if key in {p.lower() for p in people}:
        return "person"
    last = key.rsplit(" ", 1)[-1]
    if last in _ORGANISATION:
        return "organisation"
    if last in _EVENT:
        return "event"
    if last in _PLACE:
        return "place"
    at = text.lower().find(key)
    if at >= 0:
        before = text[:at]
        if _PERSON_BEFORE.search(before):
            return "person"
        if _PLACE_BEFORE.search(before):
            return "place"
    return "object"


def graph_term(term: str) -> bool:
    """Whether an ``item_terms`` term is a node of the graph (dates, claim keys and bare
    numbers are not: they link facts by coincidence, not by what they are about)."""
    return not (term.startswith(("date:", "claim:")) or term[:1].isdigit())


# The SQL condition of :func:`graph_term`, for the triggers and the migration.
GRAPH_TERM_SQL = "{t} NOT LIKE 'date:%' AND {t} NOT LIKE 'claim:%' AND {t} NOT GLOB '[0-9]*'"


def set_kinds(db: sqlite3.Connection, ns: Namespace, kinds: Mapping[str, str]) -> None:
    """Give named nodes their kind (the triggers create every node as a concept or object);
    a person, place, organisation or event is never turned back into an object."""
    db.executemany(
        "UPDATE entities SET kind = ? WHERE user=? AND agent=? AND id=? "
        "AND (kind IN ('object', 'concept') OR ? NOT IN ('object', 'concept'))",
        [(kind, ns.user, ns.agent, key, kind) for key, kind in kinds.items()],
    )


def spread(
    log: MemoryLog,
    ns: Namespace,
    seeds: Sequence[str],
    query_nodes: Sequence[str],
    *,
    max_degree: int,
    max_nodes: int,
    kinds: Sequence[str] = ENTITY_KINDS,
    damping: float = 0.5,
    query_weight: float = 1.0,
    iterations: int = 20,
) -> list[tuple[str, float]]:
    """Facts ranked by Personalized PageRank on the seeds' neighbourhood, best first, the
    seeds themselves left out (the other channels rank them already).

    ``seeds``: first-pass item ids, best first (personalisation ``1/(rank+1)``);
    ``query_nodes``: entity keys from the query (each personalised ``query_weight``, shared
    out). Nodes with more than ``max_degree`` facts, or fewer than two, are not walked through;
    of the rest, the ``max_nodes`` rarest. ``damping`` is the share of the walk that follows an
    edge rather than jumping back to the personalisation (HippoRAG uses 0.5).
    """
    if not seeds and not query_nodes:
        return []
    marks = ",".join("?" * len(kinds))
    nodes: dict[str, int] = {}  # node -> its fact count
    seed_edges: list[tuple[str, str]] = []
    if seeds:
        rows = log.read(
            # INDEXED BY: left to itself, SQLite walks the whole namespace's terms here
            "SELECT t.item_id, t.term, n.items FROM item_terms t INDEXED BY item_terms_item "
            "JOIN entities n "
            "ON n.user=t.user AND n.agent=t.agent AND n.id=t.term "
            f"WHERE t.user=? AND t.agent=? AND t.item_id IN ({','.join('?' * len(seeds))}) "
            f"AND n.items BETWEEN 2 AND ? AND n.kind IN ({marks})",
            [ns.user, ns.agent, *seeds, max_degree, *kinds],
        )
        for r in rows:
            seed_edges.append((r[0], r[1]))
            nodes[r[1]] = int(r[2])
    asked: list[str] = []
    if query_nodes:
        wanted = list(dict.fromkeys(query_nodes))
        for r in log.read(
            f"SELECT id, items FROM entities WHERE user=? AND agent=? "
            f"AND id IN ({','.join('?' * len(wanted))}) AND items BETWEEN 1 AND ? "
            f"AND kind IN ({marks})",
            [ns.user, ns.agent, *wanted, max_degree, *kinds],
        ):
            nodes[r[0]] = int(r[1])
            asked.append(r[0])
    if not nodes:
        return []
    # the rarest nodes first: they say the most about what links two facts
    keep = sorted(nodes, key=lambda n: (nodes[n], n))[:max_nodes]
    # the items table is joined only to keep a session's walk inside the session
    join, scope = (
        (
            " JOIN items i ON i.user=t.user AND i.agent=t.agent AND i.id=t.item_id",
            " AND i.session=?",
        )
        if ns.session
        else ("", "")
    )
    edges = log.read(
        f"SELECT t.term, t.item_id FROM item_terms t{join} WHERE t.user=? AND t.agent=? "
        f"AND t.term IN ({','.join('?' * len(keep))}){scope}",
        [ns.user, ns.agent, *keep, *([ns.session] if ns.session else [])],
    )
    kept = set(keep)
    pairs = {(item, node) for item, node in seed_edges if node in kept}
    pairs |= {(r[1], r[0]) for r in edges}
    if not pairs:
        return []
    personal: dict[str, float] = {}
    for rank, s in enumerate(seeds):
        personal[f"i:{s}"] = 1.0 / (rank + 1)
    reached = [n for n in asked if n in kept]
    for n in reached:
        personal[f"e:{n}"] = query_weight / len(reached)
    scores = _pagerank(
        [(f"i:{item}", f"e:{node}") for item, node in pairs], personal, damping, iterations
    )
    seed_set = set(seeds)
    ranked = [
        (node[2:], score)
        for node, score in scores.items()
        if node.startswith("i:") and node[2:] not in seed_set and score > 0
    ]
    ranked.sort(key=lambda p: (-p[1], p[0]))
    return ranked


def _pagerank(
    edges: Sequence[tuple[str, str]],
    personal: Mapping[str, float],
    damping: float,
    iterations: int,
) -> dict[str, float]:
    """Personalized PageRank on an undirected graph by power iteration (numpy).

    networkx's ``pagerank`` computes the same (the tests compare the two); here the graph of
    one query (a few thousand edges at most) is walked with two numpy arrays, without the
    cost of building a networkx graph for every query. Every node has an edge, so no mass
    leaks; with the damping at 0.5, 20 steps leave an error under one in a million."""
    index: dict[str, int] = {}
    for a, b in edges:
        index.setdefault(a, len(index))
        index.setdefault(b, len(index))
    p = np.zeros(len(index))
    for node, weight in personal.items():
        if node in index:
            p[index[node]] = weight
    total = p.sum()
    if total <= 0:
        return {}
    p /= total
    pairs = np.array([(index[a], index[b]) for a, b in edges], dtype=np.int64)
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    degree = np.bincount(src, minlength=len(index)).astype(float)
    rank = p.copy()
    for _ in range(iterations):
        rank = (1.0 - damping) * p + damping * np.bincount(
            dst, weights=(rank / degree)[src], minlength=len(index)
        )
    return {node: float(rank[i]) for node, i in index.items()}
