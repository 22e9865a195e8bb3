"""What every check shares: the data of a database's tables, the typed result of a check, and
the one step that turns a confirmed finding into an insight through its evidence SQL.

A check is a function ``check(ctx, h) -> Outcome``. It reads sampled rows through
:class:`CheckContext` and, when its criterion holds, hands a :class:`Finding` to
:meth:`CheckContext.confirm`, which runs the evidence SQL over all rows. The insight's value is
what that query returns: ``0.0`` is a value like any other; a query that returns NULL (or no
number) gives no insight, since nobody could check its statement.

A check raises :class:`DataProblem` for what the data holds (too few rows, a degenerate
column); the explorer records that as an observation. Any other exception is a defect of the
check and is not caught.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lemmata.agents.research.profile import ColumnProfile, Link, Survey, sample_rows
from lemmata.agents.research.types import Direction, Hypothesis, Insight, Kind
from lemmata.environments.database import Database, quote_ident

__all__ = [
    "SMALL_ROWS",
    "SMALL_STEP_UP",
    "UNITS_RATE",
    "UNITS_ROWS",
    "CheckContext",
    "DataProblem",
    "Finding",
    "Outcome",
    "TableData",
    "fmt",
    "is_flag",
    "is_scale",
    "link_note",
    "score_of",
    "to_float",
]

#: The family-wise error rate of :meth:`CheckContext.alpha`'s Bonferroni bars.
FAMILY_RATE = 0.05


class DataProblem(Exception):
    """What the data holds makes a test impossible (recorded as an observation, not raised)."""


@dataclass
class Outcome:
    """What testing one hypothesis gave: insights, follow-up hypotheses, and a note."""

    insights: list[Insight] = field(default_factory=list)
    follow_ups: list[Hypothesis] = field(default_factory=list)
    observation: str = ""


@dataclass
class Finding:
    """A confirmed finding before its evidence SQL has run.

    ``statement`` is given the value the evidence SQL returns (never a stand-in for it), so
    that what a report says is what anyone can reproduce.
    """

    kind: Kind
    table: str
    columns: list[str]
    evidence_sql: str
    statement: Callable[[float], str]
    score: float
    support: dict[str, Any]
    entities: list[str] = field(default_factory=list)
    direction: Direction | None = None


def fmt(x: float) -> str:
    """A number as a report prints it: thousands separated, three significant digits below 1."""
    if not math.isfinite(x):
        return str(x)
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def score_of(p: float) -> float:
    """A p-value as a score: -log10(p), at most 50."""
    return round(min(50.0, -math.log10(max(p, 1e-300))), 2)


def to_float(v: Any) -> float:
    """A cell as a float; NaN for NULL, booleans and what does not read as a number."""
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def is_scale(values: list[Any]) -> bool:
    """Whether a column's values are the integers of one range, 3 to 10 of them (a rating
    from 1 to 5, a number of children): an ordered scale, not labels."""
    levels = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or not float(v).is_integer():
            return False
        levels.add(int(v))
    return 3 <= len(levels) <= 10 and max(levels) - min(levels) == len(levels) - 1


def is_flag(values: list[Any]) -> bool:
    """Whether a column's values are 0 and 1 only (a grade improved or not, a death or a
    censored record)."""
    levels = {to_float(v) for v in values if v is not None and v != ""}
    return levels == {0.0, 1.0}


#: Tables with fewer rows than this are small (one row per unit), unless they are time series.
SMALL_ROWS = 200
#: A table of units (see :meth:`CheckContext.units`) with fewer rows than this is held to the
#: database's family-wise bar; in more rows, the fixed bars have the power they need.
UNITS_ROWS = 5000
#: The family-wise error rate of each kind's bar in a table of units of ``SMALL_ROWS`` rows or
#: more: half the small table's, so that correlations and group differences together spend
#: at most 5% of a database of noise (at 5% each, 3 of 20 tables of noise had a finding).
UNITS_RATE = 0.025
#: Whether a small table's correlations and group differences are held to the
#: Benjamini-Hochberg step-up bar at ``FAMILY_RATE`` over the database's hypotheses of the kind,
#: ranked among the table's (as a table of units is, at ``UNITS_RATE``); else Holm's step-down
#: bar (correlations) and Bonferroni's (group differences) at ``FAMILY_RATE``. Either way the
#: effect floors of a small table stay.
SMALL_STEP_UP = True


class TableData:
    """A table's sampled rows as arrays, loaded once per explorer."""

    def __init__(self, db: Database, survey: Survey, name: str) -> None:
        import numpy as np

        profile = survey.tables[name]
        self.name = name
        self.profile = profile
        cols = list(profile.columns)
        rows = sample_rows(db, name, cols) if cols else []
        self.n = len(rows)
        self.raw = {c: [r[i] for r in rows] for i, c in enumerate(cols)}
        self.num: dict[str, Any] = {}
        self.days: dict[str, Any] = {}
        # Ratings and counts written as a few integers (1-5) are categories for shares and
        # group differences, and an ordered scale for correlations.
        self.ordinal: list[str] = []
        small = self.n < SMALL_ROWS and not profile.series
        for c, p in profile.columns.items():
            if p.indicator:
                # Its groups are 0 and 1; the fractions filled in for missing answers are
                # neither, so they are left out of comparisons as NULLs are.
                self.raw[c] = [v if to_float(v) in (0.0, 1.0) else None for v in self.raw[c]]
            if p.role == "numeric":
                self.num[c] = np.array([to_float(v) for v in self.raw[c]], dtype=float)
            elif p.role == "categorical" and p.refers_to is None and is_scale(self.raw[c]):
                self.num[c] = np.array([to_float(v) for v in self.raw[c]], dtype=float)
                self.ordinal.append(c)
            elif p.role == "categorical" and p.refers_to is None and small and is_flag(self.raw[c]):
                # In a small table, a 0/1 outcome is ranked against measures too (a
                # point-biserial question: do students with a higher GPA improve more often?),
                # where comparing groups of a dozen rows each has little power.
                self.num[c] = np.array([to_float(v) for v in self.raw[c]], dtype=float)
                self.ordinal.append(c)
            elif p.role == "date":
                self.days[c] = np.array([p.day(v) for v in self.raw[c]], dtype=float)


