"""``PlugMemStore``: LangGraph's ``BaseStore`` kept in a PlugMem memory file.

A LangGraph app gives it to ``graph.compile(store=...)``; its nodes then read and write
key-value documents through ``get_store()`` or their ``store`` argument, and the documents
live in the memory's SQLite log (table ``documents``), so they survive a restart and share a
file, and an embedder, with the memory's episodes and knowledge.

>>> from lemmata.memory import PlugMemStore                                # doctest: +SKIP
>>> store = PlugMemStore("/tmp/mem", user="alice")                           # doctest: +SKIP
>>> store.put(("alice", "assistant", "s1"), "diet", {"text": "vegetarian"})  # doctest: +SKIP
>>> store.search(("alice",), query="what does she eat?")[0].key              # doctest: +SKIP
'diet'

Namespaces. A LangGraph namespace is a tuple of labels; its first three map onto PlugMem's
:class:`~lemmata.memory.Namespace` (user, agent, session), labels missing at the end take
PlugMem's defaults, and deeper labels are kept as a path:

==========================================  =========================================  ==========
LangGraph namespace                         PlugMem namespace                          path
==========================================  =========================================  ==========
``("alice",)``                              user=alice, agent=default, session=None    ``()``
``("alice", "assistant")``                  user=alice, agent=assistant, session=None  ``()``
``("alice", "assistant", "s1", "notes")``   user=alice, agent=assistant, session=s1    ``("notes",)``
==========================================  =========================================  ==========

The whole tuple is kept too, so ``("alice",)`` and ``("alice", "default")`` stay distinct
namespaces. Storage queries name the user and the agent as far as the namespace (or search
prefix) reaches. ``PlugMemStore(memory, user="alice")`` pins a store to one
user: an operation naming another user's namespace raises :class:`NamespaceOutOfScope` and
nothing of its batch runs; searches and listings with a shorter prefix see only alice's
documents. An unpinned store spans the whole file, as LangGraph's own stores do.

Search. ``filter`` matches value fields by equality (nested dicts and lists compared
structurally) or with the operators ``$eq $ne $gt $gte $lt $lte``, as ``InMemoryStore`` does;
a field that is missing or not a number never matches a comparison. ``query`` ranks by cosine
similarity with the memory's embedder; a document's score is its best-matching indexed text.
The texts embedded are the value's fields named by ``index`` (``PlugMemStore(index={"fields":
[...]})`` or ``put(..., index=[...])``; ``index=False`` at put time leaves a document out of
ranking), by default the whole value as JSON (LangGraph's ``["$"]``). Candidates are read,
filtered and scored within the prefix on each search: exact, and fine for the thousands of
documents an app keeps per user, not meant for millions.

Values are JSON (a tuple comes back as a list, as from LangGraph's SQL stores); ``created_at``
is kept when a document is overwritten, ``updated_at`` moves. ``ttl`` (minutes) is honoured:
an expired document is never returned, a read refreshes the timer (unless the op says not to),
and expired rows are deleted when their (user, agent) is next written or on
:meth:`PlugMemStore.sweep_ttl`.

=========================  ===========================  =====================================
class                      code                         raised when
=========================  ===========================  =====================================
``StoreInputError``        ``store_input``              a key, value, filter or index setting
                                                        the store cannot use
``InvalidNamespace``       ``store_namespace``          a namespace is empty, starts with
                                                        ``langgraph``, or has a label that is
                                                        empty, not a str, holds ``.`` or NUL,
                                                        or (first three) exceeds 200 chars;
                                                        also a LangGraph
                                                        ``InvalidNamespaceError``
``NamespaceOutOfScope``    ``namespace_out_of_scope``   a pinned store was asked for another
                                                        user's namespace
=========================  ===========================  =====================================
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
)
from pydantic import ValidationError

from lemmata.errors import UsageError
from lemmata.memory.core import Memory
from lemmata.memory.types import Namespace, describe_error

if TYPE_CHECKING:
    from lemmata.embeddings import Embedder
    from lemmata.memory.log import MemoryLog

__all__ = [
    "InvalidNamespace",
    "NamespaceOutOfScope",
    "PlugMemStore",
    "StoreInputError",
    "plugmem_namespace",
]

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_COLUMNS = "ns, key, value, created_at, updated_at, ttl, expires_at, paths, embedder, vectors"
_LIVE = "(expires_at IS NULL OR expires_at > ?)"


class StoreInputError(UsageError, ValueError):
    """An operation the store cannot run: a key that is not a str, a value that is not a
    JSON object, an unknown filter operator, an index setting it cannot honour."""

    code = "store_input"


class InvalidNamespace(StoreInputError, InvalidNamespaceError):
    """A namespace LangGraph's rules refuse (also caught as LangGraph's
    ``InvalidNamespaceError``)."""

    code = "store_namespace"


class NamespaceOutOfScope(UsageError):
    """A store pinned to one user was asked to read or write another user's namespace."""

    code = "namespace_out_of_scope"


