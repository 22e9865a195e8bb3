"""The SQL behind each kind of insight's value.

Every insight's ``value`` is what its ``evidence_sql`` returns (first cell, first row), and the
checklists of generated databases are computed with the same queries, so a reader can rerun any
number in a report with ``sqlite3 data.sqlite "<evidence_sql>"``. The queries need SQLite's
math functions (``sqrt``, ``power``; built in since 3.35 in most distributions).

>>> mean_sql("visits", '"cost"', where=["\\"department\\" = 'cardiology'"])
'SELECT AVG("cost") FROM "visits" WHERE "department" = \\'cardiology\\''
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lemmata.environments.database import quote_ident

__all__ = [
    "changes_pearson_sql",
    "count_per_entity_sql",
    "entity_slope_sql",
    "equals",
    "join_mean_sql",
    "literal",
    "mean_sql",
    "monthly_slope_sql",
    "pearson_sql",
    "row_value_sql",
    "share_sql",
    "skew_sql",
    "spearman_sql",
]


def literal(value: Any) -> str:
    """``value`` as an SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def equals(column: str, value: Any, alias: str | None = None) -> str:
    """``column = value``, with ``value`` as a number when it reads as one."""
    col = f"{alias}.{quote_ident(column)}" if alias else quote_ident(column)
    return f"{col} = {literal(value)}"


def _where(conditions: Sequence[str]) -> str:
    return f" WHERE {' AND '.join(conditions)}" if conditions else ""


def mean_sql(table: str, expr: str, where: Sequence[str] = ()) -> str:
    return f"SELECT AVG({expr}) FROM {quote_ident(table)}{_where(where)}"


def skew_sql(table: str, expr: str, where: Sequence[str] = ()) -> str:
    """Population skewness m3 / m2^1.5."""
    return (
        f"WITH s AS (SELECT 1.0 * {expr} AS x FROM {quote_ident(table)}{_where(where)}), "
        "m AS (SELECT AVG(x) AS mu FROM s) "
        "SELECT AVG((x - mu) * (x - mu) * (x - mu)) / power(AVG((x - mu) * (x - mu)), 1.5) "
        "FROM s, m"
    )


_PEARSON = (
    "m AS (SELECT AVG(x) AS mx, AVG(y) AS my FROM s) "
    "SELECT SUM((x - mx) * (y - my)) / sqrt(SUM((x - mx) * (x - mx)) * "
    "SUM((y - my) * (y - my))) FROM s, m"
)


def pearson_sql(table: str, x: str, y: str, where: Sequence[str] = ()) -> str:
    return (
        f"WITH s AS (SELECT 1.0 * {x} AS x, 1.0 * {y} AS y FROM {quote_ident(table)}"
        f"{_where(where)}), {_PEARSON}"
    )


def changes_pearson_sql(table: str, x: str, y: str, order: str, where: Sequence[str] = ()) -> str:
    """Pearson r of the period-to-period changes of ``x`` and ``y``, the rows taken in the
    order of ``order`` (anything SQLite's ``julianday`` reads: ISO text, a Julian day).
    Needs SQLite's window functions (3.25)."""
    return (
        f"WITH v AS (SELECT 1.0 * {x} AS x, 1.0 * {y} AS y, julianday({order}) AS o FROM "
        f"{quote_ident(table)}{_where(where)}), d AS (SELECT x - LAG(x) OVER (ORDER BY o) AS x, "
        "y - LAG(y) OVER (ORDER BY o) AS y FROM v), "
        f"s AS (SELECT x, y FROM d WHERE x IS NOT NULL AND y IS NOT NULL), {_PEARSON}"
    )


def spearman_sql(table: str, x: str, y: str, where: Sequence[str] = ()) -> str:
    """Spearman's rho: Pearson r of the ranks, tied values given their mean rank (what
    ``scipy.stats.spearmanr`` computes). Needs SQLite's window functions (3.25)."""

    def rank(v: str) -> str:
        return f"RANK() OVER (ORDER BY {v}) + (COUNT(*) OVER (PARTITION BY {v}) - 1) / 2.0"

    return (
        f"WITH v AS (SELECT 1.0 * {x} AS x, 1.0 * {y} AS y FROM {quote_ident(table)}"
        f"{_where(where)}), s AS (SELECT {rank('x')} AS x, {rank('y')} AS y FROM v), "
        f"{_PEARSON}"
    )


