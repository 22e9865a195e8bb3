"""The log's rows and their columns: one place that packs and unpacks them.

An item goes into the ``items`` table as an :class:`ItemRow` (:func:`item_values` encodes
it), and comes back as an ``sqlite3.Row`` whose ``sources`` column packs the ids of its
source episodes into one text (:data:`SOURCES_COLUMN` writes the SQL, :func:`unpack` reads
it). :func:`to_node` turns such a row into the :class:`~lemmata.memory.types.Fact` or
:class:`~lemmata.memory.types.Procedure` users see; :func:`stored_episode` turns an
``episodes`` row into what extractors read. The separator is private to this module: a
caller that needs an item's sources calls :func:`unpack`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from lemmata.memory.extract import StoredEpisode
from lemmata.memory.types import Fact, Namespace, Procedure

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "ITEM_COLUMNS",
    "SOURCES_COLUMN",
    "ItemRow",
    "chunks",
    "item_values",
    "stored_episode",
    "to_node",
    "unpack",
]

# ASCII's unit separator, a control character no printable id holds: one column packs a
# list of ids with it.
_SEP = "\x1f"

#: The SQL of the ``sources`` column of an ``items`` query whose table is aliased ``i``: the
#: ids of the item's source episodes, packed into one text (read it with :func:`unpack`).
SOURCES_COLUMN = (
    f"(SELECT group_concat(episode_id, char({ord(_SEP)})) FROM item_sources x "
    " WHERE x.user=i.user AND x.agent=i.agent AND x.item_id=i.id) AS sources"
)

#: The columns :func:`item_values` gives values for, in its order.
ITEM_COLUMNS = (
    "id, kind, user, agent, session, text, norm, credibility, valid_from, valid_to, "
    "superseded_by, origin, subgoal_id, steps, insight, outcome, event_dates, created_at"
)


@dataclass
class ItemRow:
    """One fact or procedure as stored."""

    id: str
    kind: str
    session: str
    text: str
    norm: str
    credibility: float = 1.0
    valid_from: str | None = None
    valid_to: str | None = None
    superseded_by: str | None = None
    origin: str = "offline"
    subgoal_id: str | None = None
    steps: list[str] | None = None
    insight: str | None = None
    outcome: float | None = None
    event_dates: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    created_at: float = 0.0
    subgoal_text: str | None = None
    # Words of the neighbouring turns, searched (BM25) with the item but never returned as its
    # text: a reply ("5 years already!") is found by the question it answers. The episodes
    # they came from are in item_context, so forgetting one takes its words out again.
    context: str = ""
    context_sources: list[str] = field(default_factory=list)


def item_values(ns: Namespace, row: ItemRow) -> tuple[Any, ...]:
    """The values of :data:`ITEM_COLUMNS` for ``row`` in ``ns`` (lists as JSON)."""
    return (
        row.id,
        row.kind,
        ns.user,
        ns.agent,
        row.session,
        row.text,
        row.norm,
        row.credibility,
        row.valid_from,
        row.valid_to,
        row.superseded_by,
        row.origin,
        row.subgoal_id,
        json.dumps(row.steps) if row.steps is not None else None,
        row.insight,
        row.outcome,
        json.dumps(row.event_dates),
        row.created_at or time.time(),
    )


def chunks(ids: Sequence[str], n: int = 500) -> Iterator[Sequence[str]]:
    """``ids`` in runs of at most ``n``: one ``IN (...)`` list each, within SQLite's limit on
    the parameters of one statement."""
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


def unpack(packed: str | None) -> tuple[str, ...]:
    """The ids packed into one column (:data:`SOURCES_COLUMN`); none for an empty one.

    >>> unpack(None), unpack("")
    ((), ())
    """
    return tuple(packed.split(_SEP)) if packed else ()


def stored_episode(r: sqlite3.Row) -> StoredEpisode:
    """An ``episodes`` row as extractors read it."""
    return StoredEpisode(
        id=r["id"],
        session=r["session"],
        kind=r["kind"],
        speaker=r["speaker"],
        content=r["content"],
        timestamp=datetime.fromisoformat(r["ts"]) if r["ts"] else None,
        subgoal=r["subgoal"],
        outcome=r["outcome"],
        meta=json.loads(r["meta"] or "{}"),
    )


def to_node(r: sqlite3.Row, terms_by_id: Mapping[str, list[tuple[str, str]]]) -> Fact | Procedure:
    """An ``items`` row (with its ``subgoal`` and :data:`SOURCES_COLUMN`) as users see it;
    a fact's tags and entities come from ``terms_by_id`` (item id -> (term, kind) pairs)."""
    sources = unpack(r["sources"])
    if r["kind"] == "procedure":
        return Procedure(
            id=r["id"],
            subgoal_id=r["subgoal_id"],
            subgoal=r["subgoal"] or "",
            steps=tuple(json.loads(r["steps"] or "[]")),
            insight=r["insight"] or "",
            outcome=r["outcome"],
            session=r["session"],
            sources=sources,
            origin=r["origin"],
        )
    tv = terms_by_id.get(r["id"], [])
    return Fact(
        id=r["id"],
        statement=r["text"],
        session=r["session"],
        tags=tuple(t for t, k in tv if k == "tag"),
        entities=tuple(t for t, k in tv if k == "entity" and not t.startswith("claim:")),
        credibility=r["credibility"],
        valid_from=datetime.fromisoformat(r["valid_from"]) if r["valid_from"] else None,
        valid_to=datetime.fromisoformat(r["valid_to"]) if r["valid_to"] else None,
        superseded_by=r["superseded_by"],
        sources=sources,
        origin=r["origin"],
    )
