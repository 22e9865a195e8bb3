"""The log's schema: its tables, indexes and triggers, and bringing an older file up to date.

:func:`install` creates what a file lacks (every statement is ``IF NOT EXISTS``, so opening a
file twice changes nothing) and reports what it found; :func:`link_entities` fills the
entity graph's nodes of a file written before they existed. The tables are described in
:mod:`~lemmata.memory.log`, whose :class:`~lemmata.memory.log.MemoryLog` calls both.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from lemmata.memory.graph import (
    GRAPH_TERM_SQL,
    classify_entity,
    entity_key,
    graph_term,
    set_kinds,
)
from lemmata.memory.text import entities
from lemmata.memory.types import Namespace

__all__ = ["SCHEMA_VERSION", "Found", "install", "link_entities"]

#: The schema this code writes; a file with a newer one is refused.
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


@dataclass(frozen=True)
class Found:
    """What :func:`install` found in the file before it ran."""

    #: the schema version the file says it has (None: a new file)
    version: int | None
    #: whether the file had the entity graph's nodes (a schema-1 file has only its edges)
    had_entities: bool


def install(db: sqlite3.Connection) -> Found:
    """Create the tables, indexes and triggers ``db`` lacks; a file from before the item
    counts are kept gets them counted once. Raises ``sqlite3.DatabaseError`` for a file that
    is no SQLite database."""
    had_counts = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'item_counts'").fetchone()
    had_entities = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'entities'").fetchone()
    db.executescript(_SCHEMA)
    if not had_counts:  # a file from before the counts table: count once
        db.execute(
            "INSERT OR REPLACE INTO item_counts (user, agent, n) "
            "SELECT user, agent, count(*) FROM items GROUP BY user, agent"
        )
    version = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    return Found(
        version=int(version[0]) if version is not None else None,
        had_entities=bool(had_entities),
    )


def link_entities(db: sqlite3.Connection) -> None:
    """Build ``entities`` from the ``item_terms`` already stored (inside a transaction, once,
    when a schema-1 file is first opened): one node per term with its fact count, then the
    named ones' kinds from a fact that mentions them and the speakers of their (user, agent)
    pair."""
    db.execute(
        "INSERT OR IGNORE INTO entities (user, agent, id, kind, items) "
        "SELECT user, agent, term, CASE WHEN max(kind = 'entity') THEN 'object' "
        "ELSE 'concept' END, count(*) FROM item_terms "
        f"WHERE {GRAPH_TERM_SQL.format(t='term')} GROUP BY user, agent, term"
    )
    # the named things among them, found again in the facts' text (a name may have been
    # stored as a tag), each with the first fact that mentions it
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
