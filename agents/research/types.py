"""The records of a research run: insights, hypotheses, and the checklist items they are scored
against."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

__all__ = ["DIRECTIONS", "KINDS", "ChecklistItem", "Direction", "Hypothesis", "Insight", "Kind"]

Kind = Literal[
    "distribution",
    "group_difference",
    "trend",
    "correlation",
    "outlier",
    "change",
    "share",
    "relationship",
    "other",
]
Direction = Literal["higher", "lower", "increase", "decrease", "positive", "negative", "none"]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
DIRECTIONS: tuple[str, ...] = Direction.__args__  # type: ignore[attr-defined]


def _entity(text: str) -> str:
    column, sep, value = text.partition("=")
    if not sep or not column.strip():
        raise ValueError(f"entity {text!r} is not of the form column=value")
    return f"{column.strip()}={value.strip()}"


class Insight(BaseModel):
    """One confirmed finding, with the query that reproduces its value.

    ``evidence_sql`` returns ``value`` as the first cell of its first row, so that anyone can
    check the statement against the data.
    """

    statement: str = Field(min_length=1)
    kind: Kind
    table: str
    columns: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    direction: Direction | None = None
    value: float | None = None
    evidence_sql: str = Field(min_length=1)
    # How sure the explorer is (a p-value turned into a score, or a model's own), and the
    # test behind it; kept in report.json under "support", not part of the checklist match.
    score: float = 0.0
    support: dict[str, Any] = Field(default_factory=dict)

    @field_validator("entities")
    @classmethod
    def _entities(cls, value: list[str]) -> list[str]:
        return [_entity(v) for v in value]

    def key(self) -> tuple[Any, ...]:
        """What makes two insights the same finding (for deduplication)."""
        return (
            self.kind,
            self.table.lower(),
            tuple(sorted(c.lower() for c in self.columns)),
            tuple(sorted(e.lower() for e in self.entities)),
            self.direction,
        )

    def public(self) -> dict[str, Any]:
        """The fields report.json lists for each insight."""
        return self.model_dump(exclude={"score", "support"}) | {"support": self.support}


class Hypothesis(BaseModel):
    """Something worth testing: a kind of insight about some columns, ranked by ``priority``
    (the expected information of testing it)."""

    kind: Kind
    table: str
    columns: list[str]
    entities: list[str] = Field(default_factory=list)
    priority: float = 0.0
    origin: Literal["explorer", "model", "follow-up"] = "explorer"
    note: str = ""
    sql: str | None = None

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.table, tuple(self.columns), tuple(self.entities), self.sql)


class ChecklistItem(BaseModel):
    """One insight a run should find, as a checklist states it.

    ``tolerance`` is relative (a share of ``value``) unless ``absolute`` is set. Items loaded
    from free-text checklists (DDR-Bench) carry ``question``/``answer`` and kind ``other``.
    """

    id: str
    kind: Kind
    table: str = ""
    columns: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    direction: Direction | None = None
    value: float | None = None
    tolerance: float = 0.1
    absolute: bool = False
    statement: str = ""
    question: str | None = None
    answer: str | None = None