def plugmem_namespace(namespace: Sequence[str]) -> tuple[Namespace, tuple[str, ...]]:
    """The PlugMem namespace of a LangGraph namespace, and the labels below it.

    >>> ns, path = plugmem_namespace(("alice", "assistant", "s1", "notes"))
    >>> (ns.user, ns.agent, ns.session, path)
    ('alice', 'assistant', 's1', ('notes',))
    >>> plugmem_namespace(("alice",))[0].agent
    'default'
    """
    labels = tuple(namespace)
    if not labels:
        raise InvalidNamespace("a namespace needs at least one label, e.g. ('alice',)")
    try:
        ns = Namespace(
            user=labels[0],
            agent=labels[1] if len(labels) > 1 else "default",
            session=labels[2] if len(labels) > 2 else None,
        )
    except ValidationError as exc:
        raise InvalidNamespace(f"namespace {labels}: {describe_error(exc)}") from None
    return ns, labels[3:]


def _check_labels(labels: Any, what: str = "namespace") -> tuple[str, ...]:
    if not isinstance(labels, tuple | list):
        raise InvalidNamespace(
            f"{what} {labels!r} is not a tuple of labels, e.g. ('alice', 'notes')"
        )
    for label in labels:
        if not isinstance(label, str):
            raise InvalidNamespace(
                f"{what} {tuple(labels)}: label {label!r} is a {type(label).__name__}; "
                "labels are strings"
            )
        if not label:
            raise InvalidNamespace(f"{what} {tuple(labels)}: a label is empty; drop it or name it")
        if "." in label or "\x00" in label:
            raise InvalidNamespace(
                f"{what} {tuple(labels)}: label {label!r} holds '.' or a NUL byte; "
                "split it into separate labels"
            )
    return tuple(labels)


def _check_document_namespace(namespace: Any) -> tuple[str, ...]:
    labels = _check_labels(namespace)
    if labels and labels[0] == "langgraph":
        raise InvalidNamespace(f"namespace {labels}: the root label 'langgraph' is reserved")
    plugmem_namespace(labels)  # empty, or a user/agent/session label too long
    return labels


def _check_key(key: Any) -> str:
    if not isinstance(key, str):
        raise StoreInputError(f"key {key!r} is a {type(key).__name__}; keys are strings")
    return key


