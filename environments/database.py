"""Read-only access to a SQLite database, and loading folders of CSV/Parquet files into one.

:class:`Database` is how agents look at data: it opens the file with ``mode=ro`` and
``PRAGMA query_only``, and an authorizer lets only reading statements run, so neither a bug nor
a model's query can change the source. A query that fails, runs past its time limit or is
refused comes back as a :class:`QueryResult` with ``error`` set: an observation for the agent,
never an exception.

>>> import sqlite3, tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "shop.sqlite"
>>> con = sqlite3.connect(path)
>>> _ = con.execute("CREATE TABLE orders (order_id INTEGER PRIMARY KEY, amount REAL)")
>>> _ = con.executemany("INSERT INTO orders (amount) VALUES (?)", [(10.0,), (30.0,)])
>>> con.commit(); con.close()
>>> db = Database(path)
>>> db.scalar("SELECT AVG(amount) FROM orders")
20.0
>>> db.query("DELETE FROM orders").error
'only reading statements may run here (not DELETE)'
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from lemmata.errors import DataSourceError, MissingDependency

__all__ = [
    "Column",
    "Database",
    "ForeignKey",
    "LoadReport",
    "QueryResult",
    "load_folder",
    "open_source",
    "quote_ident",
]

# Authorizer actions a reading query needs. Everything else (writes, ATTACH, schema changes,
# transactions, most PRAGMAs) is refused.
_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}
_READ_PRAGMAS = {"table_info", "table_xinfo", "foreign_key_list", "index_list", "index_info"}
_PRAGMA = getattr(sqlite3, "SQLITE_PRAGMA", 19)


def quote_ident(name: str) -> str:
    """``name`` as an SQL identifier: ``quote_ident('a"b') == '"a""b"'``."""
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class Column:
    """A column as the schema declares it."""

    name: str
    declared_type: str
    primary_key: bool


@dataclass(frozen=True)
class ForeignKey:
    """``table.column`` refers to ``ref_table.ref_column``."""

    table: str
    column: str
    ref_table: str
    ref_column: str


@dataclass(frozen=True)
class QueryResult:
    """What a query returned, or why it returned nothing (``error``)."""

    sql: str
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    elapsed_s: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self, max_rows: int = 20) -> str:
        """A plain-text table of the first rows, for a model or a person to read."""
        if self.error is not None:
            return f"error: {self.error}"
        lines = [" | ".join(self.columns)]
        lines += [" | ".join(_cell(v) for v in row) for row in self.rows[:max_rows]]
        more = len(self.rows) - max_rows
        if more > 0 or self.truncated:
            lines.append(f"... ({more if more > 0 else 'more'} rows not shown)")
        return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "NULL" if value is None else str(value)


class Database:
    """A SQLite file opened read-only.

    ``timeout_s`` bounds each query (a query past it is interrupted and reported);
    ``max_rows`` bounds what one query returns.
    """

    def __init__(self, path: str | Path, *, timeout_s: float = 10.0, max_rows: int = 100_000):
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        if not self.path.is_file():
            raise DataSourceError(
                f"database {self.path} does not exist: give a SQLite file or a folder of "
                "CSV/Parquet files"
            )
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            self._con = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._con.execute("PRAGMA query_only = ON")
            self._con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise DataSourceError(
                f"{self.path} is not a readable SQLite database ({exc}): give a SQLite file or "
                "a folder of CSV/Parquet files"
            ) from None
        self._con.set_authorizer(_authorize)
        self._deadline = math.inf
        self._con.set_progress_handler(self._past_deadline, 10_000)
        self.queries = 0

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _past_deadline(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def query(
        self, sql: str, params: Sequence[Any] = (), *, max_rows: int | None = None
    ) -> QueryResult:
        """Run one reading statement; failures come back in ``QueryResult.error``."""
        limit = self.max_rows if max_rows is None else max_rows
        started = time.monotonic()
        self.queries += 1
        problem = _statement_problem(sql)
        if problem is not None:
            return QueryResult(sql=sql, error=problem)
        self._deadline = started + self.timeout_s
        try:
            cur = self._con.execute(sql, tuple(params))
            rows = cur.fetchmany(limit + 1)
            columns = [d[0] for d in cur.description or ()]
            cur.close()
        except sqlite3.DatabaseError as exc:
            message = str(exc)
            if message == "interrupted":
                message = f"the query ran past {self.timeout_s:g} s and was stopped"
            elif message == "not authorized":
                message = "only reading statements may run here (not authorized)"
            return QueryResult(sql=sql, error=message, elapsed_s=time.monotonic() - started)
        except (sqlite3.Warning, ValueError, OverflowError) as exc:
            return QueryResult(sql=sql, error=str(exc), elapsed_s=time.monotonic() - started)
        finally:
            self._deadline = math.inf
        return QueryResult(
            sql=sql,
            columns=columns,
            rows=rows[:limit],
            truncated=len(rows) > limit,
            elapsed_s=time.monotonic() - started,
        )

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first cell of the first row, or ``None`` (also when the query failed)."""
        result = self.query(sql, params, max_rows=1)
        if not result.ok or not result.rows:
            return None
        return result.rows[0][0]

    def tables(self) -> list[str]:
        rows = self._con.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        return [r[0] for r in rows]

    def columns(self, table: str) -> list[Column]:
        rows = self._con.execute(f"PRAGMA table_info({quote_ident(table)})").fetchall()
        return [
            Column(name=r[1], declared_type=(r[2] or "").upper(), primary_key=r[5] > 0)
            for r in rows
        ]

    def foreign_keys(self, table: str) -> list[ForeignKey]:
        rows = self._con.execute(f"PRAGMA foreign_key_list({quote_ident(table)})").fetchall()
        keys = []
        for r in rows:
            ref_column = r[4]
            if ref_column is None:  # refers to the other table's primary key
                pks = [c.name for c in self.columns(r[2]) if c.primary_key]
                ref_column = pks[0] if pks else r[3]
            keys.append(ForeignKey(table=table, column=r[3], ref_table=r[2], ref_column=ref_column))
        return keys

    def row_count(self, table: str) -> int:
        value = self.scalar(f"SELECT COUNT(*) FROM {quote_ident(table)}")
        return int(value or 0)

    def checksum(self) -> str:
        """SHA-256 of the database file (to show that a run left it as it was)."""
        import hashlib

        digest = hashlib.sha256()
        with self.path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


