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
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from lemmata.errors import LemmataError, UsageError
from lemmata.memory.consolidate import RelationVerdict, parse_claim, relate_by_rules
from lemmata.memory.extract import (
    DraftFact,
    DraftProcedure,
    Extraction,
    Extractor,
    ModelExtractor,
    OfflineExtractor,
    StoredEpisode,
    calls_made,
    calls_since,
    load_prompt,
)
from lemmata.memory.log import ItemRow, MemoryLog
from lemmata.memory.retrieve import RetrievalConfig, retrieve
from lemmata.memory.text import entities, normalise, terms
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
    procedure_text,
    stable_id,
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
class ConsolidationReport:
    """What one :meth:`Memory.consolidate` did.

    ``episodes`` and ``segments`` count what was structured. A segment (a session's pending
    episodes) whose extraction raised a :class:`~lemmata.errors.LemmataError` (a reply that
    never parsed, a model that did not answer) stays pending and counts in ``failed``
    (``failed_episodes`` its episodes, ``errors`` one ``"session: [code] message"`` each); it is
    retried after a backoff (:attr:`Memory.retry_delays_s`), and until then it counts in
    ``deferred``.
    """

    episodes: int = 0
    segments: int = 0
    failed: int = 0
    failed_episodes: int = 0
    deferred: int = 0
    errors: list[str] = field(default_factory=list)
    facts_added: int = 0
    procedures_added: int = 0
    duplicates: int = 0
    superseded: int = 0
    ambiguous: int = 0
    rejected: int = 0
    model_calls: int = 0
    extractor: str = "offline"


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


class _Shared:
    """What namespaces of one memory directory share: the log, the index, the embedder."""

    def __init__(
        self,
        path: Path,
        settings: Settings,
        embedder: Embedder | None,
        index: VectorIndex | str | None,
    ) -> None:
        self.path = path
        self.settings = settings
        self.log = MemoryLog(path / "memory.sqlite3")
        self._embedder = embedder
        self._index_spec = index
        self._index: VectorIndex | None = index if not isinstance(index, str | None) else None
        self.lock = threading.RLock()
        self._consolidating: dict[tuple[str, str], threading.Lock] = {}

    def consolidation_lock(self, space: tuple[str, str]) -> threading.Lock:
        """One lock per (user, agent) space, whichever :meth:`Memory.scoped` view asks: two
        views structuring the same pending episodes at once would derive their facts twice."""
        with self.lock:
            return self._consolidating.setdefault(space, threading.Lock())

    @contextmanager
    def consolidating(self, space: tuple[str, str]) -> Iterator[None]:
        """Hold the space's consolidation lock: the thread lock of this process, then an
        exclusive ``flock`` on ``locks/consolidate-<digest>.lock`` beside the log, which another
        process opening the same directory waits for as well (the kernel drops it if the
        holder dies). Where ``fcntl`` is missing (Windows) only the thread lock is held."""
        with self.consolidation_lock(space):
            try:
                import fcntl
            except ImportError:  # pragma: no cover - not POSIX
                yield
                return
            digest = hashlib.sha256(f"{space[0]}\x1f{space[1]}".encode()).hexdigest()[:32]
            folder = self.path / "locks"
            folder.mkdir(exist_ok=True)
            with open(folder / f"consolidate-{digest}.lock", "a+b") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from lemmata.embeddings import get_embedder

            self._embedder = get_embedder(self.settings)
        return self._embedder

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            from lemmata.memory.index import ChromaIndex

            spec = self._index_spec
            name, dim = self.embedder.name, self.embedder.dim
            if isinstance(spec, str) and spec.startswith(("http://", "https://")):
                from urllib.parse import urlparse

                url = urlparse(spec)
                self._index = ChromaIndex.http(
                    url.hostname or "127.0.0.1", url.port or 8000, embedder=name, dim=dim
                )
            elif spec is None or spec == "chroma":
                self._index = ChromaIndex.local(self.path / "chroma", embedder=name, dim=dim)
            else:
                raise UsageError(
                    f"index {spec!r}: give 'chroma' (embedded), a Chroma server URL "
                    "(http://HOST:PORT) or a VectorIndex"
                )
        return self._index


