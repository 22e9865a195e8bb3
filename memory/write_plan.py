"""Write planning: what a batch of drafted facts and procedures does to stored knowledge.

:func:`plan_writes` decides, without touching the log, the index or the embedder:

1. **duplicates**: a fact whose normalised text a current stored item (or an earlier fact of
   the batch) has is not inserted; its sources are merged into that item, and its id is the
   item's;
2. **contradictions by rule**: a fact making a claim (``parse_claim``) that contradicts a
   current stored fact with the same claim supersedes it (or, when the stored one is the
   newer, enters history already superseded); two facts of the batch do the same to each
   other;
3. **ambiguous pairs**: a fact that no rule decided and that a stored fact is nearly
   identical to in embedding (cosine similarity at least ``ambiguous_at``, sharing an entity)
   goes to ``judge`` (the model, in :class:`~lemmata.memory.Memory`), or is counted as
   ambiguous and kept when there is none.

What it needs from the log comes in as data (:class:`Existing`; :func:`lookups` says what to
gather), and what it decides comes out as a :class:`WritePlan` that the writer applies in one
transaction.

>>> from lemmata.memory.extract import DraftFact
>>> from lemmata.memory.types import Namespace
>>> ns = Namespace(user="alice", agent="bot")
>>> drafts = [DraftFact("Alice lives in Porto.", ["ep1"], [], []),
...           DraftFact("Alice lives in Porto.", ["ep2"], [], [])]
>>> plan = plan_writes(ns, drafts, ["s1", "s1"], [], [], Existing(), origin="offline",
...                    now="2024-05-01T00:00:00")
>>> len(plan.rows), plan.duplicates, plan.rows[0].sources
(1, 1, ['ep1', 'ep2'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lemmata.memory.consolidate import parse_claim, relate_by_rules
from lemmata.memory.extract import DraftFact, DraftProcedure
from lemmata.memory.rows import ItemRow
from lemmata.memory.text import entities, normalise, terms
from lemmata.memory.types import Namespace, procedure_text, stable_id

__all__ = [
    "Audit",
    "Existing",
    "Judge",
    "Lookups",
    "MergedSources",
    "StoredFact",
    "Supersession",
    "WritePlan",
    "lookups",
    "plan_writes",
]


@dataclass(frozen=True)
class StoredFact:
    """A current stored item that a draft may contradict or nearly repeat."""

    id: str
    text: str
    valid_from: str | None = None
    credibility: float = 1.0
    #: its tags and entities (an ambiguous pair must share one of the new fact's entities)
    terms: frozenset[str] = frozenset()


@dataclass
class Existing:
    """What the log and the index hold that a batch may meet, as data."""

    #: normalised text -> the current stored items with it, in the log's order
    by_norm: Mapping[str, Sequence[str]] = field(default_factory=dict)
    #: claim key (``claim:...``) -> the current stored facts carrying it
    by_claim: Mapping[str, Sequence[StoredFact]] = field(default_factory=dict)
    #: for each fact draft (by position), its nearest stored items: (id, cosine distance)
    near: Sequence[Sequence[tuple[str, float]]] = ()
    #: the current stored items among ``near`` that :func:`lookups` asked for, by id
    current: Mapping[str, StoredFact] = field(default_factory=dict)


@dataclass(frozen=True)
class Lookups:
    """What :func:`plan_writes` will ask :class:`Existing` for."""

    norms: list[str]
    claim_keys: list[str]
    near_ids: list[str]


class Supersession(NamedTuple):
    """A stored item closed by the batch: valid until ``valid_to``, superseded by ``by``."""

    item_id: str
    valid_to: str
    by: str | None


class MergedSources(NamedTuple):
    """Source episodes a duplicate adds to the stored item it repeats."""

    item_id: str
    sources: list[str]


class Audit(NamedTuple):
    """One audit entry the write records."""

    op: str
    item_id: str | None
    detail: dict[str, Any]


#: Decides an ambiguous pair (stored, new): ``"contradiction"``, ``"duplicate"`` or anything
#: else for neither.
Judge = Callable[[StoredFact, ItemRow], str]


@dataclass
class WritePlan:
    """What a batch does, for the writer to apply in one transaction."""

    #: the items to insert: new facts (some already superseded), then procedures
    rows: list[ItemRow] = field(default_factory=list)
    #: for each row, its draft's place among the facts followed by the procedures
    drafts: list[int] = field(default_factory=list)
    #: for each fact draft, its id, or the id of the item it duplicates ("" if rejected)
    fact_ids: list[str] = field(default_factory=list)
    #: for each procedure draft, its id
    procedure_ids: list[str] = field(default_factory=list)
    merged: list[MergedSources] = field(default_factory=list)
    closes: list[Supersession] = field(default_factory=list)
    audits: list[Audit] = field(default_factory=list)
    duplicates: int = 0
    rejected: int = 0
    ambiguous: int = 0


def lookups(
    facts: Sequence[DraftFact],
    near: Sequence[Sequence[tuple[str, float]]] = (),
    *,
    ambiguous_at: float = 0.92,
) -> Lookups:
    """The normalised texts, claim keys and near neighbours whose stored items the plan for
    ``facts`` needs (``near`` as in :attr:`Existing.near`)."""
    norms = [n for f in facts if (n := normalise(f.statement))]
    claims = [c.key for f in facts if (c := parse_claim(f.statement)) is not None]
    close = [i for hits in near for i, d in hits if 1.0 - d >= ambiguous_at]
    return Lookups(
        norms=list(dict.fromkeys(norms)),
        claim_keys=list(dict.fromkeys(claims)),
        near_ids=list(dict.fromkeys(close)),
    )


def plan_writes(
    ns: Namespace,
    facts: Sequence[DraftFact],
    fact_sessions: Sequence[str],
    procedures: Sequence[DraftProcedure],
    procedure_sessions: Sequence[str],
    existing: Existing,
    *,
    origin: str,
    now: str,
    ambiguous_at: float = 0.92,
    judge: Judge | None = None,
) -> WritePlan:
    """Decide duplicates, contradictions and supersession for one batch (see the module).

    ``now`` (ISO) is when a fact with no time of its own starts to hold, for what it
    supersedes. ``judge`` is asked about ambiguous pairs; without one they are counted.
    """
    plan = WritePlan()
    batch_norm: dict[str, ItemRow] = {}
    batch_claims: dict[str, list[ItemRow]] = {}
    for i, draft in enumerate(facts):
        norm = normalise(draft.statement)
        if not norm:
            plan.rejected += 1
            plan.fact_ids.append("")
            continue
        session = fact_sessions[i]
        # 1. duplicates: same normalised text, stored or earlier in this batch
        same = existing.by_norm.get(norm, ())
        if same or norm in batch_norm:
            target = same[0] if same else batch_norm[norm].id
            if norm in batch_norm and not same:
                earlier = batch_norm[norm]
                earlier.sources += [s for s in draft.sources if s not in earlier.sources]
            else:
                plan.merged.append(MergedSources(target, draft.sources))
            plan.fact_ids.append(target)
            plan.duplicates += 1
            plan.audits.append(
                Audit("duplicate", target, {"statement": draft.statement, "sources": draft.sources})
            )
            continue
        fid = stable_id("fa", ns.user, ns.agent, session, norm, *sorted(draft.sources))
        row = ItemRow(
            id=fid,
            kind="fact",
            session=session,
            text=draft.statement,
            norm=norm,
            credibility=draft.credibility,
            valid_from=draft.valid_from.isoformat() if draft.valid_from else None,
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
        decided = len(plan.closes) + len(plan.audits)
        if claim is not None:
            row.entities.append(claim.key)
            for old in existing.by_claim.get(claim.key, ()):
                if relate_by_rules(draft.statement, old.text) == "contradiction":
                    _supersede(plan, row, old.id, old.valid_from, now)
            for old_row in batch_claims.get(claim.key, []):
                if relate_by_rules(draft.statement, old_row.text) == "contradiction":
                    _supersede_in_batch(plan, row, old_row, now)
            batch_claims.setdefault(claim.key, []).append(row)
        # 3. near neighbours no rule decided: the judge, or kept and counted
        if len(plan.closes) + len(plan.audits) == decided:
            near = existing.near[i] if i < len(existing.near) else ()
            _ambiguous(plan, row, near, existing.current, ambiguous_at, judge, now)
        batch_norm[norm] = row
        plan.rows.append(row)
        plan.drafts.append(i)
        plan.fact_ids.append(fid)

    for j, p in enumerate(procedures):
        session = procedure_sessions[j]
        text = procedure_text(p.subgoal, p.steps, p.insight, p.outcome)
        sg = normalise(p.subgoal)
        pid = stable_id("pr", ns.user, ns.agent, session, sg, text, *sorted(p.sources))
        plan.rows.append(
            ItemRow(
                id=pid,
                kind="procedure",
                session=session,
                text=text,
                norm=normalise(text),
                origin=origin,
                subgoal_id=stable_id("sg", ns.user, ns.agent, sg),
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
        plan.drafts.append(len(facts) + j)
        plan.procedure_ids.append(pid)
    return plan


def _supersede(plan: WritePlan, row: ItemRow, old_id: str, old_from: str | None, now: str) -> None:
    """A new fact contradicts a stored one: the older of the two gives way."""
    if old_from is not None and row.valid_from is not None and old_from > row.valid_from:
        # the stored fact is the newer one: the new fact enters history, already closed
        row.valid_to, row.superseded_by = old_from, old_id
        plan.audits.append(Audit("superseded", row.id, {"by": old_id}))
        return
    new_from = row.valid_from or now
    plan.closes.append(Supersession(old_id, new_from, row.id))
    plan.audits.append(Audit("superseded", old_id, {"by": row.id, "valid_to": new_from}))


def _supersede_in_batch(plan: WritePlan, row: ItemRow, old: ItemRow, now: str) -> None:
    """Two facts of the batch contradict each other: the one that holds from later wins."""
    if old.valid_to is not None:
        return
    if (old.valid_from or "") > (row.valid_from or ""):
        row.valid_to, row.superseded_by = old.valid_from, old.id
        plan.audits.append(Audit("superseded", row.id, {"by": old.id}))
    else:
        old.valid_to = row.valid_from or now
        old.superseded_by = row.id
        plan.audits.append(Audit("superseded", old.id, {"by": row.id, "valid_to": old.valid_to}))


def _ambiguous(
    plan: WritePlan,
    row: ItemRow,
    near: Sequence[tuple[str, float]],
    current: Mapping[str, StoredFact],
    ambiguous_at: float,
    judge: Judge | None,
    now: str,
) -> None:
    """Stored facts nearly identical to ``row`` that share an entity with it and that no rule
    relates: each goes to ``judge``, or counts as ambiguous."""
    close = [i for i, d in near if 1.0 - d >= ambiguous_at and i in current]
    if not close:
        return
    ents = {e for e in row.entities if not e.startswith(("date:", "claim:"))}
    # in id order, whatever order the index gives equally near items in
    for old in (current[i] for i in sorted(close)):
        if ents and not ents & old.terms:
            continue
        if relate_by_rules(row.text, old.text) != "unknown":
            continue
        if judge is None:
            plan.ambiguous += 1
            continue
        verdict = judge(old, row)
        if verdict == "contradiction":
            _supersede(plan, row, old.id, old.valid_from, now)
        elif verdict == "duplicate":
            row.credibility = max(row.credibility, old.credibility)
            plan.audits.append(
                Audit("near_duplicate", row.id, {"of": old.id, "decided_by": "model"})
            )