def _encode_value(value: Any, where: str) -> str:
    if not isinstance(value, Mapping):
        raise StoreInputError(
            f"{where}: the value is a {type(value).__name__}; give a dict such as "
            "{'text': ...} (or None to delete)"
        )
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise StoreInputError(f"{where}: field name {bad[0]!r} is not a str")
    try:
        return json.dumps(dict(value), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise StoreInputError(f"{where}: the value is not JSON ({exc}); store plain data") from None


def _join(labels: Sequence[str]) -> str:
    return ".".join(labels)


def _when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


# -- filters (InMemoryStore's semantics) --------------------------------------------------


def _check_filter(flt: Any) -> None:
    if flt is None:
        return
    if not isinstance(flt, Mapping):
        raise StoreInputError(f"filter {flt!r} is not a dict of field -> value")
    for value in flt.values():
        if isinstance(value, Mapping):
            unknown = [k for k in value if k.startswith("$") and k not in _OPERATORS]
            if unknown:
                raise StoreInputError(
                    f"filter operator {unknown[0]!r} is not supported; use one of "
                    + ", ".join(_OPERATORS)
                )
            _check_filter({k: v for k, v in value.items() if not k.startswith("$")})


def _matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    return not flt or all(_compare(value.get(k), v) for k, v in flt.items())


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(actual, op, arg) for op, arg in wanted.items())
        return isinstance(actual, Mapping) and all(
            _compare(actual.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _operator(actual: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(actual == arg)
    if op == "$ne":
        return bool(actual != arg)
    try:
        a, b = float(actual), float(arg)
    except (TypeError, ValueError):
        return False  # InMemoryStore raises here; a missing field simply does not match
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _does_match(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    if cond.match_type == "prefix":
        pairs = zip(ns, path, strict=False)
    elif cond.match_type == "suffix":
        pairs = zip(reversed(ns), reversed(path), strict=False)
    else:
        raise StoreInputError(f"match type {cond.match_type!r}: use 'prefix' or 'suffix'")
    return all(p == "*" or k == p for k, p in pairs)


# -- the store --------------------------------------------------------------------------


class PlugMemStore(BaseStore):
    """LangGraph's ``BaseStore`` on a PlugMem :class:`~lemmata.memory.Memory` (see the module
    docstring for the namespace mapping, search and TTL).

    ``memory`` is a ``Memory`` or the path of a memory directory (opened with ``embedder``,
    which is otherwise taken from the memory). ``user`` pins the store to one user. ``index``
    is LangGraph's index config; only ``fields`` is used (``dims``, when given, must be the
    memory embedder's), because the memory's embedder does the embedding. ``ttl`` is
    LangGraph's ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``).
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory | str | Path,
        *,
        user: str | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        if isinstance(memory, Memory):
            if embedder is not None:
                raise StoreInputError(
                    "give embedder= to Memory(...), not to a PlugMemStore built on that memory"
                )
            self.memory, self._owns_memory = memory, False
        else:
            self.memory, self._owns_memory = Memory(memory, embedder=embedder), True
        if user is not None:
            plugmem_namespace(_check_labels((user,), "user"))
        self.user = user
        index = index or {}
        if index.get("embed") is not None:
            raise StoreInputError(
                "PlugMemStore embeds with the memory's embedder: leave out index['embed'] "
                "and choose the model with Memory(embedder=...) or settings.embedder"
            )
        self._dims = index.get("dims")
        self.fields: list[str] = list(index.get("fields") or ["$"])
        self.ttl_config = ttl

    @property
    def log(self) -> MemoryLog:
        return self.memory.log

    def close(self) -> None:
        """Close the memory when the store opened it from a path."""
        if self._owns_memory:
            self.memory.close()

    def __enter__(self) -> PlugMemStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- batches ------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops: every op is checked first (a bad one runs nothing), then the reads
        (which see the store as it was before this batch, as ``InMemoryStore``'s do), then
        all puts and deletes in one transaction (the last op on a key wins)."""
        ops = list(ops)
        for op in ops:
            self._check(op)
        now = time.time()
        queries: dict[str, np.ndarray] = {}
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op, now))
            elif isinstance(op, SearchOp):
                results.append(self._search(op, now, queries))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op, now))
            else:
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
        if puts:
            self._write(list(puts.values()), time.time())
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (SQLite and the embedder block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _check(self, op: Any) -> None:
        if isinstance(op, GetOp):
            _check_key(op.key)
            self._in_scope(_check_document_namespace(op.namespace))
        elif isinstance(op, PutOp):
            key = _check_key(op.key)
            labels = _check_document_namespace(op.namespace)
            self._in_scope(labels)
            if op.value is not None:
                _encode_value(op.value, f"put {labels}/{key}")
            if op.index not in (None, False) and not (
                isinstance(op.index, list) and all(isinstance(p, str) for p in op.index)
            ):
                raise StoreInputError(
                    f"put {labels}/{key}: index={op.index!r}; give False or a list of field "
                    "paths such as ['text']"
                )
            if op.ttl is not None and (not isinstance(op.ttl, int | float) or op.ttl <= 0):
                raise StoreInputError(f"put {labels}/{key}: ttl={op.ttl!r}; give minutes > 0")
        elif isinstance(op, SearchOp):
            labels = _check_labels(op.namespace_prefix, "search prefix")
            if labels:
                self._in_scope(labels)
            _check_filter(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise StoreInputError(f"search query {op.query!r} is not a str")
        elif isinstance(op, ListNamespacesOp):
            for cond in op.match_conditions or ():
                labels = _check_labels(cond.path, f"{cond.match_type} condition")
                if cond.match_type == "prefix" and labels and labels[0] != "*":
                    self._in_scope(labels)
        else:
            raise StoreInputError(f"unknown store operation {type(op).__name__}")

    def _in_scope(self, labels: tuple[str, ...]) -> None:
        if self.user is not None and labels[0] != self.user:
            raise NamespaceOutOfScope(
                f"this store is pinned to user {self.user!r}; namespace {labels} belongs to "
                f"{labels[0]!r}: open a PlugMemStore with user={labels[0]!r} for it"
            )

    def _scope(self, prefix: Sequence[str]) -> tuple[str, list[Any]]:
        """WHERE clause confining a query to ``prefix`` (and the pinned user)."""
        clauses: list[str] = []
        args: list[Any] = []
        user = prefix[0] if prefix else self.user
        if user is not None:
            clauses.append("user = ?")
            args.append(user)
        if len(prefix) > 1:
            clauses.append("agent = ?")
            args.append(prefix[1])
        if prefix:
            joined = _join(prefix)
            clauses.append("(ns = ? OR substr(ns, 1, ?) = ?)")
            args += [joined, len(joined) + 1, joined + "."]
        return " AND ".join(clauses) or "1", args

    # -- reads --------------------------------------------------------------------------

    def _get(self, op: GetOp, now: float) -> Item | None:
        ns, _ = plugmem_namespace(op.namespace)
        rows = self.log.read(
            f"SELECT {_COLUMNS} FROM documents WHERE user = ? AND agent = ? AND ns = ? "
            f"AND key = ? AND {_LIVE}",
            [ns.user, ns.agent, _join(op.namespace), op.key, now],
        )
        if not rows:
            return None
        if op.refresh_ttl:
            self._refresh(rows, now)
        r = rows[0]
        return Item(
            value=json.loads(r["value"]),
            key=r["key"],
            namespace=tuple(r["ns"].split(".")),
            created_at=_when(r["created_at"]),
            updated_at=_when(r["updated_at"]),
        )

    def _search(self, op: SearchOp, now: float, queries: dict[str, np.ndarray]) -> list[SearchItem]:
        scope, args = self._scope(op.namespace_prefix)
        rows = self.log.read(
            f"SELECT {_COLUMNS} FROM documents WHERE {scope} AND {_LIVE} ORDER BY rowid",
            [*args, now],
        )
        values = [json.loads(r["value"]) for r in rows]
        kept = [(r, v) for r, v in zip(rows, values, strict=True) if _matches(v, op.filter)]
        chosen: list[tuple[sqlite3.Row, Any, float | None]]
        if not op.query:
            chosen = [(r, v, None) for r, v in kept[op.offset : op.offset + op.limit]]
        else:
            if op.query not in queries:
                queries[op.query] = self._embed([op.query])[0]
            chosen = self._rank(kept, queries[op.query], op.offset, op.limit)
        if op.refresh_ttl:
            self._refresh([r for r, _, _ in chosen], now)
        return [
            SearchItem(
                namespace=tuple(r["ns"].split(".")),
                key=r["key"],
                value=v,
                created_at=_when(r["created_at"]),
                updated_at=_when(r["updated_at"]),
                score=score,
            )
            for r, v, score in chosen
        ]

    def _rank(
        self, kept: list[tuple[sqlite3.Row, Any]], query: np.ndarray, offset: int, limit: int
    ) -> list[tuple[sqlite3.Row, Any, float | None]]:
        vectors = self._vectors(kept)
        scored = [
            (float(np.max(m @ query)), i) for i, m in enumerate(vectors) if m is not None and len(m)
        ]
        scored.sort(key=lambda s: -s[0])  # stable: ties keep insertion order
        out: list[tuple[sqlite3.Row, Any, float | None]] = [
            (kept[i][0], kept[i][1], s) for s, i in scored[offset : offset + limit]
        ]
        if len(out) < limit:
            # As InMemoryStore: documents without vectors fill what the ranked ones leave.
            ranked = {i for _, i in scored}
            rest = [(r, v, None) for i, (r, v) in enumerate(kept) if i not in ranked]
            out += rest[: limit - len(out)]
        return out

    def _vectors(self, kept: list[tuple[sqlite3.Row, Any]]) -> list[np.ndarray | None]:
        """Each candidate's stored vectors; those made by another embedder (the memory's
        embedder changed since they were put) are re-embedded once and stored again."""
        tag = self._embedder_tag()
        out: list[np.ndarray | None] = []
        stale: list[int] = []
        for i, (r, _) in enumerate(kept):
            if r["paths"] is None:
                out.append(None)
            elif r["embedder"] != tag:
                out.append(None)
                stale.append(i)
            else:
                out.append(np.frombuffer(r["vectors"], dtype=np.float32).reshape(-1, self._dim()))
        if stale:
            texts = [_texts(kept[i][1], json.loads(kept[i][0]["paths"])) for i in stale]
            matrices = self._embed_groups(texts)
            with self.log.transaction() as db:
                for i, m in zip(stale, matrices, strict=True):
                    r = kept[i][0]
                    ns, _ = plugmem_namespace(r["ns"].split("."))
                    db.execute(
                        "UPDATE documents SET embedder = ?, vectors = ? WHERE user = ? "
                        "AND agent = ? AND ns = ? AND key = ?",
                        (tag, m.tobytes(), ns.user, ns.agent, r["ns"], r["key"]),
                    )
                    out[i] = m
        return out

    def _refresh(self, rows: Sequence[sqlite3.Row], now: float) -> None:
        if self.ttl_config is not None and not self.ttl_config.get("refresh_on_read", True):
            return
        timed = [r for r in rows if r["ttl"] is not None]
        if not timed:
            return  # the common case: no write for a read
        with self.log.transaction() as db:
            for r in timed:
                ns, _ = plugmem_namespace(r["ns"].split("."))
                db.execute(
                    "UPDATE documents SET expires_at = ? WHERE user = ? AND agent = ? "
                    "AND ns = ? AND key = ?",
                    (now + 60 * r["ttl"], ns.user, ns.agent, r["ns"], r["key"]),
                )

    def _list_namespaces(self, op: ListNamespacesOp, now: float) -> list[tuple[str, ...]]:
        conds = tuple(op.match_conditions or ())
        # The longest run of literal labels a prefix condition starts with narrows the query.
        fixed: list[str] = []
        for c in conds:
            if c.match_type == "prefix":
                run = []
                for label in c.path:
                    if label == "*":
                        break
                    run.append(label)
                fixed = max(fixed, run[:2], key=len)
        clauses: list[str] = []
        args: list[Any] = []
        for column, label in zip(("user", "agent"), fixed, strict=False):
            clauses.append(f"{column} = ?")
            args.append(label)
        if not fixed and self.user is not None:
            clauses.append("user = ?")
            args.append(self.user)
        where = " AND ".join([*clauses, _LIVE])
        found = [
            tuple(r[0].split("."))
            for r in self.log.read(f"SELECT DISTINCT ns FROM documents WHERE {where}", [*args, now])
        ]
        found = [ns for ns in found if all(_does_match(c, ns) for c in conds)]
        if op.max_depth is not None:
            found = list({ns[: op.max_depth] for ns in found})
        return sorted(found)[op.offset : op.offset + op.limit]

    # -- writes -------------------------------------------------------------------------

    def _write(self, puts: list[PutOp], now: float) -> None:
        texts: list[list[str]] = []
        paths: list[list[str] | None] = []
        for op in puts:
            p = None if op.value is None or op.index is False else (op.index or self.fields)
            paths.append(p)
            texts.append(_texts(op.value, p) if p is not None and op.value is not None else [])
        matrices = self._embed_groups(texts)
        tag = self._embedder_tag() if any(texts) else None
        swept: set[tuple[str, str]] = set()
        with self.log.transaction() as db:
            for op, p, m in zip(puts, paths, matrices, strict=True):
                ns, _ = plugmem_namespace(op.namespace)
                joined = _join(op.namespace)
                if (ns.user, ns.agent) not in swept:
                    swept.add((ns.user, ns.agent))
                    _sweep(db, now, ns.user, ns.agent)
                if op.value is None:
                    db.execute(
                        "DELETE FROM documents WHERE user = ? AND agent = ? AND ns = ? AND key = ?",
                        (ns.user, ns.agent, joined, op.key),
                    )
                    continue
                db.execute(
                    "INSERT INTO documents (user, agent, session, ns, key, value, created_at, "
                    "updated_at, ttl, expires_at, paths, embedder, vectors) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
                    "ON CONFLICT (user, agent, ns, key) DO UPDATE SET value = excluded.value, "
                    "updated_at = excluded.updated_at, ttl = excluded.ttl, "
                    "expires_at = excluded.expires_at, paths = excluded.paths, "
                    "embedder = excluded.embedder, vectors = excluded.vectors",
                    (
                        ns.user,
                        ns.agent,
                        ns.session,
                        joined,
                        op.key,
                        _encode_value(op.value, f"put {op.namespace}/{op.key}"),
                        now,
                        now,
                        op.ttl,
                        now + 60 * op.ttl if op.ttl is not None else None,
                        json.dumps(p) if p is not None else None,
                        tag if p is not None else None,
                        m.tobytes() if p is not None else None,
                    ),
                )

    def sweep_ttl(self) -> int:
        """Delete every expired document now (of the pinned user only, when pinned); returns
        how many went. Expired documents are never returned, so this only frees space."""
        with self.log.transaction() as db:
            return _sweep(db, time.time(), self.user, None)

    # -- embedding ----------------------------------------------------------------------

    def _embedder_tag(self) -> str:
        return f"{self.memory.embedder.name}/{self._dim()}"

    def _dim(self) -> int:
        dim = self.memory.embedder.dim
        if self._dims is not None and self._dims != dim:
            raise StoreInputError(
                f"index dims={self._dims} but the memory's embedder "
                f"{self.memory.embedder.name!r} gives {dim}: drop 'dims' or change the embedder"
            )
        return dim

    def _embed(self, texts: list[str]) -> np.ndarray:
        dim = self._dim()
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        return np.asarray(self.memory.embedder.embed(texts), dtype=np.float32).reshape(-1, dim)

    def _embed_groups(self, groups: list[list[str]]) -> list[np.ndarray]:
        """One embedding call for all the texts; each group's rows back as one matrix."""
        flat = self._embed([t for g in groups for t in g]) if any(groups) else None
        out: list[np.ndarray] = []
        at = 0
        for g in groups:
            out.append(flat[at : at + len(g)] if flat is not None else np.zeros((0, 0), np.float32))
            at += len(g)
        return out


def _texts(value: Any, paths: Sequence[str]) -> list[str]:
    """The texts of ``value`` at ``paths`` (LangGraph's path syntax; ``$`` is the whole
    value as JSON), in order."""
    out: list[str] = []
    for p in paths:
        out += get_text_at_path(value, p if p == "$" else tokenize_path(p))
    return out


def _sweep(db: sqlite3.Connection, now: float, user: str | None, agent: str | None) -> int:
    scope = "".join(
        f" AND {col} = ?" for col, val in (("user", user), ("agent", agent)) if val is not None
    )
    args = [v for v in (user, agent) if v is not None]
    cur = db.execute(
        f"DELETE FROM documents WHERE expires_at IS NOT NULL AND expires_at <= ?{scope}",
        [now, *args],
    )
    return int(cur.rowcount)
