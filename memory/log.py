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

This module holds the connection, its transactions and the plain reads and writes. The
tables' definitions and the upgrade of an older file are in :mod:`~lemmata.memory.schema`,
the retrieval channels' queries in :mod:`~lemmata.memory.search_sql` (methods of
:class:`MemoryLog` all the same), and how a row is packed and read back in
:mod:`~lemmata.memory.rows`.

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
from datetime import datetime
from pathlib import Path
from typing import Any

from lemmata.errors import LemmataError
from lemmata.memory import schema
from lemmata.memory.graph import classify_entity, entity_key, graph_term, set_kinds
from lemmata.memory.rows import ITEM_COLUMNS, SOURCES_COLUMN, ItemRow, chunks, item_values
from lemmata.memory.search_sql import SearchQueries
from lemmata.memory.types import AuditEntry, Episode, Namespace

__all__ = ["ItemRow", "MemoryLog", "StoreError"]

SCHEMA_VERSION = schema.SCHEMA_VERSION


class StoreError(LemmataError):
    """The memory's file cannot be used as it is (corrupt, newer schema, a duplicate id)."""

    code = "store"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class MemoryLog(SearchQueries):
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
            found = schema.install(self._db)
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path} is not a usable memory file ({exc}); move it aside or give another path"
            ) from exc
        if found.version is None:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
        elif found.version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer Lemmata (schema {found.version}); "
                "upgrade lemmata"
            )
        self._lock = threading.RLock()
        if not found.had_entities:  # a file from schema 1: the graph's nodes from its edges
            with self.transaction() as db:
                schema.link_entities(db)
        if found.version is not None and found.version < SCHEMA_VERSION:
            self.set_meta("schema", str(SCHEMA_VERSION))

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
        for chunk in chunks(list(ids)):
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
            for chunk in chunks(list(ids)):
                marks = ",".join("?" * len(chunk))
                out += self._read(sql + f" AND id IN ({marks}) ORDER BY rowid", [*args, *chunk])
            return out
        sql += " ORDER BY rowid"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._read(sql, args)

    def mark_structured(self, db: sqlite3.Connection, ns: Namespace, ids: Sequence[str]) -> None:
        """Mark episodes structured; a session of theirs that was backing off is due no more."""
        for chunk in chunks(list(ids)):
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

    def has_due(
        self,
        ns: Namespace,
        now: float,
        extractor: str,
        *,
        batch_episodes: int = 1,
        batch_wait_s: float = 0.0,
    ) -> bool:
        """Whether an episode is pending in a session that ``extractor`` is not backing off
        from after a failure and that is not waiting for a fuller batch (it has at least
        ``batch_episodes`` pending episodes, or its newest is ``batch_wait_s`` old): one query,
        on the ``episodes_pending`` index and the retries' key."""
        scope, args = self._scope(ns, "e")
        sql = (
            f"SELECT 1 FROM episodes AS e WHERE {scope} AND e.structured = 0 AND NOT EXISTS "
            "(SELECT 1 FROM segment_retries AS r WHERE r.user = e.user AND r.agent = e.agent "
            "AND r.session = e.session AND r.extractor = ? AND r.retry_at > ?)"
        )
        params: list[Any] = [*args, extractor, now]
        if batch_episodes > 1:
            # The same rule as Memory.consolidate: a session waits while it has fewer pending
            # episodes than the batch and its newest is younger than the wait.
            sql += " GROUP BY e.session HAVING count(*) >= ? OR max(e.created_at) <= ?"
            params += [batch_episodes, now - batch_wait_s]
        return bool(self._read(sql + " LIMIT 1", params))

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
            f"INSERT OR IGNORE INTO items ({ITEM_COLUMNS}) VALUES ({','.join('?' * 18)})",
            item_values(ns, row),
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
            f"SELECT i.rowid, i.*, s.text AS subgoal, {SOURCES_COLUMN} "
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
        for chunk in chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            out += self._read(sql + f" AND i.id IN ({marks})", [*args, *chunk])
        return out

    def terms_of(self, ns: Namespace, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        out: dict[str, list[tuple[str, str]]] = {}
        for chunk in chunks(list(ids)):
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
        for chunk in chunks(list(ids)):
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
        for chunk in chunks(list(ids)):
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
        for chunk in chunks(list(episode_ids)):
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
        for chunk in chunks(list(ids)):
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
