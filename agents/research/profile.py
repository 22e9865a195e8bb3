"""Survey a database: its tables, row counts, keys and links, and what each column holds.

Each column gets a role that decides which hypotheses are worth testing on it: ``key``,
``foreign_key``, ``numeric``, ``categorical``, ``date``, ``text``, ``constant`` or ``empty``,
decided from the values (names only break ties) and recorded with its evidence
(:attr:`ColumnProfile.evidence`):

- ``date``: the values read as one of the time forms of
  :mod:`~lemmata.agents.research.timeforms` (ISO dates, ``YYYY-MM``, quarters, month names,
  years, decimal years, Unix epochs, Excel serial days), whatever the declared type and
  whether or not the column is the primary key;
- ``key``: unique values in a primary-key or identifier column, or the row numbers that CSV
  exports add (``1..N`` in row order, or an unnamed first column); never a measure;
- ``categorical``: few distinct values, including integer codes (a name such as ``*_code`` or
  ``*_id`` without a parent table, or codes whose labels a lookup table holds: a table of at
  most 30 rows with a key and text only, the link to which is kept), integers with at most
  five values, and 0/1 indicators whose missing answers were filled in with fractions (at
  least 90% of the values 0 or 1, all of them between);
- ``text`` (free text, many distinct strings) and ``constant`` are described, not tested.

A table whose time column has one row per period is a time series
(:attr:`TableProfile.series`, with its :attr:`TableProfile.period`); other tables with a time
column hold events, which the explorer buckets by month. What looks wrong (a column of mixed
types, an empty table, a constant column) becomes an observation, not an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any, Literal

from lemmata.agents.research.timeforms import FORMS, detect_time, slash_order
from lemmata.environments.database import Database, quote_ident

__all__ = ["ColumnProfile", "Link", "Survey", "TableProfile", "sample_rows", "survey"]

Role = Literal["key", "foreign_key", "numeric", "categorical", "date", "text", "constant", "empty"]

_NUMERIC_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
# Profiling reads at most this many rows of a table (evenly spaced by rowid); the values that
# insights report are computed by SQL over all rows.
SAMPLE_ROWS = 200_000
MAX_CATEGORIES = 30
# Names a CSV export gives the row-number column it adds (R's write.csv, pandas' to_csv).
_ROW_NUMBER_NAMES = {"", "unnamed: 0", "unnamed_0", "rownames", "row.names", "index", "...1"}
_CODE_NAME = re.compile(r"(^id$|_id$|id$|code$|_no$|_nr$|zip|fips|postal)", re.IGNORECASE)


@dataclass
class ColumnProfile:
    table: str
    name: str
    role: Role
    declared_type: str
    rows: int
    nulls: int
    distinct: int
    numeric_share: float = 0.0
    top: list[tuple[str, int]] = field(default_factory=list)
    mean: float | None = None
    std: float | None = None
    minimum: Any = None
    maximum: Any = None
    refers_to: str | None = None  # "table.column" for a foreign key
    time_form: str | None = None  # for a date: the form its values are written in
    evidence: str = ""  # why it has its role
    indicator: bool = False  # a 0/1 column whose gaps were filled in with fractions

    @property
    def mixed(self) -> bool:
        return self.role == "numeric" and self.numeric_share < 0.999

    def time_sql(self, alias: str | None = None) -> str:
        """For a date: an SQL expression SQLite's date functions read (the column itself when
        it holds ISO dates, else its Julian day number)."""
        col = f"{alias}.{quote_ident(self.name)}" if alias else quote_ident(self.name)
        return FORMS[self.time_form].sql(col) if self.time_form else col

    def day(self, value: Any) -> float:
        """For a date: ``value`` as an ordinal day (NaN when it does not read as one)."""
        return FORMS[self.time_form or "iso"].day(value)

    def expr(self) -> str:
        """The SQL expression of this column's value (numbers as REAL for a mixed column)."""
        col = quote_ident(self.name)
        return f"CAST({col} AS REAL)" if self.mixed else col

    def present(self, alias: str | None = None) -> str:
        """An SQL condition that holds where this column has a usable value."""
        col = f"{alias}.{quote_ident(self.name)}" if alias else quote_ident(self.name)
        if self.role == "numeric" and self.mixed:
            return (
                f"(typeof({col}) IN ('integer', 'real') OR (typeof({col}) = 'text' AND "
                f"trim({col}) <> '' AND trim({col}) NOT GLOB '*[^0-9.eE+-]*'))"
            )
        if self.role == "numeric":
            return f"typeof({col}) IN ('integer', 'real')"
        if self.role == "date":
            return f"date({self.time_sql(alias)}) IS NOT NULL"
        return f"{col} IS NOT NULL"


