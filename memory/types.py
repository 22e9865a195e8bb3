"""The memory's values: namespaces, episodes, facts, procedures, retrieved items, audit entries.

Inputs (``Episode``, ``FactInput``, ``ProcedureInput``) are pydantic models, so a malformed
record is refused with the field that is wrong before anything is written.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lemmata.memory.dates import parse_timestamp

__all__ = [
    "AuditEntry",
    "Episode",
    "Fact",
    "FactInput",
    "Item",
    "Namespace",
    "Procedure",
    "ProcedureInput",
    "Retrieval",
    "describe_error",
    "new_id",
    "procedure_text",
    "stable_id",
]

EpisodeKind = Literal["utterance", "observation", "action"]


def describe_error(exc: ValidationError) -> str:
    """The first problem of a validation error as ``field: message``.

    >>> try:
    ...     Episode.model_validate({"content": ""})
    ... except ValidationError as exc:
    ...     print(describe_error(exc))
    content: String should have at least 1 character
    """
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(record)"
    return f"{loc}: {err['msg']}"


def new_id(prefix: str) -> str:
    """A fresh, collision-free id (128 random bits): ``ep_3f2a...``."""
    return f"{prefix}_{uuid.uuid4().hex}"


def stable_id(prefix: str, *parts: str) -> str:
    """An id derived from content, so that structuring the same episodes twice gives the same
    nodes (SHA-256 of the parts, 128 bits kept)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]
    return f"{prefix}_{digest}"


class Namespace(BaseModel):
    """Whose memory: a ``user``, an ``agent`` and optionally one ``session``.

    Every read and write of a :class:`~lemmata.memory.Memory` is confined to its namespace in
    the storage queries themselves. With ``session=None`` the namespace spans all of the
    user's sessions with that agent.
    """

    model_config = ConfigDict(frozen=True)

    user: str = Field("default", min_length=1, max_length=200)
    agent: str = Field("default", min_length=1, max_length=200)
    session: str | None = Field(None, min_length=1, max_length=200)

    def __str__(self) -> str:
        return f"{self.user}/{self.agent}" + (f"/{self.session}" if self.session else "")


class Episode(BaseModel):
    """One thing that happened: an utterance, an observation or an action.

    ``session`` defaults to the memory's session (or ``"default"``); ``timestamp`` is when it
    happened (ISO 8601 or "1:56 pm on 8 May, 2023"), used to resolve "yesterday" and to rank
    by recency. ``outcome`` (a number, typically in [-1, 1]) scores an action's result and
    feeds procedures.
    """

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=100_000)
    kind: EpisodeKind = "utterance"
    speaker: str | None = Field(None, max_length=200)
    session: str | None = Field(None, min_length=1, max_length=200)
    timestamp: datetime | None = None
    id: str | None = Field(None, min_length=1, max_length=200)
    subgoal: str | None = Field(None, max_length=2000)
    outcome: float | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("timestamp", mode="before")
    @classmethod
    def _ts(cls, value: Any) -> Any:
        return parse_timestamp(value) if isinstance(value, str) else value

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is blank")
        return value


class FactInput(BaseModel):
    """A pre-structured fact to add directly (no extraction)."""

    model_config = ConfigDict(extra="forbid")

    statement: str = Field(min_length=1, max_length=5000)
    tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    credibility: float = Field(1.0, ge=0.0, le=1.0)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    sources: list[str] = Field(default_factory=list)
    session: str | None = None

    @field_validator("valid_from", "valid_to", mode="before")
    @classmethod
    def _ts(cls, value: Any) -> Any:
        return parse_timestamp(value) if isinstance(value, str) else value


class ProcedureInput(BaseModel):
    """A prescriptive procedure: how to reach ``subgoal``, learned from ``sources``."""

    model_config = ConfigDict(extra="forbid")

    subgoal: str = Field(min_length=1, max_length=2000)
    steps: list[str] = Field(min_length=1)
    insight: str = ""
    outcome: float | None = None
    sources: list[str] = Field(default_factory=list)
    session: str | None = None


class Fact(BaseModel):
    """A propositional fact in the graph."""

    model_config = ConfigDict(frozen=True)

    id: str
    statement: str
    session: str
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    credibility: float = 1.0
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    sources: tuple[str, ...] = ()
    origin: str = "offline"


class Procedure(BaseModel):
    """A procedure under its subgoal, with the outcome it led to."""

    model_config = ConfigDict(frozen=True)

    id: str
    subgoal_id: str
    subgoal: str
    steps: tuple[str, ...]
    insight: str = ""
    outcome: float | None = None
    session: str
    sources: tuple[str, ...] = ()
    origin: str = "offline"

    @property
    def text(self) -> str:
        return procedure_text(self.subgoal, self.steps, self.insight, self.outcome)


def procedure_text(
    subgoal: str, steps: Sequence[str], insight: str = "", outcome: float | None = None
) -> str:
    """How a procedure reads as one item of knowledge.

    >>> procedure_text("book a flight", ["Search two sites.", "Book the cheapest."], "", 1.0)
    'To book a flight: Search two sites; Book the cheapest. (outcome +1.00)'
    """
    body = "; ".join(s.strip().rstrip(". ") for s in steps)
    tail = f" Insight: {insight}" if insight else ""
    score = f" (outcome {outcome:+.2f})" if outcome is not None else ""
    return f"To {subgoal}: {body}.{tail}{score}"


class Item(BaseModel):
    """One retrieved piece of knowledge, with exactly the episodes its text came from."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Literal["fact", "procedure"]
    text: str
    score: float
    provenance: tuple[str, ...]
    channels: dict[str, int] = Field(default_factory=dict)
    tokens: int = 0
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    session: str | None = None
    similarity: float | None = Field(
        default=None,
        description="cosine similarity of the item's text to the query; None when the item "
        "was found by words, terms or links only",
    )


class Retrieval(BaseModel):
    """What :meth:`Memory.retrieve` returns: the packed items and what was left out."""

    model_config = ConfigDict(frozen=True)

    query: str
    items: tuple[Item, ...]
    tokens: int
    budget_tokens: int | None
    dropped: int = 0
    elapsed_ms: float = 0.0

    @property
    def provenance(self) -> list[str]:
        """The episodes behind the items, in rank order, each once."""
        seen: dict[str, None] = {}
        for item in self.items:
            for ep in item.provenance:
                seen.setdefault(ep, None)
        return list(seen)

    def as_context(self) -> str:
        """The items as lines for a prompt, each with its id."""
        return "\n".join(f"[{item.id}] {item.text}" for item in self.items)


class AuditEntry(BaseModel):
    """One change to the memory."""

    model_config = ConfigDict(frozen=True)

    seq: int
    at: datetime
    op: str
    item_id: str | None
    detail: dict[str, Any]