def _authorize(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == _PRAGMA and arg1 is not None and arg1.lower() in _READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


_FIRST_WORD = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*(\w+)", re.S)


def _statement_problem(sql: str) -> str | None:
    if not sql.strip():
        return "the query is empty"
    if not sqlite3.complete_statement(sql.rstrip().rstrip(";") + ";"):
        return "the query is not a complete SQL statement"
    body = sql.strip().rstrip(";")
    if ";" in _strip_strings(body):
        return "one statement at a time"
    match = _FIRST_WORD.match(body)
    word = match.group(1).upper() if match else ""
    if word not in {"SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"}:
        return f"only reading statements may run here (not {word or 'this'})"
    return None


def _strip_strings(sql: str) -> str:
    return re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", "''", sql)


# -- loading CSV / Parquet folders ------------------------------------------------------------


@dataclass
class LoadReport:
    """What :func:`load_folder` loaded, and what it had to note on the way."""

    path: Path
    tables: dict[str, int] = field(default_factory=dict)
    observations: list[str] = field(default_factory=list)


_TABLE_NAME = re.compile(r"[^0-9A-Za-z_]+")


def load_folder(folder: str | Path, dest: str | Path) -> LoadReport:
    """Load every ``*.csv`` and ``*.parquet`` file in ``folder`` into a new SQLite file ``dest``.

    Each file becomes a table named after the file. Rows that do not parse (a CSV row with too
    many fields) are skipped and noted in ``observations``, as are empty files. The folder is
    only read. ``dest`` is written to a temporary name and moved into place when complete.
    """
    try:
        import pandas as pd
    except ImportError:
        raise MissingDependency(
            "loading CSV/Parquet folders", "pip install 'lemmata[research]'"
        ) from None
    folder = Path(folder)
    dest = Path(dest)
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in {".csv", ".parquet", ".pq"})
    if not files:
        raise DataSourceError(
            f"folder {folder} holds no .csv or .parquet files: give a SQLite file or a folder "
            "of CSV/Parquet files"
        )
    report = LoadReport(path=dest)
    tmp = dest.with_name(dest.name + ".part")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    try:
        for file in files:
            name = _TABLE_NAME.sub("_", file.stem).strip("_") or "table"
            if name[0].isdigit():
                name = "t_" + name
            if name in report.tables:
                report.observations.append(f"{file.name}: a table named {name} exists; skipped")
                continue
            bad: list[str] = []
            try:
                if file.suffix.lower() == ".csv":

                    def _bad_row(fields: list[str], _bad: list[str] = bad) -> None:
                        _bad.append(",".join(fields)[:80])

                    frame = pd.read_csv(file, on_bad_lines=_bad_row, engine="python")
                else:
                    frame = pd.read_parquet(file)
            except pd.errors.EmptyDataError:
                report.observations.append(f"{file.name}: the file is empty; no table made")
                continue
            except ImportError:
                raise MissingDependency(
                    "reading Parquet files", "pip install 'lemmata[research]'"
                ) from None
            except (ValueError, OSError, UnicodeDecodeError) as exc:
                raise DataSourceError(f"{file}: cannot be read ({exc})") from None
            if bad:
                report.observations.append(
                    f"{file.name}: {len(bad)} row(s) did not match the header and were skipped "
                    f"(first: {bad[0]!r})"
                )
            frame.columns = [str(c) for c in frame.columns]
            frame.to_sql(name, con, index=False)
            report.tables[name] = len(frame)
            if frame.empty:
                report.observations.append(f"{file.name}: the table {name} has no rows")
        con.commit()
    finally:
        con.close()
    tmp.replace(dest)
    return report


def open_source(
    source: str | Path, workdir: str | Path, *, timeout_s: float = 10.0
) -> tuple[Database, LoadReport | None]:
    """Open ``source``: a SQLite file as it is, or a folder loaded into ``workdir/data.sqlite``."""
    source = Path(source)
    if source.is_dir():
        report = load_folder(source, Path(workdir) / "data.sqlite")
        return Database(report.path, timeout_s=timeout_s), report
    if not source.exists():
        raise DataSourceError(
            f"{source} does not exist: give a SQLite file or a folder of CSV/Parquet files"
        )
    return Database(source, timeout_s=timeout_s), None