def _period(date_col: str, period: str = "month") -> str:
    year = f"CAST(strftime('%Y', {date_col}) AS INTEGER)"
    month = f"CAST(strftime('%m', {date_col}) AS INTEGER)"
    if period == "year":
        return f"({year})"
    if period == "quarter":
        return f"({year} * 4 + ({month} - 1) / 3)"
    if period in ("day", "week"):
        size = 7 if period == "week" else 1
        return f"(CAST(julianday({date_col}) + 0.5 AS INTEGER) / {size})"
    return f"({year} * 12 + {month})"


def monthly_slope_sql(
    table: str, expr: str | None, date_col: str, where: Sequence[str] = (), period: str = "month"
) -> str:
    """Least-squares slope, per period (a month unless ``period`` says ``day``, ``week``,
    ``quarter`` or ``year``), of the period's mean of ``expr`` (of its row count when ``expr``
    is None). ``date_col`` is anything SQLite's date functions read (ISO text, a Julian day)."""
    agg = "COUNT(*)" if expr is None else f"AVG({expr})"
    return (
        f"WITH m AS (SELECT {_period(date_col, period)} AS t, 1.0 * {agg} AS y FROM "
        f"{quote_ident(table)}{_where([*where, f'date({date_col}) IS NOT NULL'])} GROUP BY t), "
        "a AS (SELECT AVG(t) AS mt, AVG(y) AS my FROM m) "
        "SELECT SUM((t - mt) * (y - my)) / SUM((t - mt) * (t - mt)) FROM m, a"
    )


def entity_slope_sql(table: str, expr: str, date_col: str, where: Sequence[str] = ()) -> str:
    """Least-squares slope of ``expr`` per 30 days, over the rows themselves."""
    return (
        f"WITH s AS (SELECT julianday({date_col}) AS t, 1.0 * {expr} AS y FROM "
        f"{quote_ident(table)}{_where([*where, f'julianday({date_col}) IS NOT NULL'])}), "
        "a AS (SELECT AVG(t) AS mt, AVG(y) AS my FROM s) "
        "SELECT 30.0 * SUM((t - mt) * (y - my)) / SUM((t - mt) * (t - mt)) FROM s, a"
    )


def share_sql(table: str, column: str, value: Any, where: Sequence[str] = ()) -> str:
    col = quote_ident(column)
    return (
        f"SELECT AVG(CASE WHEN {equals(column, value)} THEN 1.0 ELSE 0.0 END) FROM "
        f"{quote_ident(table)}{_where([*where, f'{col} IS NOT NULL'])}"
    )


def row_value_sql(table: str, expr: str, key: str, key_value: Any) -> str:
    return f"SELECT {expr} FROM {quote_ident(table)} WHERE {equals(key, key_value)}"


def join_mean_sql(
    child: str, expr: str, column: str, parent: str, parent_column: str, where: Sequence[str]
) -> str:
    """Mean of ``expr`` (on the child, alias ``c``) over the rows whose parent (alias ``p``)
    meets ``where``."""
    return (
        f"SELECT AVG({expr}) FROM {quote_ident(child)} AS c JOIN {quote_ident(parent)} AS p "
        f"ON c.{quote_ident(column)} = p.{quote_ident(parent_column)}{_where(where)}"
    )


def count_per_entity_sql(
    child: str, column: str, parent: str, parent_column: str, where: Sequence[str]
) -> str:
    """Mean number of child rows per parent row, over the parents that meet ``where``."""
    return (
        f"SELECT AVG(n) FROM (SELECT p.{quote_ident(parent_column)}, COUNT(c.{quote_ident(column)}) "
        f"AS n FROM {quote_ident(parent)} AS p LEFT JOIN {quote_ident(child)} AS c ON "
        f"c.{quote_ident(column)} = p.{quote_ident(parent_column)}{_where(where)} "
        f"GROUP BY p.{quote_ident(parent_column)})"
    )
