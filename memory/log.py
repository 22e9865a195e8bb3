"""The SQLite log: the memory's source of truth.

One file in WAL mode with ``synchronous=FULL``: a write that returned is on disk, whatever
happens to the process next. Every query names the namespace (user, agent, and the session
when the namespace has one) in its ``WHERE`` clause; no method takes an id alone.

Tables: ``episodes``; ``items`` (facts and procedures); ``item_sources`` (item -> episode, the
provenance edges); ``item_context`` (the episodes whose words an item is also searched by);
``item_terms`` (tags and entities: the entity graph's edges); ``entities`` (the graph's
nodes, one per normalised name or tag, with its kind and fact count, kept by triggers on
``item_terms``; see :mod:`~lemmata.memory.graph`; a schema-1 file gains it on first open);
``subgoals``; ``items_fts`` (FTS5 with the
Porter stemmer, BM25-ranked); ``audit``; ``meta``; ``documents``; ``segment_retries`` (a
session whose pending episodes an extractor failed on: which, how often in a row, the last
error, and when that extractor is due to try again; another extractor need not wait).
``items.indexed`` says whether the vector index has the item, so an index that fell behind (a
crash between the two writes) is caught up on the next open.

``documents`` holds the key-value documents of :class:`~lemmata.memory.store.PlugMemStore`
(LangGraph's store): ``ns`` is the whole LangGraph namespace with its labels joined by ``.``
(a label never holds one), ``user``/``agent``/``session`` its first three labels as a PlugMem
namespace, ``value`` JSON, ``vectors`` the float32 embeddings of its indexed texts (one row
each, from the ``paths`` given at put time) tagged with the ``embedder`` that made them. The
store module owns its queries; they name ``user`` and ``agent`` as far as the LangGraph
namespace or search prefix reaches (an unpinned store's search of every namespace, which
LangGraph's API allows, names neither).

=================  =========  ==============================================================
class              code       raised when
=================  =========  ==============================================================
``StoreError``     ``store``  the memory's file cannot be used as it is (corrupt, written by a
                              newer schema) or a batch repeats a stored episode id
=================  =========  ==============================================================
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lemmata.errors import LemmataError
from lemmata.memory.graph import (
    GRAPH_TERM_SQL,
    classify_entity,
    entity_key,
    graph_term,
    set_kinds,
)
from lemmata.memory.text import entities
from lemmata.memory.types import AuditEntry, Episode, Namespace

__all__ = ["ItemRow", "MemoryLog", "StoreError"]

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    id TEXT NOT NULL, user TEXT NOT NULL, agent TEXT NOT NULL, session TEXT NOT NULL,
    kind TEXT NOT NULL, speaker TEXT, content TEXT NOT NULL, ts TEXT, subgoal TEXT,
    outcome REAL, meta TEXT NOT NULL DEFAULT '{}', structured INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    PRIMARY KEY (user, agent, id)
);
CREATE INDEX IF NOT EXISTS episodes_pending ON episodes (user, agent, structured, session);
CREATE TABLE IF NOT EXISTS segment_retries (
    user TEXT NOT NULL, agent TEXT NOT NULL, session TEXT NOT NULL,
    extractor TEXT NOT NULL, attempts INTEGER NOT NULL, retry_at REAL NOT NULL,
    error TEXT NOT NULL, PRIMARY KEY (user, agent, session)
);
CREATE INDEX IF NOT EXISTS episodes_session ON episodes (user, agent, session);
CREATE INDEX IF NOT EXISTS episodes_speaker ON episodes (user, agent, speaker COLLATE NOCASE);
CREATE TABLE IF NOT EXISTS items (
    id TEXT NOT NULL, kind TEXT NOT NULL, user TEXT NOT NULL, agent TEXT NOT NULL,
    session TEXT NOT NULL, text TEXT NOT NULL, norm TEXT NOT NULL, credibility REAL NOT NULL,
    valid_from TEXT, valid_to TEXT, superseded_by TEXT, origin TEXT NOT NULL,
    subgoal_id TEXT, steps TEXT, insight TEXT, outcome REAL, event_dates TEXT,
    created_at REAL NOT NULL, indexed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user, agent, id)
);
CREATE INDEX IF NOT EXISTS items_norm ON items (user, agent, norm);
CREATE INDEX IF NOT EXISTS items_unindexed ON items (indexed) WHERE indexed = 0;
CREATE INDEX IF NOT EXISTS items_subgoal ON items (user, agent, subgoal_id);
CREATE TABLE IF NOT EXISTS item_sources (
    user TEXT NOT NULL, agent TEXT NOT NULL, item_id TEXT NOT NULL, episode_id TEXT NOT NULL,
    PRIMARY KEY (user, agent, item_id, episode_id)
);
CREATE INDEX IF NOT EXISTS item_sources_episode ON item_sources (user, agent, episode_id);
CREATE TABLE IF NOT EXISTS item_terms (
    user TEXT NOT NULL, agent TEXT NOT NULL, term TEXT NOT NULL, item_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (user, agent, term, item_id)
);
CREATE INDEX IF NOT EXISTS item_terms_item ON item_terms (user, agent, item_id);
CREATE TABLE IF NOT EXISTS subgoals (
    id TEXT NOT NULL, user TEXT NOT NULL, agent TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (user, agent, id)
);
CREATE TABLE IF NOT EXISTS item_context (
    user TEXT NOT NULL, agent TEXT NOT NULL, item_id TEXT NOT NULL, episode_id TEXT NOT NULL,
    PRIMARY KEY (user, agent, item_id, episode_id)
);
CREATE INDEX IF NOT EXISTS item_context_episode ON item_context (user, agent, episode_id);
CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5(
    text, item_id UNINDEXED, tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, user TEXT NOT NULL,
    agent TEXT NOT NULL, op TEXT NOT NULL, item_id TEXT, detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_ns ON audit (user, agent, seq);
CREATE TABLE IF NOT EXISTS item_counts (
    user TEXT NOT NULL, agent TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (user, agent)
);
CREATE TRIGGER IF NOT EXISTS item_counts_add AFTER INSERT ON items BEGIN
    INSERT INTO item_counts (user, agent, n) VALUES (NEW.user, NEW.agent, 1)
    ON CONFLICT (user, agent) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS item_counts_remove AFTER DELETE ON items BEGIN
    UPDATE item_counts SET n = n - 1 WHERE user = OLD.user AND agent = OLD.agent;
END;
CREATE TABLE IF NOT EXISTS entities (
    user TEXT NOT NULL, agent TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL,
    items INTEGER NOT NULL, PRIMARY KEY (user, agent, id)
);
CREATE TRIGGER IF NOT EXISTS entities_link AFTER INSERT ON item_terms
WHEN {new_term} BEGIN
    INSERT INTO entities (user, agent, id, kind, items) VALUES (NEW.user, NEW.agent, NEW.term,
        CASE NEW.kind WHEN 'entity' THEN 'object' ELSE 'concept' END, 1)
    ON CONFLICT (user, agent, id) DO UPDATE SET items = items + 1;
END;
CREATE TRIGGER IF NOT EXISTS entities_unlink AFTER DELETE ON item_terms
WHEN {old_term} BEGIN
    UPDATE entities SET items = items - 1
    WHERE user = OLD.user AND agent = OLD.agent AND id = OLD.term;
    DELETE FROM entities
    WHERE user = OLD.user AND agent = OLD.agent AND id = OLD.term AND items <= 0;
END;
CREATE TABLE IF NOT EXISTS documents (
    user TEXT NOT NULL, agent TEXT NOT NULL, session TEXT, ns TEXT NOT NULL, key TEXT NOT NULL,
    value TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    ttl REAL, expires_at REAL, paths TEXT, embedder TEXT, vectors BLOB,
    PRIMARY KEY (user, agent, ns, key)
);
CREATE INDEX IF NOT EXISTS documents_expiry ON documents (user, agent, expires_at)
    WHERE expires_at IS NOT NULL;
""".replace("{new_term}", GRAPH_TERM_SQL.format(t="NEW.term")).replace(
    "{old_term}", GRAPH_TERM_SQL.format(t="OLD.term")
)


