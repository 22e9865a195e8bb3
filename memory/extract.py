"""Structuring: episodes of one segment (a session) become facts and procedures.

Two extractors share one interface, ``extract(segment) -> Extraction``:

- :class:`OfflineExtractor` (the default; no model): sentences are segmented; first-person
  words become the speaker ("I went" -> "Caroline went") and "you" the person addressed, so
  a fact says who said what; relative dates are resolved against the episode's time stamp
  ("yesterday (7 May 2023)"); tags (stemmed content words) and entities (names, numbers,
  dates) are attached; greetings and small talk are dropped. Runs of action episodes that
  share a subgoal become a procedure whose outcome is the episodes' score.
- :class:`ModelExtractor`: one schema-validated call per segment through a
  :class:`~lemmata.llm.ChatModel`; every fact must cite the episodes it comes from, by
  number, and a fact citing none of the segment's episodes is refused (counted in
  ``Extraction.rejected``).

Each fact's provenance is exactly the episodes its text was derived from: one episode for an
offline fact, the cited ones for a model's. The offline extractor also gives each fact the
words of the turns around it in its conversation (the one it replies to and the reply to it)
as *search context*: BM25 finds "5 years already!" by the question "how long have you been
married?" before it, but the context is never the fact's text, nor in its provenance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from lemmata.memory.dates import parse_timestamp, resolve_dates
from lemmata.memory.text import entities, split_sentences, terms

if TYPE_CHECKING:
    from lemmata.llm.base import ChatModel

__all__ = [
    "DraftFact",
    "DraftProcedure",
    "Extraction",
    "Extractor",
    "ModelExtractor",
    "OfflineExtractor",
    "SegmentKnowledge",
    "StoredEpisode",
    "calls_made",
    "calls_since",
]


def calls_made(model: Any) -> int | None:
    """How many calls ``model`` has made so far (its usage log), if it keeps one."""
    return getattr(getattr(model, "usage", None), "calls", None)


def calls_since(model: Any, before: int | None) -> int:
    """The calls ``model`` made since :func:`calls_made` said ``before``: a structured reply
    that did not validate the first time cost a retry, and the retry is a call. A model that
    keeps no usage log counts one."""
    after = calls_made(model)
    return after - before if before is not None and after is not None else 1


@dataclass(frozen=True)
class StoredEpisode:
    """An episode as read back from the log, for extractors."""

    id: str
    session: str
    kind: str
    speaker: str | None
    content: str
    timestamp: datetime | None
    subgoal: str | None = None
    outcome: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class DraftFact:
    statement: str
    sources: list[str]
    tags: list[str]
    entities: list[str]
    event_dates: list[str] = field(default_factory=list)
    valid_from: datetime | None = None
    credibility: float = 1.0
    valid_to: datetime | None = None
    # the turns around this one (the one it replies to, the reply to it): searched with the
    # fact, never part of its text or its provenance
    context: str = ""
    context_sources: list[str] = field(default_factory=list)


@dataclass
class DraftProcedure:
    subgoal: str
    steps: list[str]
    sources: list[str]
    insight: str = ""
    outcome: float | None = None


@dataclass
class Extraction:
    facts: list[DraftFact] = field(default_factory=list)
    procedures: list[DraftProcedure] = field(default_factory=list)
    rejected: int = 0
    calls: int = 0


class Extractor(Protocol):
    """Turns one segment of episodes (in order) into draft facts and procedures."""

    name: str

    def extract(self, segment: Sequence[StoredEpisode]) -> Extraction: ...


# -- offline --------------------------------------------------------------------------------

# "I live" becomes "Caroline lives": a present-tense verb after "I" (perhaps behind an adverb)
# takes the third person. Past forms, modals and words that are not verbs stay as they are.
_I_VERB = (
    r"\bI (?P<adverb>(?:really|also|just|still|usually|often|always|never|actually|sometimes|"
    r"mostly|even|only|now) )?(?P<verb>[a-z]+)\b"
)
_NOT_PRESENT_WORDS = (
    "was were had did got made saw took came said felt thought found told gave knew left bought "
    "began brought met ran wrote became kept heard lost won sent spent built put let set cut hit "
    "could would should might must can will shall may used went tried ate drove flew grew drew "
    "chose fell sat stood taught caught sold held led paid meant read wore woke swam sang rode "
    "forgot spoke broke understood a an the to so too as not and or but if"
)
_NOT_PRESENT = frozenset(_NOT_PRESENT_WORDS.split())


def _third_person(verb: str) -> str:
    if verb in _NOT_PRESENT or verb.endswith("ed"):
        return verb
    if verb in ("have", "do", "go", "be"):
        return {"have": "has", "do": "does", "go": "goes", "be": "is"}[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


_FIRST_PERSON: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), r)
    for p, r in [
        (r"\bI'm\b|\bI am\b", "{s} is"),
        (r"\bI've\b|\bI have\b", "{s} has"),
        (r"\bI'd\b", "{s} would"),
        (r"\bI'll\b|\bI will\b", "{s} will"),
        (r"\bI don't\b|\bI do not\b", "{s} doesn't"),
        (r"\bI do\b", "{s} does"),
        (_I_VERB, "{s} {adverb}{verb}"),
        (r"\bI\b", "{s}"),
        (r"\b[Mm]y\b", "{s}'s"),
        (r"\b[Mm]yself\b", "{s}"),
        (r"(?<![A-Za-z'])me\b", "{s}"),
    ]
]
_SECOND_PERSON: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), r)
    for p, r in [
        (r"\b[Yy]ou're\b|\b[Yy]ou are\b", "{a} is"),
        (r"\b[Yy]ou've\b|\b[Yy]ou have\b", "{a} has"),
        (r"\b[Yy]our\b", "{a}'s"),
        (r"\b[Yy]ou\b", "{a}"),
    ]
]
# Image captions often begin "a photo of"; the fact says so itself.
_PHOTO_OF = re.compile(r"^(?:an? (?:photo|picture|image) of )+", re.I)
_SMALL_TALK = re.compile(
    r"^(?:(?:hey|hi|hello|wow|thanks|thank you|bye|cool|nice|great|awesome|congrats|"
    r"congratulations|sure|yes|yeah|no|ok|okay|haha|lol|oh)\b[\s,!.]*)+",
    re.I,
)


# Words that carry the mood of a reply, not what it is about: a sentence made only of these
# (and the names of the people talking) is an acknowledgement ("Sounds great, Caroline!",
# "Talk to you soon!"), not a fact. Stemmed, as ``terms`` returns them.
_PHATIC = frozenset(
    terms(
        "yep yup yeah sounds sound great awesome amazing cool nice wow thanks thank glad happy "
        "totally absolutely definitely soon talk true agree right super fun lovely wonderful "
        "fantastic incredible exciting excited stoked proud appreciate bet sweet good wish "
        "luck look"
    )
)


def _phatic(name: str) -> bool:
    """A capitalised opener such as "Sounds great" is no name."""
    words = terms(name)
    return bool(words) and all(w in _PHATIC for w in words)


# "Big news: I moved..." and "Update: ..." announce a statement; they are not part of it.
_LEAD_IN = re.compile(r"^(?:[A-Za-z']+ ){0,2}[A-Za-z']+:\s+(?=\S+ \S+)")


def _rewrite(sentence: str, speaker: str | None, addressee: str | None) -> tuple[str, bool]:
    """Pronouns replaced by names; True when a first-person word was replaced."""
    changed = False
    out = sentence
    if speaker:
        for pat, rep in _FIRST_PERSON:
            if "{verb}" in rep:
                out, n = pat.subn(
                    lambda m: f"{speaker} {m['adverb'] or ''}{_third_person(m['verb'])}", out
                )
            else:
                out, n = pat.subn(rep.format(s=speaker), out)
            changed = changed or n > 0
    if addressee:
        for pat, rep in _SECOND_PERSON:
            out = pat.sub(rep.format(a=addressee), out)
    return out, changed


def _caption(ep: StoredEpisode) -> str | None:
    """The caption of the image an episode shares (LoCoMo's ``blip_caption``), if any."""
    caption = ep.meta.get("image_caption") or ep.meta.get("blip_caption")
    return caption.strip() if isinstance(caption, str) and caption.strip() else None


class OfflineExtractor:
    """Rule-based structuring that needs no model (see the module docstring)."""

    name = "offline"

    def __init__(self, *, min_terms: int = 2) -> None:
        self.min_terms = min_terms

    def extract(self, segment: Sequence[StoredEpisode]) -> Extraction:
        out = Extraction()
        seen: list[str] = []  # speakers in order of their latest turn
        actions: list[StoredEpisode] = []
        prev: StoredEpisode | None = None
        prev_facts: list[DraftFact] = []
        for ep in segment:
            if ep.kind == "action":
                if actions and actions[-1].subgoal != ep.subgoal:
                    self._procedure(actions, out)
                    actions = []
                actions.append(ep)
                continue
            if actions:
                self._procedure(actions, out)
                actions = []
            addressee = None
            if ep.speaker:
                others = [s for s in seen if s != ep.speaker]
                addressee = ep.meta.get("addressee") or (others[-1] if others else None)
                if ep.speaker in seen:
                    seen.remove(ep.speaker)
                seen.append(ep.speaker)
            facts = self._facts(ep, addressee)
            if prev is not None and prev.speaker and prev.speaker != ep.speaker:
                for f in facts:
                    f.context = prev.content[:300]
                    f.context_sources = [prev.id]
                for f in prev_facts:
                    f.context = f"{f.context} {ep.content[:300]}".strip()
                    f.context_sources = [*f.context_sources, ep.id]
            out.facts += facts
            prev, prev_facts = ep, facts
        if actions:
            self._procedure(actions, out)
        return out

    def _facts(self, ep: StoredEpisode, addressee: str | None) -> list[DraftFact]:
        text = ep.content
        caption = _caption(ep)
        sentences = split_sentences(text)
        shown = None
        if caption:
            who = ep.speaker or "Someone"
            what = _PHOTO_OF.sub("", caption.rstrip("."))
            shown = f"{who} shared a photo of {what}."
            sentences.append(shown)
        people = {n.lower() for n in (ep.speaker, addressee) if n}
        facts: list[DraftFact] = []
        for raw in sentences:
            sentence = _LEAD_IN.sub("", _SMALL_TALK.sub("", raw).strip()).strip()
            if not sentence:
                continue
            content = [t for t in terms(sentence) if t not in people]
            names = [n for n in entities(sentence) if n not in people and not _phatic(n)]
            if not names and all(t in _PHATIC for t in content):
                continue
            question = sentence.endswith("?")
            need = self.min_terms + (1 if question else 0)
            if len(content) < need and not (names and len(content) >= 1 and not question):
                continue
            rewritten, first_person = _rewrite(sentence, ep.speaker, addressee)
            resolved, dates = resolve_dates(rewritten, ep.timestamp)
            if ep.speaker and not first_person and raw != shown:
                verb = "asked" if question else "said"
                statement = f"{ep.speaker} {verb}: {resolved}"
            else:
                statement = resolved
            statement = statement[0].upper() + statement[1:]
            ents = entities(statement)
            if ep.speaker:
                ents.append(ep.speaker.lower())
            ents += [f"date:{d}" for d in dates]
            facts.append(
                DraftFact(
                    statement=statement,
                    sources=[ep.id],
                    tags=terms(resolved)[:16],
                    entities=list(dict.fromkeys(ents)),
                    event_dates=dates,
                    valid_from=ep.timestamp,
                    credibility=0.6 if question else 1.0,
                )
            )
        return facts

    @staticmethod
    def _procedure(actions: list[StoredEpisode], out: Extraction) -> None:
        if not actions:
            return
        subgoal = actions[0].subgoal
        if not subgoal:
            return
        scores = [a.outcome for a in actions if a.outcome is not None]
        outcome = scores[-1] if scores else None
        if outcome is None:
            insight = ""
        elif outcome > 0:
            insight = f"This worked in session {actions[0].session}."
        else:
            insight = "This did not work; avoid repeating it as is."
        out.procedures.append(
            DraftProcedure(
                subgoal=subgoal,
                steps=[a.content.strip() for a in actions],
                sources=[a.id for a in actions],
                insight=insight,
                outcome=outcome,
            )
        )


# -- with a model ---------------------------------------------------------------------------


@cache
def load_prompt(name: str) -> dict[str, Any]:
    """A prompt file of this package (``memory/prompts/NAME.toml``), with its ``version``."""
    from lemmata.prompts import load_prompt as load

    return load(name, "lemmata.memory")


class _ModelFact(BaseModel):
    statement: str = Field(min_length=1, max_length=2000)
    sources: list[int] = Field(min_length=1, description="numbers of the episodes it comes from")
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    when: str | None = Field(None, description="ISO date the fact is about, if any")


class _ModelProcedure(BaseModel):
    subgoal: str = Field(min_length=1)
    steps: list[str] = Field(min_length=1)
    insight: str = ""
    outcome: float | None = None
    sources: list[int] = Field(min_length=1)


class SegmentKnowledge(BaseModel):
    """What the model returns for one segment."""

    facts: list[_ModelFact] = Field(default_factory=list)
    procedures: list[_ModelProcedure] = Field(default_factory=list)


class ModelExtractor:
    """One batched, schema-validated model call per segment (see the module docstring)."""

    def __init__(self, model: ChatModel, *, max_episodes: int = 80) -> None:
        self.model = model
        self.max_episodes = max_episodes
        self.name = f"model:{getattr(model, 'name', 'model')}"

    def extract(self, segment: Sequence[StoredEpisode]) -> Extraction:
        prompt = load_prompt("extract")
        out = Extraction()
        for start in range(0, len(segment), self.max_episodes):
            part = list(segment[start : start + self.max_episodes])
            lines = []
            for i, ep in enumerate(part, 1):
                when = ep.timestamp.isoformat(timespec="minutes") if ep.timestamp else "unknown"
                who = ep.speaker or ep.kind
                extra = f" [subgoal: {ep.subgoal}]" if ep.subgoal else ""
                score = f" [outcome: {ep.outcome}]" if ep.outcome is not None else ""
                image = _caption(ep)
                shared = f" [shares an image: {image}]" if image else ""
                lines.append(f"{i}. ({when}) {who}: {ep.content}{shared}{extra}{score}")
            user = prompt["user"].format(episodes="\n".join(lines))
            before = calls_made(self.model)
            reply = self.model.structured(
                [
                    {"role": "system", "content": prompt["system"]},
                    {"role": "user", "content": user},
                ],
                SegmentKnowledge,
            )
            out.calls += calls_since(self.model, before)
            self._accept(reply, part, out)
        return out

    @staticmethod
    def _accept(reply: SegmentKnowledge, part: list[StoredEpisode], out: Extraction) -> None:
        def cited(numbers: list[int]) -> list[str]:
            return list(dict.fromkeys(part[n - 1].id for n in numbers if 1 <= n <= len(part)))

        for f in reply.facts:
            sources = cited(f.sources)
            if not sources or len(sources) < len(set(f.sources)):
                out.rejected += 1  # cites an episode that is not in the segment
                continue
            first = next(ep for ep in part if ep.id == sources[0])
            try:
                when = parse_timestamp(f.when) if f.when else None
            except ValueError:
                when = None
            out.facts.append(
                DraftFact(
                    statement=f.statement.strip(),
                    sources=sources,
                    tags=[t.lower() for t in f.tags][:16] or terms(f.statement)[:16],
                    entities=[e.lower() for e in f.entities] + entities(f.statement),
                    event_dates=[when.date().isoformat()] if when else [],
                    valid_from=first.timestamp,
                )
            )
        for p in reply.procedures:
            sources = cited(p.sources)
            if not sources:
                out.rejected += 1
                continue
            out.procedures.append(
                DraftProcedure(
                    subgoal=p.subgoal.strip(),
                    steps=[s.strip() for s in p.steps if s.strip()],
                    sources=sources,
                    insight=p.insight.strip(),
                    outcome=p.outcome,
                )
            )