@dataclass
class Link:
    """``child.column`` refers to ``parent.parent_column`` (declared, or inferred from names
    and values)."""

    child: str
    column: str
    parent: str
    parent_column: str
    declared: bool


@dataclass
class TableProfile:
    name: str
    rows: int
    columns: dict[str, ColumnProfile]
    key: str | None
    time: str | None = None  # the table's main time column
    series: bool = False  # one row per period of ``time`` (else events to bucket)
    period: str | None = None  # a series' step: day, week, month, quarter, year or irregular

    def role(self, role: Role) -> list[ColumnProfile]:
        return [c for c in self.columns.values() if c.role == role]


@dataclass
class Survey:
    tables: dict[str, TableProfile]
    links: list[Link]
    observations: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """A compact text of the schema, for a model to read."""
        lines = []
        for t in self.tables.values():
            cols = ", ".join(f"{c.name} ({c.role})" for c in t.columns.values())
            kind = f", a {t.period} series over {t.time}" if t.series else ""
            lines.append(f"{t.name} ({t.rows} rows{kind}): {cols}")
        for link in self.links:
            lines.append(f"{link.child}.{link.column} -> {link.parent}.{link.parent_column}")
        return "\n".join(lines)


def sample_rows(db: Database, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    """Up to :data:`SAMPLE_ROWS` rows of ``columns`` (all rows when the table is smaller)."""
    cols = ", ".join(quote_ident(c) for c in columns)
    total = db.row_count(table)
    sql = f"SELECT {cols} FROM {quote_ident(table)}"
    if total > SAMPLE_ROWS:
        step = math.ceil(total / SAMPLE_ROWS)
        sql += f" WHERE rowid % {step} = 0"
    result = db.query(sql, max_rows=SAMPLE_ROWS + 1)
    return result.rows if result.ok else []


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return None if isinstance(value, float) and math.isnan(value) else float(value)
    if isinstance(value, str) and _NUMERIC_TEXT.match(value):
        return float(value)
    return None


def _row_numbers(name: str, numbers: list[float], present: int) -> bool:
    """``1..N`` (or ``0..N-1``) in row order, or unique integers under a row-number name."""
    if len(numbers) != present or not numbers or not all(x.is_integer() for x in numbers):
        return False
    if name.strip().lower() in _ROW_NUMBER_NAMES and len(set(numbers)) == len(numbers):
        return True
    start = numbers[0]
    return start in (0.0, 1.0) and all(x == start + i for i, x in enumerate(numbers))


def _profile_column(
    table: str, name: str, declared: str, primary: bool, values: list[Any], rows: int
) -> tuple[ColumnProfile, list[str]]:
    notes: list[str] = []
    present = [v for v in values if v is not None and v != ""]
    nulls = len(values) - len(present)
    counts: dict[Any, int] = {}
    for v in present:
        counts[v] = counts.get(v, 0) + 1
    distinct = len(counts)
    numbers = [x for x in (_as_number(v) for v in present) if x is not None]
    share = len(numbers) / len(present) if present else 0.0
    top = sorted(((str(k), n) for k, n in counts.items()), key=lambda kv: -kv[1])[:10]
    profile = ColumnProfile(
        table=table,
        name=name,
        role="text",
        declared_type=declared,
        rows=rows,
        nulls=nulls,
        distinct=distinct,
        numeric_share=share,
        top=top,
    )
    lowered = name.lower()
    looks_like_id = lowered == "id" or lowered.endswith("_id") or lowered.endswith("id")
    integral = bool(numbers) and all(float(x).is_integer() for x in numbers)

    def decide(role: Role, evidence: str) -> tuple[ColumnProfile, list[str]]:
        profile.role = role
        profile.evidence = evidence
        return profile, notes

    if not present:
        notes.append(f"{table}.{name} has no values")
        return decide("empty", "no values")
    if distinct == 1:
        notes.append(f"{table}.{name} holds one value only ({top[0][0]!r})")
        return decide("constant", f"one value only ({top[0][0]!r})")
    row_numbers = _row_numbers(name, numbers, len(present))
    if not row_numbers and not (looks_like_id and share >= 0.9):
        form = detect_time(present, name=name)
        if form is not None:
            days = [d for d in (form.day(v) for v in present) if math.isfinite(d)]
            profile.time_form = form.name
            profile.minimum = date.fromordinal(int(min(days))).isoformat()
            profile.maximum = date.fromordinal(int(max(days))).isoformat()
            unread = len(present) - len(days)
            if unread:
                notes.append(
                    f"{table}.{name}: {unread} of {len(present)} values do not read as "
                    f"{form.name} dates; they are left out of its time statistics"
                )
            order = slash_order(form, present)
            return decide(
                "date",
                f"{len(days)} of {len(present)} values read as {form.name} "
                f"({profile.minimum} to {profile.maximum}{'; ' + order if order else ''})",
            )
    if row_numbers:
        return decide("key", "row numbers (unique integers in row order): not a measure")
    if (primary or looks_like_id) and distinct == len(present) and share in (0.0, 1.0):
        return decide("key", "primary key" if primary else "unique values in an identifier")
    if share >= 0.9:
        profile.mean = sum(numbers) / len(numbers)
        var = sum((x - profile.mean) ** 2 for x in numbers) / max(1, len(numbers) - 1)
        profile.std = math.sqrt(var)
        profile.minimum, profile.maximum = min(numbers), max(numbers)
        if looks_like_id and integral:
            # Confirmed or undone once links are known.
            return decide("foreign_key", "integer identifier")
        if integral and _CODE_NAME.search(name):
            role: Role = "categorical" if distinct <= MAX_CATEGORIES else "text"
            return decide(role, f"integer codes ({distinct} labels): not a measure")
        if distinct <= 5 and integral or distinct <= 2:
            return decide(
                "categorical", f"{'integers' if integral else 'numbers'} with {distinct} values"
            )
        flags = _indicator_share(numbers)
        if flags >= INDICATOR_SHARE and distinct <= MAX_CATEGORIES:
            profile.indicator = True
            return decide(
                "categorical",
                f"a 0/1 indicator: {flags:.0%} of values are 0 or 1, the rest fractions "
                "between them (filled in for missing answers), not a measure",
            )
        if share < 0.999:
            bad = [v for v in present if _as_number(v) is None]
            notes.append(
                f"{table}.{name} mixes types: {len(bad)} of {len(present)} values are not "
                f"numbers (e.g. {bad[0]!r}); they are left out of its statistics"
            )
        return decide("numeric", f"{share:.0%} numbers, {distinct} distinct values")
    if looks_like_id and distinct > MAX_CATEGORIES:
        return decide("foreign_key", "identifier")
    if distinct <= MAX_CATEGORIES and distinct <= max(2, 0.5 * len(present)):
        return decide("categorical", f"{distinct} distinct values")
    return decide("text", f"free text ({distinct} distinct values): described, not tested")


#: The share of a column's values that must be exactly 0 or 1 (the rest between them) for it
#: to be read as an indicator whose gaps were filled in with fractions.
INDICATOR_SHARE = 0.9


def _indicator_share(numbers: list[float]) -> float:
    """The share of ``numbers`` that are exactly 0 or 1 when all lie in [0, 1] and both 0 and
    1 occur (a yes/no column whose missing answers were filled in with the mean of a group,
    as survey data often are); 0 otherwise."""
    if not numbers or min(numbers) != 0 or max(numbers) != 1:
        return 0.0
    return sum(1 for x in numbers if x in (0, 1)) / len(numbers)


_PERIODS = (
    ("day", 0.5, 1.5),
    ("week", 6, 8),
    ("month", 27, 32),
    ("quarter", 85, 95),
    ("year", 360, 370),
)


def _series(profile: ColumnProfile, values: list[Any], rows: int) -> tuple[bool, str | None]:
    """Whether a time column holds one row per period (unique values in a regular step; gaps
    allowed), and the period's name."""
    days = sorted({d for d in (profile.day(v) for v in values) if math.isfinite(d)})
    if len(days) < 6 or len(days) < 0.95 * rows:
        return False, None
    steps = [b - a for a, b in zip(days, days[1:], strict=False)]
    step = sorted(steps)[len(steps) // 2]
    for name, low, high in _PERIODS:
        if low <= step <= high and sum(low <= s <= high for s in steps) >= 0.7 * len(steps):
            return True, name
    # Every few years (a census, a survey every five years): a series counted in years.
    if step > 370 and sum(abs(s - step) <= 0.1 * step for s in steps) >= 0.7 * len(steps):
        return True, "year"
    return False, None


def survey(db: Database) -> Survey:
    """Profile every table of ``db`` and find the links between them."""
    tables: dict[str, TableProfile] = {}
    observations: list[str] = []
    for name in db.tables():
        columns = db.columns(name)
        rows = db.row_count(name)
        if rows == 0:
            observations.append(f"table {name} is empty")
        data = sample_rows(db, name, [c.name for c in columns]) if columns and rows else []
        profiles: dict[str, ColumnProfile] = {}
        for i, col in enumerate(columns):
            values = [r[i] for r in data]
            profile, notes = _profile_column(
                name, col.name, col.declared_type, col.primary_key, values, rows
            )
            profiles[col.name] = profile
            observations.extend(notes)
        key = next((c.name for c in profiles.values() if c.role == "key"), None)
        table = TableProfile(name=name, rows=rows, columns=profiles, key=key)
        names = list(profiles)
        for c in (c for c in profiles.values() if c.role == "date"):
            series, period = _series(c, [r[names.index(c.name)] for r in data], len(data))
            if table.time is None or series and not table.series:
                table.time, table.series, table.period = c.name, series, period
        if table.series:
            c = profiles[table.time or ""]
            c.evidence += f"; one row per {table.period}: {name} is a time series"
        tables[name] = table
    links = _links(db, tables)
    linked = {(link.child, link.column) for link in links}
    for link in links:
        labels = _lookup_labels(tables[link.parent], link.parent_column)
        if labels:
            # Integer codes whose labels a small table holds (department 3 = "oncology"):
            # a category of the rows that carry them, besides the link to their labels.
            c = tables[link.child].columns[link.column]
            c.role = "categorical"
            c.evidence += f"; codes labelled by {link.parent}.{labels[0]}, so categorical"
    for t in tables.values():
        for c in t.columns.values():
            if c.role == "foreign_key" and (t.name, c.name) not in linked:
                c.role = "key" if c.distinct == t.rows - c.nulls else "categorical"
                if c.role == "categorical" and c.distinct > MAX_CATEGORIES:
                    c.role = "text"
                c.evidence += f"; no table it refers to, so {c.role}"
    return Survey(tables=tables, links=links, observations=observations)


def _lookup_labels(parent: TableProfile, key: str) -> list[str]:
    """The label columns of a lookup table (a few rows: a key and text, no measures), else
    none."""
    if parent.rows > MAX_CATEGORIES or parent.rows < 2:
        return []
    others = [c for c in parent.columns.values() if c.name != key]
    if not others or any(c.role not in ("text", "categorical", "constant") for c in others):
        return []
    return [c.name for c in others if c.role in ("text", "categorical")]


def _links(db: Database, tables: dict[str, TableProfile]) -> list[Link]:
    links: list[Link] = []
    seen: set[tuple[str, str]] = set()
    for t in tables.values():
        try:
            declared = db.foreign_keys(t.name)
        except Exception:  # a view, or a damaged schema entry: no declared keys
            declared = []
        for fk in declared:
            if fk.ref_table in tables and fk.column in t.columns:
                links.append(Link(t.name, fk.column, fk.ref_table, fk.ref_column, True))
                seen.add((t.name, fk.column))
                t.columns[fk.column].role = "foreign_key"
                t.columns[fk.column].evidence = f"declared foreign key to {fk.ref_table}"
                t.columns[fk.column].refers_to = f"{fk.ref_table}.{fk.ref_column}"
    keys = {p.key: p.name for p in tables.values() if p.key is not None}
    for t in tables.values():
        for c in t.columns.values():
            if (t.name, c.name) in seen or c.name == t.key:
                continue
            parent = keys.get(c.name)
            if parent is None or parent == t.name:
                continue
            # Inferred from the name; kept only when the values are the parent's keys.
            child_col, parent_col = quote_ident(c.name), quote_ident(c.name)
            orphans = db.scalar(
                f"SELECT COUNT(*) FROM {quote_ident(t.name)} AS c WHERE c.{child_col} IS NOT NULL "
                f"AND NOT EXISTS (SELECT 1 FROM {quote_ident(parent)} AS p "
                f"WHERE p.{parent_col} = c.{child_col})"
            )
            if orphans is not None and orphans <= 0.01 * max(1, t.rows):
                links.append(Link(t.name, c.name, parent, c.name, False))
                c.role = "foreign_key"
                c.evidence = f"its values are {parent}'s keys"
                c.refers_to = f"{parent}.{c.name}"
    return links