class StoreError(LemmataError):
    """The memory's file cannot be used as it is (corrupt, newer schema, a duplicate id)."""

    code = "store"


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


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _chunks(seq: Sequence[str], n: int = 500) -> Iterator[Sequence[str]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


class MemoryLog:
    """The SQLite file behind one :class:`~lemmata.memory.Memory` (any number of namespaces)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            had_counts = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'item_counts'"
            ).fetchone()
            had_entities = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'entities'"
            ).fetchone()
            self._db.executescript(_SCHEMA)
            if not had_counts:  # a file from before the counts table: count once
                self._db.execute(
                    "INSERT OR REPLACE INTO item_counts (user, agent, n) "
                    "SELECT user, agent, count(*) FROM items GROUP BY user, agent"
                )
            version = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path} is not a usable memory file ({exc}); move it aside or give another path"
            ) from exc
        if version is None:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
        elif int(version[0]) > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer Lemmata (schema {version[0]}); upgrade lemmata"
            )
        self._lock = threading.RLock()
        if not had_entities:  # a file from schema 1: the graph's nodes from its stored edges
            self._link_entities()
        if version is not None and int(version[0]) < SCHEMA_VERSION:
            self.set_meta("schema", str(SCHEMA_VERSION))

    def _link_entities(self) -> None:
        """Build ``entities`` from the ``item_terms`` already stored (once, when a schema-1
        file is first opened): one node per term with its fact count, then the named ones'
        kinds from a fact that mentions them and the speakers of their (user, agent) pair."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO entities (user, agent, id, kind, items) "
                "SELECT user, agent, term, CASE WHEN max(kind = 'entity') THEN 'object' "
                "ELSE 'concept' END, count(*) FROM item_terms "
                f"WHERE {GRAPH_TERM_SQL.format(t='term')} GROUP BY user, agent, term"
            )
            # the named things among them, found again in the facts' text (a name may have
            # been stored as a tag), each with the first fact that mentions it
            named: dict[tuple[str, str], dict[str, str]] = {}
            for user, agent, text in db.execute("SELECT user, agent, text FROM items"):
                mentions = named.setdefault((user, agent), {})
                for name in entities(text):
                    key = entity_key(name)
                    if key and graph_term(key):
                        mentions.setdefault(key, text)
            for (user, agent), mentions in named.items():
                people = [
                    str(r[0]).lower()
                    for r in db.execute(
                        "SELECT DISTINCT speaker FROM episodes WHERE user=? AND agent=? "
                        "AND speaker IS NOT NULL",
                        (user, agent),
                    )
                ]
                kinds = {key: classify_entity(key, text, people) for key, text in mentions.items()}
                set_kinds(db, Namespace(user=user, agent=agent, session=None), kinds)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def integrity(self) -> str:
        """SQLite's own check of the file: ``"ok"``, or what is damaged."""
        rows = self._read("PRAGMA integrity_check")
        return "; ".join(str(r[0]) for r in rows)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: all of it or none of it."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def read(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run one read query under the log's lock: for a module that owns a table of this
        file (the LangGraph store's ``documents``); its writes go through :meth:`transaction`."""
        return self._read(sql, args)

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchall()

    @staticmethod
    def _scope(ns: Namespace, alias: str = "") -> tuple[str, list[Any]]:
        p = f"{alias}." if alias else ""
        sql = f"{p}user = ? AND {p}agent = ?"
        args: list[Any] = [ns.user, ns.agent]
        if ns.session is not None:
            sql += f" AND {p}session = ?"
            args.append(ns.session)
        return sql, args

    # -- meta ---------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- episodes -----------------------------------------------------------------------

    def add_episodes(self, ns: Namespace, episodes: Sequence[Episode], ids: Sequence[str]) -> None:
        """Append episodes in one transaction; a duplicate id refuses the whole batch."""
        now = time.time()
        rows = [
            (
                eid,
                ns.user,
                ns.agent,
                ep.session or ns.session or "default",
                ep.kind,
                ep.speaker,
                ep.content,
                _iso(ep.timestamp),
                ep.subgoal,
                ep.outcome,
                json.dumps(ep.meta, default=str),
                now,
            )
            for ep, eid in zip(episodes, ids, strict=True)
        ]
        try:
            with self.transaction() as db:
                db.executemany(
                    "INSERT INTO episodes (id, user, agent, session, kind, speaker, content, ts, "
                    "subgoal, outcome, meta, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
                self._audit(db, ns, "add_episodes", None, {"n": len(rows), "first": ids[0]})
        except sqlite3.IntegrityError as exc:
            taken = self._existing_episode_ids(ns, ids)
            which = ", ".join(taken[:3]) or "(repeated within the batch)"
            raise StoreError(
                f"episode id already stored: {which}; nothing from this batch was written"
            ) from exc

    def _existing_episode_ids(self, ns: Namespace, ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            out += [
                r[0]
                for r in self._read(
                    f"SELECT id FROM episodes WHERE user=? AND agent=? AND id IN ({marks})",
                    [ns.user, ns.agent, *chunk],
                )
            ]
        return out

    def episodes(
        self,
        ns: Namespace,
        *,
        ids: Sequence[str] | None = None,
        pending: bool | None = None,
        limit: int | None = None,
    ) -> list[sqlite3.Row]:
        scope, args = self._scope(ns)
        sql = f"SELECT rowid, * FROM episodes WHERE {scope}"
        if pending is not None:
            sql += " AND structured = ?"
            args.append(0 if pending else 1)
        if ids is not None:
            out: list[sqlite3.Row] = []
            for chunk in _chunks(list(ids)):
                marks = ",".join("?" * len(chunk))
                out += self._read(sql + f" AND id IN ({marks}) ORDER BY rowid", [*args, *chunk])
            return out
        sql += " ORDER BY rowid"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._read(sql, args)

    def mark_structured(self, db: sqlite3.Connection, ns: Namespace, ids: Sequence[str]) -> None:
        """Mark episodes structured; a session of theirs that was backing off is due no more."""
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            db.execute(
                "DELETE FROM segment_retries WHERE user=? AND agent=? AND session IN "
                f"(SELECT session FROM episodes WHERE user=? AND agent=? AND id IN ({marks}))",
                [ns.user, ns.agent, ns.user, ns.agent, *chunk],
            )
            db.execute(
                f"UPDATE episodes SET structured = 1 WHERE user=? AND agent=? AND id IN ({marks})",
                [ns.user, ns.agent, *chunk],
            )

    def pending_count(self, ns: Namespace) -> int:
        """Episodes not yet structured (one query on the ``episodes_pending`` index)."""
        scope, args = self._scope(ns)
        rows = self._read(f"SELECT count(*) FROM episodes WHERE {scope} AND structured = 0", args)
        return int(rows[0][0])

    def has_due(self, ns: Namespace, now: float, extractor: str) -> bool:
        """Whether an episode is pending in a session that ``extractor`` is not backing off
        from after a failure: one query, on the ``episodes_pending`` index and the retries'
        key."""
        scope, args = self._scope(ns, "e")
        sql = (
            f"SELECT 1 FROM episodes AS e WHERE {scope} AND e.structured = 0 AND NOT EXISTS "
            "(SELECT 1 FROM segment_retries AS r WHERE r.user = e.user AND r.agent = e.agent "
            "AND r.session = e.session AND r.extractor = ? AND r.retry_at > ?) LIMIT 1"
        )
        return bool(self._read(sql, [*args, extractor, now]))

    def retries(self, ns: Namespace) -> dict[str, sqlite3.Row]:
        """The sessions of the namespace backing off after a failed structuring, by session."""
        scope, args = self._scope(ns)
        rows = self._read(
            f"SELECT session, extractor, attempts, retry_at, error FROM segment_retries "
            f"WHERE {scope}",
            args,
        )
        return {r["session"]: r for r in rows}

    def record_failure(
        self,
        ns: Namespace,
        session: str,
        extractor: str,
        error: str,
        now: float,
        delays: Sequence[float],
    ) -> int:
        """Count one failed structuring of ``session``'s pending episodes by ``extractor`` and
        set when it is due again: ``delays[n - 1]`` seconds after the ``n``-th failure in a
        row (the last delay repeats). Returns ``n``."""
        with self.transaction() as db:
            row = db.execute(
                "SELECT attempts, extractor FROM segment_retries "
                "WHERE user=? AND agent=? AND session=?",
                (ns.user, ns.agent, session),
            ).fetchone()
            attempts = (int(row[0]) if row and row[1] == extractor else 0) + 1
            delay = delays[min(attempts, len(delays)) - 1]
            db.execute(
                "INSERT OR REPLACE INTO segment_retries "
                "(user, agent, session, extractor, attempts, retry_at, error) "
                "VALUES (?,?,?,?,?,?,?)",
                (ns.user, ns.agent, session, extractor, attempts, now + delay, error),
            )
            self._audit(
                db,
                ns,
                "consolidate_failed",
                None,
                {
                    "session": session,
                    "extractor": extractor,
                    "attempts": attempts,
                    "retry_in_s": delay,
                    "error": error,
                },
            )
        return attempts

    # -- items --------------------------------------------------------------------------

    def insert_item(self, db: sqlite3.Connection, ns: Namespace, row: ItemRow) -> bool:
        """Insert one item with its edges and terms; False when its id is already there."""
        cur = db.execute(
            "INSERT OR IGNORE INTO items (id, kind, user, agent, session, text, norm, credibility, "
            "valid_from, valid_to, superseded_by, origin, subgoal_id, steps, insight, outcome, "
            "event_dates, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
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
            ),
        )
        if cur.rowcount == 0:
            return False
        rowid = db.execute(
            "SELECT rowid FROM items WHERE user=? AND agent=? AND id=?", (ns.user, ns.agent, row.id)
        ).fetchone()[0]
        db.execute(
            "INSERT INTO items_fts (rowid, text, item_id) VALUES (?, ?, ?)",
            (rowid, f"{row.text} {row.context}" if row.context else row.text, row.id),
        )
        if row.context:
            db.executemany(
                "INSERT OR IGNORE INTO item_context (user, agent, item_id, episode_id) "
                "VALUES (?,?,?,?)",
                [(ns.user, ns.agent, row.id, e) for e in row.context_sources],
            )
        self.add_sources(db, ns, row.id, row.sources)
        # named things go in by their normalised key, so that every mention is one node
        named = list(
            dict.fromkeys(entity_key(e) if graph_term(e) else e for e in row.entities if e.strip())
        )
        db.executemany(
            "INSERT OR IGNORE INTO item_terms (user, agent, term, item_id, kind) VALUES (?,?,?,?,?)",
            [(ns.user, ns.agent, t, row.id, "tag") for t in row.tags]
            + [(ns.user, ns.agent, e, row.id, "entity") for e in named if e],
        )
        nodes = [e for e in named if e and graph_term(e)]
        if nodes:
            people = self.speakers_named(ns, nodes)
            set_kinds(db, ns, {e: classify_entity(e, row.text, people) for e in nodes})
        return True

    def add_sources(
        self, db: sqlite3.Connection, ns: Namespace, item_id: str, episode_ids: Iterable[str]
    ) -> None:
        db.executemany(
            "INSERT OR IGNORE INTO item_sources (user, agent, item_id, episode_id) VALUES (?,?,?,?)",
            [(ns.user, ns.agent, item_id, e) for e in episode_ids],
        )

    def ensure_subgoal(self, db: sqlite3.Connection, ns: Namespace, sid: str, text: str) -> None:
        db.execute(
            "INSERT OR IGNORE INTO subgoals (id, user, agent, text) VALUES (?,?,?,?)",
            (sid, ns.user, ns.agent, text),
        )

    def items(
        self,
        ns: Namespace,
        ids: Sequence[str] | None = None,
        *,
        kind: str | None = None,
        current_only: bool = False,
        limit: int | None = None,
    ) -> list[sqlite3.Row]:
        """Items of the namespace (all, or those among ``ids``), in insertion order."""
        scope, args = self._scope(ns, "i")
        sql = (
            "SELECT i.rowid, i.*, s.text AS subgoal, "
            "(SELECT group_concat(episode_id, char(31)) FROM item_sources x "
            " WHERE x.user=i.user AND x.agent=i.agent AND x.item_id=i.id) AS sources "
            f"FROM items i LEFT JOIN subgoals s ON s.user=i.user AND s.agent=i.agent "
            f"AND s.id=i.subgoal_id WHERE {scope}"
        )
        if kind is not None:
            sql += " AND i.kind = ?"
            args.append(kind)
        if current_only:
            sql += " AND i.valid_to IS NULL"
        if ids is None:
            sql += " ORDER BY i.rowid"
            if limit is not None:
                sql += f" LIMIT {int(limit)}"
            return self._read(sql, args)
        out: list[sqlite3.Row] = []
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            out += self._read(sql + f" AND i.id IN ({marks})", [*args, *chunk])
        return out

    def terms_of(self, ns: Namespace, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        out: dict[str, list[tuple[str, str]]] = {}
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            for r in self._read(
                f"SELECT item_id, term, kind FROM item_terms WHERE user=? AND agent=? "
                f"AND item_id IN ({marks})",
                [ns.user, ns.agent, *chunk],
            ):
                out.setdefault(r[0], []).append((r[1], r[2]))
        return out

    def by_norm(self, ns: Namespace, norm: str) -> list[sqlite3.Row]:
        scope, args = self._scope(ns)
        return self._read(f"SELECT * FROM items WHERE {scope} AND norm = ?", [*args, norm])

    def close_item(
        self,
        db: sqlite3.Connection,
        ns: Namespace,
        item_id: str,
        valid_to: str,
        superseded_by: str | None,
    ) -> None:
        db.execute(
            "UPDATE items SET valid_to = ?, superseded_by = ? WHERE user=? AND agent=? AND id=?",
            (valid_to, superseded_by, ns.user, ns.agent, item_id),
        )

    def raise_credibility(
        self, db: sqlite3.Connection, ns: Namespace, item_id: str, credibility: float
    ) -> None:
        db.execute(
            "UPDATE items SET credibility = MAX(credibility, ?) WHERE user=? AND agent=? AND id=?",
            (credibility, ns.user, ns.agent, item_id),
        )

    def delete_items(self, db: sqlite3.Connection, ns: Namespace, ids: Sequence[str]) -> int:
        n = 0
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            args = [ns.user, ns.agent, *chunk]
            db.execute(
                f"DELETE FROM items_fts WHERE rowid IN (SELECT rowid FROM items "
                f"WHERE user=? AND agent=? AND id IN ({marks}))",
                args,
            )
            db.execute(
                f"DELETE FROM item_sources WHERE user=? AND agent=? AND item_id IN ({marks})", args
            )
            db.execute(
                f"DELETE FROM item_context WHERE user=? AND agent=? AND item_id IN ({marks})", args
            )
            db.execute(
                f"DELETE FROM item_terms WHERE user=? AND agent=? AND item_id IN ({marks})", args
            )
            db.execute(
                f"UPDATE items SET superseded_by = NULL WHERE user=? AND agent=? "
                f"AND superseded_by IN ({marks})",
                args,
            )
            n += db.execute(
                f"DELETE FROM items WHERE user=? AND agent=? AND id IN ({marks})", args
            ).rowcount
        return n

    def delete_episodes(self, db: sqlite3.Connection, ns: Namespace, ids: Sequence[str]) -> int:
        n = 0
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            args = [ns.user, ns.agent, *chunk]
            db.execute(
                f"DELETE FROM item_sources WHERE user=? AND agent=? AND episode_id IN ({marks})",
                args,
            )
            # items searched with the words of a forgotten turn are searched by their own again
            touched = [
                r[0]
                for r in db.execute(
                    f"SELECT DISTINCT item_id FROM item_context WHERE user=? AND agent=? "
                    f"AND episode_id IN ({marks})",
                    args,
                )
            ]
            for item_id in touched:
                found = db.execute(
                    "SELECT rowid, text FROM items WHERE user=? AND agent=? AND id=?",
                    (ns.user, ns.agent, item_id),
                ).fetchone()
                if found is not None:
                    db.execute("DELETE FROM items_fts WHERE rowid = ?", (found[0],))
                    db.execute(
                        "INSERT INTO items_fts (rowid, text, item_id) VALUES (?, ?, ?)",
                        (found[0], found[1], item_id),
                    )
                db.execute(
                    "DELETE FROM item_context WHERE user=? AND agent=? AND item_id=?",
                    (ns.user, ns.agent, item_id),
                )
            n += db.execute(
                f"DELETE FROM episodes WHERE user=? AND agent=? AND id IN ({marks})", args
            ).rowcount
        return n

    def items_of_episodes(self, ns: Namespace, episode_ids: Sequence[str]) -> dict[str, list[str]]:
        """item id -> its source episodes among ``episode_ids``."""
        out: dict[str, list[str]] = {}
        for chunk in _chunks(list(episode_ids)):
            marks = ",".join("?" * len(chunk))
            for r in self._read(
                f"SELECT item_id, episode_id FROM item_sources WHERE user=? AND agent=? "
                f"AND episode_id IN ({marks})",
                [ns.user, ns.agent, *chunk],
            ):
                out.setdefault(r[0], []).append(r[1])
        return out

    def orphans(self, db: sqlite3.Connection, ns: Namespace, ids: Sequence[str]) -> list[str]:
        """Among ``ids``, the items left with no source episode (that had sources before)."""
        out: list[str] = []
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            out += [
                r[0]
                for r in db.execute(
                    f"SELECT id FROM items i WHERE user=? AND agent=? AND id IN ({marks}) AND NOT "
                    "EXISTS (SELECT 1 FROM item_sources x WHERE x.user=i.user AND x.agent=i.agent "
                    "AND x.item_id=i.id)",
                    [ns.user, ns.agent, *chunk],
                ).fetchall()
            ]
        return out

    # -- retrieval channels -------------------------------------------------------------

    def search_text(
        self, ns: Namespace, words: Sequence[str], limit: int, *, max_postings: int = 2000
    ) -> list[tuple[str, float]]:
        """BM25 over the FTS5 index, best first, within the namespace.

        Ranking scores every document a word occurs in, so the words go in rarest first
        within a budget of postings (a word's postings are counted up to the budget, which
        is cheap). When frequent words are left out, the items holding *all* the words come
        first (FTS5 intersects posting lists without scoring them), then the best of the words
        within the budget: the cost stays bounded at any size, and a query whose words are each
        common but together specific still finds its item. Only when every word is over the
        budget and no item holds them all is the rarest word ranked on its own.
        """
        if not words:
            return []
        # (postings, place in the query, word): equally frequent words (all counts stop at
        # the budget) go in the order the query gives them
        counted: list[tuple[int, int, str]] = []
        try:
            for w in words:
                n = self._read(
                    "SELECT count(*) FROM (SELECT rowid FROM items_fts WHERE items_fts MATCH ? "
                    "LIMIT ?)",
                    [f'"{w}"', max_postings + 1],
                )[0][0]
                if n:
                    counted.append((int(n), len(counted), w))
            if not counted:
                return []
            chosen: list[str] = []
            postings = 0
            for n, _, w in sorted(counted):
                if postings + n > max_postings:
                    break
                chosen.append(w)
                postings += n
            ranked = []
            if len(chosen) < len(counted):
                every = " AND ".join(f'"{w}"' for _, _, w in counted)
                ranked = self._rank_text(ns, every, limit)
            if chosen:
                ranked += self._rank_text(ns, " OR ".join(f'"{w}"' for w in chosen), limit)
            elif not ranked:
                # every word is frequent and no item holds them all: the rarest word's best,
                # the one case that scores more than the budget
                ranked = self._rank_text(ns, f'"{min(counted)[2]}"', limit)
        except sqlite3.OperationalError:
            return []
        out: dict[str, float] = {}
        for item_id, score in ranked:
            out.setdefault(item_id, score)
        return list(out.items())[:limit]

    def _rank_text(self, ns: Namespace, match: str, limit: int) -> list[tuple[str, float]]:
        scope, args = self._scope(ns, "i")
        # FTS5 ranks its own matches fast (ORDER BY rank LIMIT); joining every match to the
        # items table first is what grows with the memory. So rank a generous head, keep the
        # namespace's share of it, and only when that share falls short (other namespaces fill
        # the head) rank with the join, which is exact.
        head = 8 * limit
        rows = self._read(
            "SELECT i.id, h.score FROM (SELECT rowid, rank AS score FROM items_fts "
            "WHERE items_fts MATCH ? ORDER BY rank LIMIT ?) h JOIN items i "
            f"ON i.rowid = h.rowid WHERE {scope} ORDER BY h.score LIMIT ?",
            [match, head, *args, limit],
        )
        if len(rows) < limit:
            total = self._read(
                "SELECT count(*) FROM (SELECT rowid FROM items_fts WHERE items_fts MATCH ? "
                "LIMIT ?)",
                [match, head],
            )[0][0]
            if total >= head:
                rows = self._read(
                    "SELECT i.id, bm25(items_fts) AS score FROM items_fts JOIN items i "
                    f"ON i.rowid = items_fts.rowid WHERE items_fts MATCH ? AND {scope} "
                    "ORDER BY score LIMIT ?",
                    [match, *args, limit],
                )
        return [(r[0], -float(r[1])) for r in rows]

    def search_terms(
        self,
        ns: Namespace,
        terms: Sequence[str],
        limit: int,
        *,
        max_df: int,
        max_postings: int = 1000,
    ) -> list[tuple[str, float]]:
        """Items sharing tags or entities with the query, weighted by rarity (IDF).

        Terms on more than ``max_df`` items, or more than ``max_postings``, are left out: they
        do not discriminate at retrieval depth, and their posting lists are what would make
        this slow. The rest go in rarest first within ``max_postings`` postings, so the cost
        stays bounded however large the memory grows. Frequencies are counted up to the cap.
        """
        if not terms:
            return []
        cap = min(max_df, max_postings)
        df: dict[str, int] = {}
        for t in dict.fromkeys(terms):
            n = self._read(
                "SELECT count(*) FROM (SELECT 1 FROM item_terms WHERE user=? AND agent=? "
                "AND term=? LIMIT ?)",
                [ns.user, ns.agent, t, cap + 1],
            )[0][0]
            if 0 < n <= cap:
                df[t] = int(n)
        use: list[str] = []
        postings = 0
        for t in sorted(df, key=lambda t: df[t]):
            if postings + df[t] > max_postings:
                break
            use.append(t)
            postings += df[t]
        if not use:
            return []
        import math

        weights = {t: 1.0 / math.log(2 + df[t]) for t in use}
        scores: dict[str, float] = {}
        marks = ",".join("?" * len(use))
        sess = " AND i.session = ?" if ns.session else ""
        for r in self._read(
            f"SELECT t.item_id, t.term FROM item_terms t JOIN items i ON i.user=t.user AND "
            f"i.agent=t.agent AND i.id=t.item_id WHERE t.user=? AND t.agent=? "
            f"AND t.term IN ({marks}){sess}",
            [ns.user, ns.agent, *use, *([ns.session] if ns.session else [])],
        ):
            scores[r[0]] = scores.get(r[0], 0.0) + weights[r[1]]
        return sorted(scores.items(), key=lambda kv: -kv[1])[:limit]

    def siblings(self, ns: Namespace, item_ids: Sequence[str], limit: int) -> list[tuple[str, str]]:
        """(sibling, seed) pairs: items that share a source episode with a seed item."""
        return self._hop(
            ns,
            item_ids,
            limit,
            "JOIN item_sources b ON b.user=a.user AND b.agent=a.agent "
            "AND b.episode_id=a.episode_id AND b.item_id != a.item_id",
        )

    def adjacent(self, ns: Namespace, item_ids: Sequence[str], limit: int) -> list[tuple[str, str]]:
        """(neighbour, seed) pairs: items derived from the turns just before and after a seed's
        source episodes in the same session (an answer often spans a turn and its reply)."""
        return self._hop(
            ns,
            item_ids,
            limit,
            "JOIN episodes e ON e.user=a.user AND e.agent=a.agent AND e.id=a.episode_id "
            "JOIN episodes n ON n.user=e.user AND n.agent=e.agent AND n.session=e.session "
            "AND n.rowid BETWEEN e.rowid - 1 AND e.rowid + 1 AND n.rowid != e.rowid "
            "JOIN item_sources b ON b.user=n.user AND b.agent=n.agent AND b.episode_id=n.id",
        )

    def _hop(
        self, ns: Namespace, item_ids: Sequence[str], limit: int, joins: str
    ) -> list[tuple[str, str]]:
        """(reached item ``b``, seed ``a``) pairs along ``joins`` from the seeds' sources,
        within the namespace."""
        if not item_ids:
            return []
        marks = ",".join("?" * len(item_ids))
        scope, args = self._scope(ns, "i")
        return [
            (r[0], r[1])
            for r in self._read(
                f"SELECT DISTINCT b.item_id, a.item_id FROM item_sources a {joins} "
                "JOIN items i ON i.user=b.user AND i.agent=b.agent AND i.id=b.item_id "
                f"WHERE a.user=? AND a.agent=? AND a.item_id IN ({marks}) AND {scope} LIMIT ?",
                [ns.user, ns.agent, *item_ids, *args, limit],
            )
        ]

    def procedures_under(self, ns: Namespace, subgoal_ids: Sequence[str]) -> list[str]:
        if not subgoal_ids:
            return []
        marks = ",".join("?" * len(subgoal_ids))
        scope, args = self._scope(ns)
        return [
            r[0]
            for r in self._read(
                f"SELECT id FROM items WHERE {scope} AND kind='procedure' AND subgoal_id IN ({marks}) "
                "ORDER BY COALESCE(outcome, 0) DESC",
                [*args, *subgoal_ids],
            )
        ]

    # -- index bookkeeping --------------------------------------------------------------

    def unindexed(self, ns: Namespace, limit: int = 10_000) -> list[sqlite3.Row]:
        return self._read(
            "SELECT id, session, kind, text FROM items WHERE indexed = 0 AND user=? AND agent=? "
            "LIMIT ?",
            (ns.user, ns.agent, limit),
        )

    def items_with_term(self, ns: Namespace, term: str, limit: int = 50) -> list[str]:
        scope, args = self._scope(ns, "i")
        return [
            r[0]
            for r in self._read(
                "SELECT t.item_id FROM item_terms t JOIN items i ON i.user=t.user AND "
                f"i.agent=t.agent AND i.id=t.item_id WHERE t.user=? AND t.agent=? AND t.term=? "
                f"AND i.valid_to IS NULL AND {scope} LIMIT ?",
                [ns.user, ns.agent, term, *args, limit],
            )
        ]

    def mark_indexed(self, ns: Namespace, ids: Sequence[str]) -> None:
        with self.transaction() as db:
            db.executemany(
                "UPDATE items SET indexed = 1 WHERE user=? AND agent=? AND id=?",
                [(ns.user, ns.agent, i) for i in ids],
            )

    def mark_all_unindexed(self, ns: Namespace | None) -> None:
        with self.transaction() as db:
            if ns is None:
                db.execute("UPDATE items SET indexed = 0")
            else:
                db.execute(
                    "UPDATE items SET indexed = 0 WHERE user=? AND agent=?", (ns.user, ns.agent)
                )

    def spaces(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._read("SELECT DISTINCT user, agent FROM items")]

    def speakers_named(self, ns: Namespace, names: Sequence[str]) -> list[str]:
        """Which of ``names`` (any case) speak in the (user, agent) pair's episodes, as stored.

        An index lookup per name, so asking costs the same at any size."""
        if not names:
            return []
        marks = ",".join("?" * len(names))
        return [
            r[0]
            for r in self._read(
                f"SELECT DISTINCT speaker FROM episodes WHERE user=? AND agent=? "
                f"AND speaker COLLATE NOCASE IN ({marks})",
                [ns.user, ns.agent, *names],
            )
        ]

    def speakers_of(self, ns: Namespace, item_ids: Sequence[str]) -> dict[str, set[str]]:
        """item id -> the speakers of the episodes it came from (items with none are absent)."""
        out: dict[str, set[str]] = {}
        for chunk in _chunks(list(item_ids)):
            marks = ",".join("?" * len(chunk))
            for r in self._read(
                "SELECT DISTINCT x.item_id, e.speaker FROM item_sources x JOIN episodes e "
                "ON e.user=x.user AND e.agent=x.agent AND e.id=x.episode_id "
                f"WHERE x.user=? AND x.agent=? AND x.item_id IN ({marks}) "
                "AND e.speaker IS NOT NULL",
                [ns.user, ns.agent, *chunk],
            ):
                out.setdefault(r[0], set()).add(r[1])
        return out

    def item_count(self, ns: Namespace) -> int:
        """Items of the (user, agent) pair, from the count the triggers keep (no scan)."""
        rows = self._read("SELECT n FROM item_counts WHERE user=? AND agent=?", (ns.user, ns.agent))
        return int(rows[0][0]) if rows else 0

    # -- audit and counts ---------------------------------------------------------------

    def _audit(
        self,
        db: sqlite3.Connection,
        ns: Namespace,
        op: str,
        item_id: str | None,
        detail: dict[str, Any],
    ) -> None:
        db.execute(
            "INSERT INTO audit (at, user, agent, op, item_id, detail) VALUES (?,?,?,?,?,?)",
            (
                datetime.now().isoformat(timespec="seconds"),
                ns.user,
                ns.agent,
                op,
                item_id,
                json.dumps(detail, default=str),
            ),
        )

    def audit(
        self,
        db: sqlite3.Connection,
        ns: Namespace,
        op: str,
        item_id: str | None = None,
        **detail: Any,
    ) -> None:
        """Record one change (inside the transaction that makes it)."""
        self._audit(db, ns, op, item_id, detail)

    def audit_log(self, ns: Namespace, limit: int = 50) -> list[AuditEntry]:
        rows = self._read(
            "SELECT * FROM audit WHERE user=? AND agent=? ORDER BY seq DESC LIMIT ?",
            (ns.user, ns.agent, limit),
        )
        return [
            AuditEntry(
                seq=r["seq"],
                at=datetime.fromisoformat(r["at"]),
                op=r["op"],
                item_id=r["item_id"],
                detail=json.loads(r["detail"]),
            )
            for r in reversed(rows)
        ]

    def counts(self, ns: Namespace) -> dict[str, int]:
        scope, args = self._scope(ns)
        one = lambda sql: int(self._read(sql, args)[0][0])  # noqa: E731
        return {
            "episodes": one(f"SELECT count(*) FROM episodes WHERE {scope}"),
            "pending_episodes": one(
                f"SELECT count(*) FROM episodes WHERE {scope} AND structured = 0"
            ),
            "facts": one(f"SELECT count(*) FROM items WHERE {scope} AND kind = 'fact'"),
            "current_facts": one(
                f"SELECT count(*) FROM items WHERE {scope} AND kind = 'fact' AND valid_to IS NULL"
            ),
            "procedures": one(f"SELECT count(*) FROM items WHERE {scope} AND kind = 'procedure'"),
            "sessions": one(f"SELECT count(DISTINCT session) FROM episodes WHERE {scope}"),
            "audit_entries": int(
                self._read("SELECT count(*) FROM audit WHERE user=? AND agent=?", args[:2])[0][0]
            ),
        }
