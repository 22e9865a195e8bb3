"""Survey a database: its tables, row counts, keys and links, and what each column holds.

Each column gets a role that decides which hypotheses are worth testing on it: ``key``,
``foreign_key``, ``numeric``, ``categorical``, ``date``, ``text``, ``constant`` or ``empty``.
What looks wrong (a column of mixed types, an empty table, a constant column) becomes an
observation, not an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from lemmata.environments.database import Database, quote_ident

__all__ = ["ColumnProfile", "Link", "Survey", "TableProfile", "sample_rows", "survey"]

Role = Literal["key", "foreign_key", "numeric", "categorical", "date", "text", "constant", "empty"]

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")
_NUMERIC_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
# Profiling reads at most this many rows of a table (evenly spaced by rowid); the values that
# insights report are computed by SQL over all rows.
SAMPLE_ROWS = 200_000
MAX_CATEGORIES = 30


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

    @property
    def mixed(self) -> bool:
        return self.role == "numeric" and self.numeric_share < 0.999

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
            return f"date({col}) IS NOT NULL"
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
            lines.append(f"{t.name} ({t.rows} rows): {cols}")
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
    if not present:
        profile.role = "empty"
        notes.append(f"{table}.{name} has no values")
        return profile, notes
    if distinct == 1:
        profile.role = "constant"
        notes.append(f"{table}.{name} holds one value only ({top[0][0]!r})")
        return profile, notes
    if (primary or looks_like_id) and distinct == len(present) and share in (0.0, 1.0):
        profile.role = "key"
        return profile, notes
    if share >= 0.9:
        profile.mean = sum(numbers) / len(numbers)
        var = sum((x - profile.mean) ** 2 for x in numbers) / max(1, len(numbers) - 1)
        profile.std = math.sqrt(var)
        profile.minimum, profile.maximum = min(numbers), max(numbers)
        integral = all(float(x).is_integer() for x in numbers)
        if looks_like_id and integral:
            profile.role = "foreign_key"  # confirmed or undone once links are known
        elif distinct <= 5 and integral or distinct <= 2:
            profile.role = "categorical"
        else:
            profile.role = "numeric"
            if share < 0.999:
                bad = [v for v in present if _as_number(v) is None]
                notes.append(
                    f"{table}.{name} mixes types: {len(bad)} of {len(present)} values are not "
                    f"numbers (e.g. {bad[0]!r}); they are left out of its statistics"
                )
        return profile, notes
    texts = [v for v in present if isinstance(v, str)]
    if texts and sum(1 for v in texts if _ISO_DATE.match(v)) >= 0.9 * len(present):
        profile.role = "date"
        dates = sorted(v[:10] for v in texts if _ISO_DATE.match(v))
        profile.minimum, profile.maximum = dates[0], dates[-1]
        return profile, notes
    if looks_like_id and distinct > MAX_CATEGORIES:
        profile.role = "foreign_key"
        return profile, notes
    if distinct <= MAX_CATEGORIES and distinct <= max(2, 0.5 * len(present)):
        profile.role = "categorical"
    return profile, notes


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
        tables[name] = TableProfile(name=name, rows=rows, columns=profiles, key=key)
    links = _links(db, tables)
    linked = {(link.child, link.column) for link in links}
    for t in tables.values():
        for c in t.columns.values():
            if c.role == "foreign_key" and (t.name, c.name) not in linked:
                c.role = "key" if c.distinct == t.rows - c.nulls else "categorical"
                if c.role == "categorical" and c.distinct > MAX_CATEGORIES:
                    c.role = "text"
    return Survey(tables=tables, links=links, observations=observations)


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
                c.refers_to = f"{parent}.{c.name}"
    return links
