"""``Memory``: the SDK entry point of PlugMem.

>>> from lemmata.memory import Memory
>>> mem = Memory("/tmp/mem", user="alice")                        # doctest: +SKIP
>>> mem.add_episode("I moved to Lisbon last month.", speaker="Alice",
...                 timestamp="2024-03-10T09:00")                  # doctest: +SKIP
'ep_...'
>>> mem.retrieve("Where does Alice live?").items[0].text           # doctest: +SKIP
'Alice moved to Lisbon last month (February 2024).'

Writes are durable when they return (SQLite, WAL, one transaction per call) and do no
structuring: ``consolidate()`` (or :meth:`Memory.background`, or the next ``retrieve``)
turns pending episodes into facts and procedures. The vector index is derived from the log and
can be rebuilt with :meth:`Memory.reindex`.

What a batch of new knowledge does to the stored knowledge (duplicates, contradictions,
supersession) is decided by :func:`~lemmata.memory.write_plan.plan_writes` and applied by
:func:`~lemmata.memory.commit.commit`. The background worker is
:class:`~lemmata.memory.background.BackgroundConsolidator`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from lemmata.errors import LemmataError, UsageError
from lemmata.memory._shared import Shared
from lemmata.memory.background import BackgroundConsolidator
from lemmata.memory.commit import ConsolidationReport, commit
from lemmata.memory.extract import (
    DraftFact,
    DraftProcedure,
    Extraction,
    Extractor,
    ModelExtractor,
    OfflineExtractor,
    StoredEpisode,
    load_prompt,
)
from lemmata.memory.kinds import drop_concepts
from lemmata.memory.log import MemoryLog
from lemmata.memory.retrieve import RetrievalConfig, retrieve
from lemmata.memory.rows import stored_episode, to_node, unpack
from lemmata.memory.text import entities, terms
from lemmata.memory.types import (
    AuditEntry,
    Episode,
    Fact,
    FactInput,
    Item,
    Namespace,
    Procedure,
    ProcedureInput,
    Retrieval,
    describe_error,
    new_id,
)

if TYPE_CHECKING:
    import sqlite3

    import networkx as nx

    from lemmata.embeddings import Embedder
    from lemmata.llm.base import ChatModel
    from lemmata.memory.index import VectorIndex
    from lemmata.settings import Settings

__all__ = ["ConsolidationReport", "ForgetReport", "Memory", "Reasoning"]

Progress = Callable[[int, int], None]

_clock = time.time  # when a failed segment is due again is measured on this clock


def _record_error(what: str, index: int, exc: ValidationError) -> UsageError:
    return UsageError(f"{what} {index}: {describe_error(exc)}; nothing was stored")


@dataclass
class ForgetReport:
    """What :meth:`Memory.forget` removed."""

    items: list[str] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)


class Reasoning(BaseModel):
    """An answer condensed from retrieved knowledge (``answer`` is None offline)."""

    query: str
    answer: str | None
    cited: list[str] = Field(default_factory=list)
    items: list[Item] = Field(default_factory=list)
    model: str = "offline"


class _Answer(BaseModel):
    answer: str
    cited: list[str] = Field(default_factory=list)


class Memory:
    """A PlugMem memory: episodes in, knowledge out, confined to one namespace.

    ``path`` is a directory (created if missing; default ``data_dir/memory``) holding
    ``memory.sqlite3`` (the source of truth) and ``chroma/`` (the embedded vector index).
    ``index`` may instead name a Chroma server (``"http://127.0.0.1:8000"``) or be any
    :class:`~lemmata.memory.index.VectorIndex`. With ``model`` set, structuring and ambiguous
    pairs use it; without, everything runs offline. ``batch_episodes`` (default 1: every
    episode is structured at the next read) lets a session's pending episodes wait for a
    fuller, cheaper model call, at most ``batch_wait_s`` seconds (see :meth:`consolidate`).
    """

    #: Seconds a segment whose structuring failed waits before it is tried again: after the
    #: first failure in a row, the second, ...; the last repeats.
    retry_delays_s: tuple[float, ...] = (30.0, 60.0, 120.0, 300.0, 900.0, 3600.0)

    def __init__(
        self,
        path: str | Path | None = None,
        namespace: Namespace | None = None,
        *,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        model: ChatModel | None = None,
        index: VectorIndex | str | None = None,
        extractor: Extractor | None = None,
        retrieval: RetrievalConfig | None = None,
        ambiguous_at: float = 0.92,
        batch_episodes: int = 1,
        batch_wait_s: float = 300.0,
        _shared: Shared | None = None,
    ) -> None:
        if batch_episodes < 1:
            raise UsageError(f"batch_episodes must be at least 1, not {batch_episodes}")
        if batch_wait_s < 0:
            raise UsageError(f"batch_wait_s must be 0 or more seconds, not {batch_wait_s}")
        if namespace is None:
            try:
                namespace = Namespace(
                    user=user or "default", agent=agent or "default", session=session
                )
            except ValidationError as exc:
                raise _record_error("namespace", 0, exc) from None
        elif user or agent or session:
            raise UsageError("give either namespace= or user=/agent=/session=, not both")
        self.namespace = namespace
        if _shared is None:
            from lemmata.settings import Settings

            settings = settings or Settings.load()
            root = Path(path) if path is not None else settings.data_dir / "memory"
            if root.exists() and not root.is_dir():
                raise UsageError(f"{root} is a file: a memory path is a directory")
            root.mkdir(parents=True, exist_ok=True)
            _shared = Shared(root, settings, embedder, index)
        self._shared = _shared
        self.model = model
        self.extractor: Extractor = extractor or (
            ModelExtractor(model) if model is not None else OfflineExtractor()
        )
        self.retrieval = retrieval or RetrievalConfig()
        self.ambiguous_at = ambiguous_at
        self.batch_episodes = batch_episodes
        self.batch_wait_s = batch_wait_s

    def __repr__(self) -> str:
        return f"Memory({str(self._shared.path)!r}, namespace={self.namespace})"

    # -- plumbing -----------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._shared.path

    @property
    def log(self) -> MemoryLog:
        return self._shared.log

    @property
    def embedder(self) -> Embedder:
        return self._shared.embedder

    @property
    def index(self) -> VectorIndex:
        return self._shared.index

    def scoped(self, **changes: str | None) -> Memory:
        """The same memory under another namespace (``user=``, ``agent=``, ``session=``).

        The log, the index and the embedder are shared; what each can see is not.
        """
        ns = self.namespace.model_copy(update=changes)
        ns = Namespace.model_validate(ns.model_dump())
        return Memory(
            namespace=ns,
            model=self.model,
            extractor=self.extractor,
            retrieval=self.retrieval,
            ambiguous_at=self.ambiguous_at,
            batch_episodes=self.batch_episodes,
            batch_wait_s=self.batch_wait_s,
            _shared=self._shared,
        )

    def close(self) -> None:
        """Close the log and release the vector index's files (both open again on next use)."""
        self._shared.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _space(self) -> tuple[str, str]:
        return (self.namespace.user, self.namespace.agent)

    # -- writing episodes ---------------------------------------------------------------

    def add_episode(self, content: str | Episode | Mapping[str, Any], **fields: Any) -> str:
        """Append one episode durably and return its id; no structuring happens here.

        ``content`` is the text (with ``speaker=``, ``timestamp=``, ``kind=``, ``session=``...
        as keywords), or an :class:`Episode`, or a mapping of its fields.
        """
        if isinstance(content, str):
            record: Any = {"content": content, **fields}
        elif fields:
            raise UsageError("give the episode's fields either in the record or as keywords")
        else:
            record = content
        return self.add_episodes([record])[0]

    def add_episodes(self, records: Iterable[Episode | Mapping[str, Any]]) -> list[str]:
        """Append many episodes in one transaction: all are stored, or (on a bad record,
        named by its position) none."""
        episodes: list[Episode] = []
        for i, rec in enumerate(records):
            if isinstance(rec, Episode):
                episodes.append(rec)
                continue
            if not isinstance(rec, Mapping):
                raise UsageError(f"episode {i}: expected a mapping, got {type(rec).__name__}")
            try:
                episodes.append(Episode.model_validate(dict(rec)))
            except ValidationError as exc:
                raise _record_error("episode", i, exc) from None
        if not episodes:
            return []
        if self.namespace.session:
            for i, ep in enumerate(episodes):
                if ep.session not in (None, self.namespace.session):
                    raise UsageError(
                        f"episode {i}: session {ep.session!r} is outside this memory's "
                        f"session {self.namespace.session!r}"
                    )
        ids = [ep.id or new_id("ep") for ep in episodes]
        if len(set(ids)) != len(ids):
            raise UsageError("episode ids repeat within the batch; nothing was stored")
        self.log.add_episodes(self.namespace, episodes, ids)
        return ids

    async def aadd_episode(self, content: str | Episode | Mapping[str, Any], **fields: Any) -> str:
        """Async :meth:`add_episode` (runs in a worker thread)."""
        return await asyncio.to_thread(self.add_episode, content, **fields)

    async def aadd_episodes(self, records: Iterable[Episode | Mapping[str, Any]]) -> list[str]:
        """Async :meth:`add_episodes`."""
        return await asyncio.to_thread(self.add_episodes, list(records))

    # -- writing knowledge directly ------------------------------------------------------

    def add_fact(self, statement: str | FactInput | Mapping[str, Any], **fields: Any) -> str:
        """Add a pre-structured fact (no extraction); returns its id (or the id of the stored
        fact it duplicates)."""
        rec: Any = {"statement": statement, **fields} if isinstance(statement, str) else statement
        return self.add_facts([rec])[0]

    def add_facts(self, records: Iterable[str | FactInput | Mapping[str, Any]]) -> list[str]:
        """Add pre-structured facts (statements, or :class:`FactInput` records) in one
        transaction, with the same duplicate and contradiction rules as consolidation."""
        facts: list[FactInput] = []
        for i, rec in enumerate(records):
            if isinstance(rec, FactInput):
                facts.append(rec)
                continue
            if isinstance(rec, str):
                rec = {"statement": rec}
            if not isinstance(rec, Mapping):
                raise UsageError(
                    f"fact {i}: expected a statement or a mapping, got {type(rec).__name__}; "
                    "nothing was stored"
                )
            try:
                facts.append(FactInput.model_validate(dict(rec)))
            except ValidationError as exc:
                raise _record_error("fact", i, exc) from None
        self._check_sources([s for f in facts for s in f.sources])
        drafts = [
            DraftFact(
                statement=f.statement.strip(),
                sources=list(dict.fromkeys(f.sources)),
                tags=[t.lower() for t in f.tags] or terms(f.statement)[:16],
                entities=[e.lower() for e in f.entities] + entities(f.statement),
                valid_from=f.valid_from,
                valid_to=f.valid_to,
                credibility=f.credibility,
            )
            for f in facts
        ]
        sessions = [f.session or self.namespace.session or "default" for f in facts]
        ids, _ = self._commit(Extraction(facts=drafts), sessions, [], [], origin="direct")
        return ids

    def add_procedure(
        self, subgoal: str | ProcedureInput | Mapping[str, Any], **fields: Any
    ) -> str:
        """Add a procedure (``subgoal``, ``steps``, ``insight``, ``outcome``, ``sources``)."""
        rec: Any = {"subgoal": subgoal, **fields} if isinstance(subgoal, str) else subgoal
        try:
            p = rec if isinstance(rec, ProcedureInput) else ProcedureInput.model_validate(dict(rec))
        except ValidationError as exc:
            raise _record_error("procedure", 0, exc) from None
        self._check_sources(p.sources)
        draft = DraftProcedure(p.subgoal, list(p.steps), list(p.sources), p.insight, p.outcome)
        session = p.session or self.namespace.session or "default"
        _, pids = self._commit(Extraction(procedures=[draft]), [], [session], [], origin="direct")
        return pids[0]

    def _check_sources(self, sources: Sequence[str]) -> None:
        if not sources:
            return
        found = {r["id"] for r in self.log.episodes(self.namespace, ids=list(set(sources)))}
        missing = [s for s in sources if s not in found]
        if missing:
            raise UsageError(
                f"source episode {missing[0]!r} is not in {self.namespace}; nothing was stored"
            )

    # -- consolidation ------------------------------------------------------------------

    def pending(self) -> int:
        """Episodes stored but not yet structured."""
        return self.log.pending_count(self.namespace)

    def _due(self) -> bool:
        """Whether :meth:`consolidate` has work now: one indexed query (a segment backing off
        after a failure of this memory's extractor, or one waiting for a fuller batch, is not
        due)."""
        return self.log.has_due(
            self.namespace,
            _clock(),
            self.extractor.name,
            batch_episodes=self.batch_episodes,
            batch_wait_s=self.batch_wait_s,
        )

    def consolidate(
        self,
        *,
        progress: Progress | None = None,
        retry_failed: bool = False,
        flush: bool = False,
    ) -> ConsolidationReport:
        """Structure every pending episode of the namespace, a session at a time.

        A session whose extraction fails (the model's reply never parsed, the model did not
        answer) stays pending and is counted in the report's ``failed``; it is tried again once
        its backoff (:attr:`retry_delays_s`) has passed, or now with ``retry_failed`` (or by
        another extractor). The other sessions are structured all the same.

        With ``batch_episodes`` above 1, a session with fewer pending episodes than that waits
        for more (it counts in ``waiting``) until its newest episode is ``batch_wait_s`` old,
        or until ``flush``. A model extractor's prompt has a fixed part (the instructions and
        the schema, about 550 tokens) that every call pays: an agent that structures each
        exchange as it comes pays it per turn, about four times what a batch of a session
        costs per turn (``benchmarks/memory_llm_cost.py``). What waits is not yet retrievable;
        the conversation in progress is in the agent's own context meanwhile.
        """
        report = ConsolidationReport(extractor=self.extractor.name)
        with self._shared.consolidating(self._space):
            rows = self.log.episodes(self.namespace, pending=True)
            backing_off = self.log.retries(self.namespace) if rows else {}
            now = _clock()
            by_session: dict[str, list[sqlite3.Row]] = {}
            for r in rows:
                by_session.setdefault(r["session"], []).append(r)
            done = 0
            for session, seg_rows in by_session.items():
                waiting = backing_off.get(session)
                if (
                    waiting is not None
                    and waiting["extractor"] == self.extractor.name
                    and waiting["retry_at"] > now
                    and not retry_failed
                ):
                    report.deferred += 1
                    done += len(seg_rows)
                    if progress:
                        progress(done, len(rows))
                    continue
                if (
                    not flush
                    and len(seg_rows) < self.batch_episodes
                    and now - max(r["created_at"] for r in seg_rows) < self.batch_wait_s
                ):
                    report.waiting += 1
                    report.waiting_episodes += len(seg_rows)
                    done += len(seg_rows)
                    if progress:
                        progress(done, len(rows))
                    continue
                segment = [stored_episode(r) for r in seg_rows]
                try:
                    extraction = self.extractor.extract(segment)
                except LemmataError as exc:
                    error = f"[{exc.code}] {exc}"
                    self.log.record_failure(
                        self.namespace,
                        session,
                        self.extractor.name,
                        error,
                        _clock(),
                        self.retry_delays_s,
                    )
                    report.failed += 1
                    report.failed_episodes += len(segment)
                    report.errors.append(f"{session}: {error}")
                    done += len(segment)
                    if progress:
                        progress(done, len(rows))
                    continue
                report.rejected += extraction.rejected
                report.model_calls += extraction.calls
                self._commit(
                    extraction,
                    [session] * len(extraction.facts),
                    [session] * len(extraction.procedures),
                    [e.id for e in segment],
                    origin=self.extractor.name,
                    report=report,
                )
                report.segments += 1
                report.episodes += len(segment)
                done += len(segment)
                if progress:
                    progress(done, len(rows))
        return report

    async def aconsolidate(self) -> ConsolidationReport:
        """Async :meth:`consolidate`."""
        return await asyncio.to_thread(self.consolidate)

    def background(self, interval_s: float = 1.0) -> BackgroundConsolidator:
        """Start a thread that consolidates pending episodes every ``interval_s`` seconds.

        ``with mem.background(): ...`` stops it (after a last pass) on leaving the block.
        """
        worker = BackgroundConsolidator(self, interval_s)
        worker.start()
        return worker

    def _commit(
        self,
        extraction: Extraction,
        fact_sessions: Sequence[str],
        proc_sessions: Sequence[str],
        structured: Sequence[str],
        *,
        origin: str,
        report: ConsolidationReport | None = None,
    ) -> tuple[list[str], list[str]]:
        """Write a batch of structured knowledge (see :func:`~lemmata.memory.commit.commit`)."""
        return commit(
            self,
            extraction,
            fact_sessions,
            proc_sessions,
            structured,
            origin=origin,
            report=report,
        )

    # -- reading ------------------------------------------------------------------------

    def retrieve(
        self,
        query: str,
        *,
        k: int = 10,
        budget_tokens: int | None = None,
        as_of: datetime | str | None = None,
        include_history: bool = False,
        fresh: bool = True,
        vector: np.ndarray | None = None,
    ) -> Retrieval:
        """The knowledge most relevant to ``query``: at most ``k`` items within
        ``budget_tokens``, each with the ids of the episodes it came from.

        With ``fresh`` (the default) pending episodes are structured first, so that a read
        sees every acknowledged write; pass ``fresh=False`` when a background worker does it.
        ``vector`` is the query's embedding by this memory's embedder, when the caller has it
        already (an agent that also routes by it): the query is not embedded again.
        """
        if not isinstance(query, str) or not query.strip():
            raise UsageError("the query is empty: give the text to look for")
        if k < 1:
            raise UsageError(f"k must be at least 1, not {k}")
        if budget_tokens is not None and budget_tokens < 1:
            raise UsageError(f"budget_tokens must be positive, not {budget_tokens}")
        when = _as_datetime(as_of)
        if vector is not None and np.shape(vector) != (self.embedder.dim,):
            raise UsageError(
                f"the query vector has shape {np.shape(vector)}; this memory's embedder "
                f"gives ({self.embedder.dim},)"
            )
        if fresh and self._due():
            self.consolidate()
        self.sync_index()
        return retrieve(
            self.log,
            self.index,
            self.embedder,
            self.namespace,
            query,
            k=k,
            budget_tokens=budget_tokens,
            as_of=when,
            include_history=include_history,
            config=self.retrieval,
            vector=vector,
        )

    async def aretrieve(self, query: str, **kwargs: Any) -> Retrieval:
        """Async :meth:`retrieve`."""
        return await asyncio.to_thread(self.retrieve, query, **kwargs)

    def reason(self, query: str, *, k: int = 10, budget_tokens: int | None = 1500) -> Reasoning:
        """Answer ``query`` from retrieved knowledge with the model; offline, the ranked
        items with ``answer=None``."""
        found = self.retrieve(query, k=k, budget_tokens=budget_tokens)
        if self.model is None:
            return Reasoning(query=query, answer=None, items=list(found.items))
        prompt = load_prompt("reason")
        reply = self.model.structured(
            [
                {"role": "system", "content": prompt["system"]},
                {
                    "role": "user",
                    "content": prompt["user"].format(context=found.as_context(), query=query),
                },
            ],
            _Answer,
        )
        known = {i.id for i in found.items}
        return Reasoning(
            query=query,
            answer=reply.answer,
            cited=[c.strip("[] ") for c in reply.cited if c.strip("[] ") in known],
            items=list(found.items),
            model=getattr(self.model, "name", "model"),
        )

    async def areason(self, query: str, **kwargs: Any) -> Reasoning:
        """Async :meth:`reason`."""
        return await asyncio.to_thread(self.reason, query, **kwargs)

    def get(self, item_id: str) -> Fact | Procedure | None:
        """A fact or procedure of this namespace by id (None if absent or elsewhere)."""
        rows = self.log.items(self.namespace, [item_id])
        return to_node(rows[0], self.log.terms_of(self.namespace, [item_id])) if rows else None

    def facts(self, *, current_only: bool = False, limit: int | None = None) -> list[Fact]:
        """The namespace's facts, oldest first."""
        rows = self.log.items(self.namespace, kind="fact", current_only=current_only, limit=limit)
        tags = self.log.terms_of(self.namespace, [r["id"] for r in rows])
        return [n for r in rows if isinstance(n := to_node(r, tags), Fact)]

    def procedures(self, *, limit: int | None = None) -> list[Procedure]:
        """The namespace's procedures, oldest first."""
        rows = self.log.items(self.namespace, kind="procedure", limit=limit)
        return [n for r in rows if isinstance(n := to_node(r, {}), Procedure)]

    def episodes(self, *, limit: int | None = None) -> list[StoredEpisode]:
        """The namespace's episodes in the order they were added."""
        return [stored_episode(r) for r in self.log.episodes(self.namespace, limit=limit)]

    def audit(self, limit: int = 50) -> list[AuditEntry]:
        """The latest changes, oldest first."""
        return self.log.audit_log(self.namespace, limit)

    def stats(self) -> dict[str, Any]:
        """Counts of the namespace, and what serves it."""
        out: dict[str, Any] = dict(self.log.counts(self.namespace))
        out["namespace"] = str(self.namespace)
        out["path"] = str(self.path)
        out["extractor"] = self.extractor.name
        return out

    def graph(self, limit: int = 200) -> nx.DiGraph:
        """A networkx view of up to ``limit`` items with their episodes and subgoals."""
        import networkx as nx

        g = nx.DiGraph()
        for row in self.log.items(self.namespace, limit=limit):
            g.add_node(
                row["id"], kind=row["kind"], text=row["text"], current=row["valid_to"] is None
            )
            for ep in unpack(row["sources"]):
                if ep:
                    g.add_node(ep, kind="episode")
                    g.add_edge(row["id"], ep, relation="derived_from")
            if row["superseded_by"]:
                g.add_edge(row["id"], row["superseded_by"], relation="superseded_by")
            if row["subgoal_id"]:
                g.add_node(row["subgoal_id"], kind="subgoal", text=row["subgoal"])
                g.add_edge(row["subgoal_id"], row["id"], relation="procedure")
        return g

    # -- forgetting and the index ---------------------------------------------------------

    def forget(
        self,
        ids: Sequence[str] = (),
        *,
        episodes: Sequence[str] = (),
        session: str | None = None,
    ) -> ForgetReport:
        """Remove items (by id), episodes (and the items left with no source), or a whole
        session, from the log and from every retrieval path; each removal is audited."""
        ns = self.namespace
        if isinstance(ids, str) or isinstance(episodes, str):
            raise UsageError("forget() takes lists of ids")
        report = ForgetReport()
        ep_ids = list(episodes)
        item_ids = [r["id"] for r in self.log.items(ns, list(ids))] if ids else []
        if session is not None:
            scoped = ns.model_copy(update={"session": session})
            ep_ids += [r["id"] for r in self.log.episodes(scoped)]
            item_ids += [r["id"] for r in self.log.items(scoped)]
        ep_ids = (
            [r["id"] for r in self.log.episodes(ns, ids=list(dict.fromkeys(ep_ids)))]
            if ep_ids
            else []
        )
        with self.log.transaction() as db:
            if ep_ids:
                touched = list(self.log.items_of_episodes(ns, ep_ids))
                n = self.log.delete_episodes(db, ns, ep_ids)
                report.episodes = ep_ids[:n] if n == len(ep_ids) else ep_ids
                item_ids += self.log.orphans(db, ns, touched)
                for e in ep_ids:
                    self.log.audit(db, ns, "forget_episode", e)
            item_ids = list(dict.fromkeys(item_ids))
            if item_ids:
                self.log.delete_items(db, ns, item_ids)
                for i in item_ids:
                    self.log.audit(db, ns, "forget", i)
        report.items = item_ids
        if item_ids:
            self.index.delete(self._space, item_ids)
            drop_concepts(self.index, self._space)
        return report

    async def aforget(self, ids: Sequence[str] = (), **kwargs: Any) -> ForgetReport:
        """Async :meth:`forget`."""
        return await asyncio.to_thread(self.forget, ids, **kwargs)

    def sync_index(self) -> int:
        """Index the items the vector index lacks (after a crash between the two writes)."""
        n = 0
        while rows := self.log.unindexed(self.namespace, 2000):
            vectors = self.embedder.embed([r["text"] for r in rows])
            self.index.add(
                self._space,
                [r["id"] for r in rows],
                vectors,
                [{"session": r["session"], "kind": r["kind"]} for r in rows],
            )
            self.log.mark_indexed(self.namespace, [r["id"] for r in rows])
            n += len(rows)
        return n

    def reindex(self) -> int:
        """Rebuild this namespace's vector index from the log; returns the items indexed."""
        self.index.drop(self._space)
        drop_concepts(self.index, self._space)
        self.log.mark_all_unindexed(self.namespace)
        n = self.sync_index()
        with self.log.transaction() as db:
            self.log.audit(db, self.namespace, "reindex", None, items=n, index=self.index.name)
        return n


def _as_datetime(value: datetime | str | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    from lemmata.memory.dates import parse_timestamp

    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise UsageError(f"as_of: {exc}") from None