class Memory:
    """A PlugMem memory: episodes in, knowledge out, confined to one namespace.

    ``path`` is a directory (created if missing; default ``data_dir/memory``) holding
    ``memory.sqlite3`` (the source of truth) and ``chroma/`` (the embedded vector index).
    ``index`` may instead name a Chroma server (``"http://127.0.0.1:8000"``) or be any
    :class:`~lemmata.memory.index.VectorIndex`. With ``model`` set, structuring and ambiguous
    pairs use it; without, everything runs offline.
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
        _shared: _Shared | None = None,
    ) -> None:
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
            _shared = _Shared(root, settings, embedder, index)
        self._shared = _shared
        self.model = model
        self.extractor: Extractor = extractor or (
            ModelExtractor(model) if model is not None else OfflineExtractor()
        )
        self.retrieval = retrieval or RetrievalConfig()
        self.ambiguous_at = ambiguous_at

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
            _shared=self._shared,
        )

    def close(self) -> None:
        """Close the log (the index needs no closing)."""
        self.log.close()

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
        after a failure of this memory's extractor is not due)."""
        return self.log.has_due(self.namespace, _clock(), self.extractor.name)

    def consolidate(
        self, *, progress: Progress | None = None, retry_failed: bool = False
    ) -> ConsolidationReport:
        """Structure every pending episode of the namespace, a session at a time.

        A session whose extraction fails (the model's reply never parsed, the model did not
        answer) stays pending and is counted in the report's ``failed``; it is tried again once
        its backoff (:attr:`retry_delays_s`) has passed, or now with ``retry_failed`` (or by
        another extractor). The other sessions are structured all the same.
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
                segment = [_stored(r) for r in seg_rows]
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
        """Decide duplicates and contradictions, then write everything in one transaction and
        index what is new. Returns the ids of the facts (new or the ones they duplicate) and of
        the procedures."""
        ns = self.namespace
        report = report or ConsolidationReport()
        facts = extraction.facts
        procs = extraction.procedures
        proc_texts = [procedure_text(p.subgoal, p.steps, p.insight, p.outcome) for p in procs]
        texts = [f.statement for f in facts] + proc_texts
        vectors = self.embedder.embed(texts) if texts else np.zeros((0, 1), np.float32)
        fvec = vectors[: len(facts)]
        neighbours: list[list[tuple[str, float]]] = (
            self.index.query(self._space, fvec, 5) if len(facts) else []
        )

        rows: list[ItemRow] = []
        row_vec: list[np.ndarray] = []
        fact_ids: list[str] = []
        closes: list[tuple[str, str, str | None]] = []
        extra_sources: list[tuple[str, list[str]]] = []
        audits: list[tuple[str, str | None, dict[str, Any]]] = []
        batch_norm: dict[str, ItemRow] = {}
        batch_claims: dict[str, list[ItemRow]] = {}
        for i, draft in enumerate(facts):
            norm = normalise(draft.statement)
            if not norm:
                report.rejected += 1
                fact_ids.append("")
                continue
            session = fact_sessions[i]
            fid = stable_id("fa", ns.user, ns.agent, session, norm, *sorted(draft.sources))
            vf = draft.valid_from.isoformat() if draft.valid_from else None
            # 1. duplicates: same normalised text, stored or earlier in this batch
            same = [r for r in self.log.by_norm(ns, norm) if r["valid_to"] is None]
            if same or norm in batch_norm:
                target = same[0]["id"] if same else batch_norm[norm].id
                if norm in batch_norm and not same:
                    batch_norm[norm].sources += [
                        s for s in draft.sources if s not in batch_norm[norm].sources
                    ]
                else:
                    extra_sources.append((target, draft.sources))
                fact_ids.append(target)
                report.duplicates += 1
                audits.append(
                    ("duplicate", target, {"statement": draft.statement, "sources": draft.sources})
                )
                continue
            row = ItemRow(
                id=fid,
                kind="fact",
                session=session,
                text=draft.statement,
                norm=norm,
                credibility=draft.credibility,
                valid_from=vf,
                valid_to=draft.valid_to.isoformat() if draft.valid_to else None,
                origin=origin,
                event_dates=draft.event_dates,
                sources=list(draft.sources),
                tags=list(dict.fromkeys(draft.tags)),
                entities=list(dict.fromkeys(draft.entities)),
                context=draft.context,
                context_sources=list(draft.context_sources),
            )
            # 2. contradictions by rule among facts making a claim on the same key
            claim = parse_claim(draft.statement)
            decided = len(closes) + len(audits)
            if claim is not None:
                row.entities.append(claim.key)
                stored = self.log.items(ns, self.log.items_with_term(ns, claim.key))
                for old in stored:
                    if relate_by_rules(draft.statement, old["text"]) == "contradiction":
                        self._supersede(row, old["id"], old["valid_from"], closes, audits)
                for old_row in batch_claims.get(claim.key, []):
                    if relate_by_rules(draft.statement, old_row.text) == "contradiction":
                        self._supersede_in_batch(row, old_row, audits)
                batch_claims.setdefault(claim.key, []).append(row)
            # 3. near neighbours no rule decided: the model, or kept and counted
            if len(closes) + len(audits) == decided:
                self._ambiguous(
                    row, neighbours[i] if i < len(neighbours) else [], closes, audits, report
                )
            batch_norm[norm] = row
            rows.append(row)
            row_vec.append(fvec[i])
            fact_ids.append(fid)

        proc_ids: list[str] = []
        for j, p in enumerate(procs):
            session = proc_sessions[j]
            sg = normalise(p.subgoal)
            sid = stable_id("sg", ns.user, ns.agent, sg)
            pid = stable_id("pr", ns.user, ns.agent, session, sg, proc_texts[j], *sorted(p.sources))
            rows.append(
                ItemRow(
                    id=pid,
                    kind="procedure",
                    session=session,
                    text=proc_texts[j],
                    norm=normalise(proc_texts[j]),
                    origin=origin,
                    subgoal_id=sid,
                    steps=p.steps,
                    insight=p.insight,
                    outcome=p.outcome,
                    sources=p.sources,
                    tags=terms(p.subgoal)[:16],
                    entities=entities(p.subgoal),
                    valid_from=None,
                    subgoal_text=p.subgoal,
                )
            )
            row_vec.append(vectors[len(facts) + j])
            proc_ids.append(pid)

        inserted: list[ItemRow] = []
        with self.log.transaction() as db:
            for row in rows:
                if row.subgoal_id:
                    self.log.ensure_subgoal(db, ns, row.subgoal_id, row.subgoal_text or "")
                if self.log.insert_item(db, ns, row):
                    inserted.append(row)
                    self.log.audit(
                        db, ns, f"add_{row.kind}", row.id, text=row.text, sources=row.sources
                    )
            for target, sources in extra_sources:
                self.log.add_sources(db, ns, target, sources)
            for old_id, valid_to, successor in closes:
                self.log.close_item(db, ns, old_id, valid_to, successor)
            for op, item_id, detail in audits:
                self.log.audit(db, ns, op, item_id, **detail)
            if structured:
                self.log.mark_structured(db, ns, structured)
                self.log.audit(
                    db, ns, "consolidate", None, episodes=len(structured), extractor=origin
                )
        report.superseded += len(closes)
        report.facts_added += sum(1 for r in inserted if r.kind == "fact")
        report.procedures_added += sum(1 for r in inserted if r.kind == "procedure")
        if inserted:
            keep = {r.id for r in inserted}
            idx = [k for k, r in enumerate(rows) if r.id in keep]
            self.index.add(
                self._space,
                [rows[k].id for k in idx],
                np.stack([row_vec[k] for k in idx]),
                [{"session": rows[k].session, "kind": rows[k].kind} for k in idx],
            )
            self.log.mark_indexed(ns, [rows[k].id for k in idx])
        return fact_ids, proc_ids

    @staticmethod
    def _supersede(
        row: ItemRow,
        old_id: str,
        old_from: str | None,
        closes: list[tuple[str, str, str | None]],
        audits: list[tuple[str, str | None, dict[str, Any]]],
    ) -> None:
        new_from = row.valid_from or datetime.now().isoformat(timespec="seconds")
        if old_from is not None and row.valid_from is not None and old_from > row.valid_from:
            # the stored fact is the newer one: the new fact enters history, already closed
            row.valid_to, row.superseded_by = old_from, old_id
            audits.append(("superseded", row.id, {"by": old_id}))
            return
        closes.append((old_id, new_from, row.id))
        audits.append(("superseded", old_id, {"by": row.id, "valid_to": new_from}))

    @staticmethod
    def _supersede_in_batch(
        row: ItemRow, old: ItemRow, audits: list[tuple[str, str | None, dict[str, Any]]]
    ) -> None:
        if old.valid_to is not None:
            return
        if (old.valid_from or "") > (row.valid_from or ""):
            row.valid_to, row.superseded_by = old.valid_from, old.id
            audits.append(("superseded", row.id, {"by": old.id}))
        else:
            old.valid_to = row.valid_from or datetime.now().isoformat(timespec="seconds")
            old.superseded_by = row.id
            audits.append(("superseded", old.id, {"by": row.id, "valid_to": old.valid_to}))

    def _ambiguous(
        self,
        row: ItemRow,
        near: list[tuple[str, float]],
        closes: list[tuple[str, str, str | None]],
        audits: list[tuple[str, str | None, dict[str, Any]]],
        report: ConsolidationReport,
    ) -> None:
        close = [i for i, d in near if 1.0 - d >= self.ambiguous_at]
        if not close:
            return
        ents = {e for e in row.entities if not e.startswith(("date:", "claim:"))}
        for old in self.log.items(self.namespace, close, current_only=True):
            old_terms = {
                t for t, _ in self.log.terms_of(self.namespace, [old["id"]]).get(old["id"], [])
            }
            if ents and not ents & old_terms:
                continue
            if relate_by_rules(row.text, old["text"]) != "unknown":
                continue
            if self.model is None:
                report.ambiguous += 1
                continue
            prompt = load_prompt("relate")
            before = calls_made(self.model)
            verdict = self.model.structured(
                [
                    {"role": "system", "content": prompt["system"]},
                    {
                        "role": "user",
                        "content": prompt["user"].format(
                            older=old["text"],
                            older_time=old["valid_from"] or "unknown",
                            newer=row.text,
                            newer_time=row.valid_from or "unknown",
                        ),
                    },
                ],
                RelationVerdict,
            )
            report.model_calls += calls_since(self.model, before)
            if verdict.relation == "contradiction":
                self._supersede(row, old["id"], old["valid_from"], closes, audits)
            elif verdict.relation == "duplicate":
                row.credibility = max(row.credibility, float(old["credibility"]))
                audits.append(("near_duplicate", row.id, {"of": old["id"], "decided_by": "model"}))

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
        return _to_node(rows[0], self.log.terms_of(self.namespace, [item_id])) if rows else None

    def facts(self, *, current_only: bool = False, limit: int | None = None) -> list[Fact]:
        """The namespace's facts, oldest first."""
        rows = self.log.items(self.namespace, kind="fact", current_only=current_only, limit=limit)
        tags = self.log.terms_of(self.namespace, [r["id"] for r in rows])
        return [n for r in rows if isinstance(n := _to_node(r, tags), Fact)]

    def procedures(self, *, limit: int | None = None) -> list[Procedure]:
        """The namespace's procedures, oldest first."""
        rows = self.log.items(self.namespace, kind="procedure", limit=limit)
        return [n for r in rows if isinstance(n := _to_node(r, {}), Procedure)]

    def episodes(self, *, limit: int | None = None) -> list[StoredEpisode]:
        """The namespace's episodes in the order they were added."""
        return [_stored(r) for r in self.log.episodes(self.namespace, limit=limit)]

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
            for ep in (row["sources"] or "").split("\x1f"):
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
        self.log.mark_all_unindexed(self.namespace)
        n = self.sync_index()
        with self.log.transaction() as db:
            self.log.audit(db, self.namespace, "reindex", None, items=n, index=self.index.name)
        return n


class BackgroundConsolidator:
    """A daemon thread running :meth:`Memory.consolidate` while episodes are pending."""

    def __init__(self, memory: Memory, interval_s: float) -> None:
        self.memory = memory
        self.interval_s = interval_s
        self.errors: list[BaseException] = []
        self.reports: list[ConsolidationReport] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lemmata-memory", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._once()
        self._once()

    def _once(self) -> None:
        try:
            if self.memory._due():
                self.reports.append(self.memory.consolidate())
        except BaseException as exc:  # kept for the owner to see; the thread goes on
            self.errors.append(exc)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> BackgroundConsolidator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _as_datetime(value: datetime | str | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    from lemmata.memory.dates import parse_timestamp

    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise UsageError(f"as_of: {exc}") from None


def _stored(r: sqlite3.Row) -> StoredEpisode:
    import json

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


def _to_node(r: sqlite3.Row, terms_by_id: Mapping[str, list[tuple[str, str]]]) -> Fact | Procedure:
    import json

    sources = tuple((r["sources"] or "").split("\x1f")) if r["sources"] else ()
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