class CheckContext:
    """One database's survey and data, shared by the checks run over it (optionally about one
    entity, ``(column, value)``)."""

    def __init__(self, db: Database, survey: Survey, entity: tuple[str, str] | None = None) -> None:
        self.db = db
        self.survey = survey
        self.entity = entity
        self._tables: dict[str, TableData] = {}
        # How many hypotheses of each kind the database offers (counted by the explorer), and
        # which they are (a step-down bar ranks a hypothesis among the others of its kind).
        self.family: dict[str, int] = {}
        self.members: dict[str, list[Hypothesis]] = {}
        self.memo: dict[tuple[Any, ...], Any] = {}  # what a check worked out once per database
        self.periods: dict[tuple[str, str], str] = {}  # (table, date column) -> its period

    def table(self, name: str) -> TableData:
        if name not in self._tables:
            self._tables[name] = TableData(self.db, self.survey, name)
        return self._tables[name]

    def units(self, name: str) -> bool:
        """Whether a table's rows are independent units (people, firms, countries: a cross
        section of an econometrics or survey study): not a time series (its rows follow each
        other), no time column (events), no parent it refers to (the rows of one parent are
        not independent of each other; a code whose labels a lookup table holds is no such
        parent), and fewer than ``UNITS_ROWS`` rows. Such a table's
        p-values mean what they say, so it is held to the database's family-wise bar rather
        than a fixed one (a difference of a third of a standard deviation among 500 people
        has p = 1e-4, a finding no fixed 1e-6 bar lets through)."""
        key = ("units", name)
        if key not in self.memo:
            p = self.survey.tables[name]
            self.memo[key] = (
                not p.series
                and p.time is None
                and not p.role("date")
                and not p.role("foreign_key")
                and p.rows < UNITS_ROWS
                and not any(
                    link.child == name and p.columns[link.column].role == "foreign_key"
                    for link in self.survey.links
                )
            )
        return bool(self.memo[key])

    def twin(self, table: str, column: str) -> str:
        """The first column of ``table`` that ``column`` is a monotone transform of (a wage for
        its logarithm; see :func:`~lemmata.agents.research.checks.stats.twins`), or
        ``column`` itself."""
        key = ("twins", table)
        if key not in self.memo:
            from lemmata.agents.research.checks.stats import twins

            self.memo[key] = twins(self.table(table).num)
        return str(self.memo[key].get(column, column))

    def col(self, table: str, column: str) -> ColumnProfile:
        return self.survey.tables[table].columns[column]

    def expr(self, table: str, column: str, alias: str | None = None) -> str:
        """The SQL expression of a column's value (as REAL where it mixes numbers and text)."""
        p = self.col(table, column)
        col = f"{alias}.{quote_ident(column)}" if alias else quote_ident(column)
        return f"CAST({col} AS REAL)" if p.mixed else col

    def link(self, note: str) -> Link | None:
        for link in self.survey.links:
            if note == link_note(link):
                return link
        return None

    def alpha(self, kind: str, fixed: float, rate: float = FAMILY_RATE) -> float:
        """The p-value bar for a kind: Bonferroni at a family-wise rate of ``rate`` over the
        database's hypotheses of that kind (a database with few of them needs less than a
        fixed bar, which misses clear effects in short series); ``fixed`` when the
        hypotheses were not counted."""
        m = self.family.get(kind, 0)
        return rate / m if m else fixed

    def value(self, sql: str) -> float | None:
        """The number the evidence SQL returns (first cell); None for NULL or no number."""
        v = self.db.scalar(sql)
        if v is None or isinstance(v, bool):
            return None
        try:
            f = float(v)
        except (TypeError, ValueError):
            return None
        return f if math.isfinite(f) else None

    def confirm(self, finding: Finding) -> Insight | None:
        """The insight of ``finding``, its value computed by its evidence SQL over all rows;
        None when the query gives no number."""
        value = self.value(finding.evidence_sql)
        if value is None:
            return None
        return Insight(
            statement=finding.statement(value),
            kind=finding.kind,
            table=finding.table,
            columns=finding.columns,
            entities=finding.entities,
            direction=finding.direction,
            value=value,
            evidence_sql=finding.evidence_sql,
            score=finding.score,
            support=finding.support,
        )

    def outcome(self, *findings: Finding) -> Outcome:
        """The outcome of confirmed findings: the insights whose evidence gives a value."""
        found = [self.confirm(f) for f in findings]
        return Outcome(insights=[i for i in found if i is not None])


def link_note(link: Link) -> str:
    """How a hypothesis names the link it is about: ``child.column->parent.column``."""
    return f"{link.child}.{link.column}->{link.parent}.{link.parent_column}"
