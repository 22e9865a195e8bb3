"""Writing a batch of structured knowledge: gather what the batch may meet in the log and the
index, let :func:`~lemmata.memory.write_plan.plan_writes` decide duplicates, contradictions and
supersession, apply the plan in one transaction, then index what is new.

:meth:`Memory.consolidate <lemmata.memory.core.Memory.consolidate>` calls :func:`commit` for
each structured session, and so do ``add_facts`` and ``add_procedure`` for knowledge given
directly. :class:`ConsolidationReport` counts what happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from lemmata.memory.consolidate import RelationVerdict
from lemmata.memory.extract import DraftFact, Extraction, calls_made, calls_since, load_prompt
from lemmata.memory.rows import ItemRow
from lemmata.memory.types import procedure_text
from lemmata.memory.write_plan import Existing, Judge, StoredFact, lookups, plan_writes

if TYPE_CHECKING:
    import sqlite3

    from lemmata.llm.base import ChatModel
    from lemmata.memory.core import Memory

__all__ = ["ConsolidationReport", "commit"]


@dataclass
class ConsolidationReport:
    """What one :meth:`Memory.consolidate` did.

    ``episodes`` and ``segments`` count what was structured. A segment (a session's pending
    episodes) whose extraction raised a :class:`~lemmata.errors.LemmataError` (a reply that
    never parsed, a model that did not answer) stays pending and counts in ``failed``
    (``failed_episodes`` its episodes, ``errors`` one ``"session: [code] message"`` each); it is
    retried after a backoff (:attr:`Memory.retry_delays_s`), and until then it counts in
    ``deferred``. A session left for a fuller batch (``batch_episodes``) counts in ``waiting``
    (``waiting_episodes`` its episodes).
    """

    episodes: int = 0
    segments: int = 0
    failed: int = 0
    failed_episodes: int = 0
    deferred: int = 0
    waiting: int = 0
    waiting_episodes: int = 0
    errors: list[str] = field(default_factory=list)
    facts_added: int = 0
    procedures_added: int = 0
    duplicates: int = 0
    superseded: int = 0
    ambiguous: int = 0
    rejected: int = 0
    model_calls: int = 0
    extractor: str = "offline"


def commit(
    memory: Memory,
    extraction: Extraction,
    fact_sessions: Sequence[str],
    proc_sessions: Sequence[str],
    structured: Sequence[str],
    *,
    origin: str,
    report: ConsolidationReport | None = None,
) -> tuple[list[str], list[str]]:
    """Gather what the batch may meet in the log and the index, let :func:`plan_writes`
    decide duplicates and contradictions, then write the plan in one transaction and index
    what is new. Returns the ids of the facts (new or the ones they duplicate) and of the
    procedures."""
    ns = memory.namespace
    report = report or ConsolidationReport()
    facts = extraction.facts
    procs = extraction.procedures
    texts = [f.statement for f in facts] + [
        procedure_text(p.subgoal, p.steps, p.insight, p.outcome) for p in procs
    ]
    vectors = memory.embedder.embed(texts) if texts else np.zeros((0, 1), np.float32)
    near: list[list[tuple[str, float]]] = (
        memory.index.query(memory._space, vectors[: len(facts)], 5) if len(facts) else []
    )
    plan = plan_writes(
        ns,
        facts,
        fact_sessions,
        procs,
        proc_sessions,
        _existing(memory, facts, near),
        origin=origin,
        now=datetime.now().isoformat(timespec="seconds"),
        ambiguous_at=memory.ambiguous_at,
        judge=_judge(memory.model, report) if memory.model is not None else None,
    )
    rows = plan.rows
    inserted: list[ItemRow] = []
    with memory.log.transaction() as db:
        for row in rows:
            if row.subgoal_id:
                memory.log.ensure_subgoal(db, ns, row.subgoal_id, row.subgoal_text or "")
            if memory.log.insert_item(db, ns, row):
                inserted.append(row)
                memory.log.audit(
                    db, ns, f"add_{row.kind}", row.id, text=row.text, sources=row.sources
                )
        for target, sources in plan.merged:
            memory.log.add_sources(db, ns, target, sources)
        for old_id, valid_to, successor in plan.closes:
            memory.log.close_item(db, ns, old_id, valid_to, successor)
        for op, item_id, detail in plan.audits:
            memory.log.audit(db, ns, op, item_id, **detail)
        if structured:
            memory.log.mark_structured(db, ns, structured)
            memory.log.audit(
                db, ns, "consolidate", None, episodes=len(structured), extractor=origin
            )
    report.rejected += plan.rejected
    report.duplicates += plan.duplicates
    report.ambiguous += plan.ambiguous
    report.superseded += len(plan.closes)
    report.facts_added += sum(1 for r in inserted if r.kind == "fact")
    report.procedures_added += sum(1 for r in inserted if r.kind == "procedure")
    if inserted:
        keep = {r.id for r in inserted}
        idx = [k for k, r in enumerate(rows) if r.id in keep]
        memory.index.add(
            memory._space,
            [rows[k].id for k in idx],
            np.stack([vectors[plan.drafts[k]] for k in idx]),
            [{"session": rows[k].session, "kind": rows[k].kind} for k in idx],
        )
        memory.log.mark_indexed(ns, [rows[k].id for k in idx])
    return plan.fact_ids, plan.procedure_ids


def _existing(
    memory: Memory, facts: Sequence[DraftFact], near: list[list[tuple[str, float]]]
) -> Existing:
    """The stored items a batch of facts may duplicate, contradict or nearly repeat (what
    :func:`lookups` names), read from the log."""
    ns = memory.namespace
    need = lookups(facts, near, ambiguous_at=memory.ambiguous_at)
    by_norm = {
        n: [r["id"] for r in memory.log.by_norm(ns, n) if r["valid_to"] is None] for n in need.norms
    }
    by_claim = {
        key: _stored_facts(memory, memory.log.items(ns, memory.log.items_with_term(ns, key)))
        for key in need.claim_keys
    }
    current = (
        _stored_facts(
            memory, memory.log.items(ns, need.near_ids, current_only=True), with_terms=True
        )
        if need.near_ids
        else []
    )
    return Existing(
        by_norm=by_norm,
        by_claim=by_claim,
        near=near,
        current={f.id: f for f in current},
    )


def _stored_facts(
    memory: Memory, rows: Sequence[sqlite3.Row], *, with_terms: bool = False
) -> list[StoredFact]:
    tags = memory.log.terms_of(memory.namespace, [r["id"] for r in rows]) if with_terms else {}
    return [
        StoredFact(
            id=r["id"],
            text=r["text"],
            valid_from=r["valid_from"],
            credibility=float(r["credibility"]),
            terms=frozenset(t for t, _ in tags.get(r["id"], [])),
        )
        for r in rows
    ]


def _judge(model: ChatModel, report: ConsolidationReport) -> Judge:
    """Ask ``model`` how an ambiguous pair relates (its calls counted in ``report``)."""

    def judge(old: StoredFact, new: ItemRow) -> str:
        prompt = load_prompt("relate")
        before = calls_made(model)
        verdict = model.structured(
            [
                {"role": "system", "content": prompt["system"]},
                {
                    "role": "user",
                    "content": prompt["user"].format(
                        older=old.text,
                        older_time=old.valid_from or "unknown",
                        newer=new.text,
                        newer_time=new.valid_from or "unknown",
                    ),
                },
            ],
            RelationVerdict,
        )
        report.model_calls += calls_since(model, before)
        return verdict.relation

    return judge
