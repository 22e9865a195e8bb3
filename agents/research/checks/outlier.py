"""Outliers: rows (at most 5) with \\|robust z\\| >= 5.5 (on the log scale for a skewed positive
column); across a link, a parent whose mean over its child rows has \\|robust z\\| >= 6 among
parents (its facts become follow-up hypotheses)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks.base import CheckContext, DataProblem, Finding, Outcome, fmt
from lemmata.agents.research.checks.entity import entity_hypotheses
from lemmata.agents.research.checks.stats import entity_means, robust_z, skew
from lemmata.agents.research.types import Hypothesis

__all__ = ["check"]


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    """Row outliers of ``[column]``; outlying parents for ``[column, link column]``."""
    if len(h.columns) == 2:
        return _entities(ctx, h)
    import numpy as np

    (col,) = h.columns
    t = ctx.table(h.table)
    x = t.num[col]
    ok = np.isfinite(x)
    if ok.sum() < 50:
        raise DataProblem(f"{h.table}.{col}: too few values")
    scale = x.copy()
    finite = x[ok]
    # Skew judged without the extreme rows themselves, so that two outliers do not turn
    # the column to the log scale (where small values would look extreme instead).
    if finite.min() > 0 and abs(skew(finite[np.abs(robust_z(finite)) < 7])) >= 1:
        scale = np.where(ok, np.log(np.where(ok, x, 1.0)), np.nan)
    z = np.full(len(x), np.nan)
    z[ok] = robust_z(scale[ok])
    flagged = [i for i in np.argsort(-np.abs(np.nan_to_num(z))) if abs(np.nan_to_num(z[i])) >= 5.5]
    if not flagged or len(flagged) > max(5, int(0.002 * ok.sum())):
        return Outcome(observation=f"{h.table}.{col}: {len(flagged)} extreme rows")
    # A series without a key is told apart by its time column.
    key = t.profile.key or (t.profile.time if t.profile.series else None)
    median = float(np.median(finite))
    findings = []
    for i in flagged[:3]:
        key_col, key_value = (key, t.raw[key][i]) if key else ("rowid", None)
        if key_value is None:
            continue
        zi = float(z[i])
        findings.append(
            Finding(
                kind="outlier",
                table=h.table,
                columns=[col],
                entities=[f"{key_col}={key_value}"],
                direction="higher" if zi > 0 else "lower",
                evidence_sql=ev.row_value_sql(h.table, ctx.expr(h.table, col), key_col, key_value),
                statement=_row_statement(h.table, key_col, key_value, col, median, zi),
                score=min(50.0, abs(zi)),
                support={"test": "robust z (median, MAD)", "z": zi},
            )
        )
    return ctx.outcome(*findings)


def _row_statement(
    table: str, key_col: str, key_value: Any, col: str, median: float, z: float
) -> Callable[[float], str]:
    return lambda value: (
        f"{table} row {key_col} = {key_value} has an extreme {col} of {fmt(value)}, against a "
        f"median of {fmt(median)} (robust z = {fmt(z)})"
    )


def _entities(ctx: CheckContext, h: Hypothesis) -> Outcome:
    import numpy as np

    num, column = h.columns
    t = ctx.table(h.table)
    means = {k: m for k, (m, n) in entity_means(t.raw[column], t.num[num]).items() if n >= 5}
    if len(means) < 20:
        raise DataProblem(f"{h.table}: too few {column} with 5 rows")
    keys = list(means)
    z = robust_z(np.array([means[k] for k in keys]))
    typical = float(np.median(list(means.values())))
    out = Outcome()
    for i in [i for i in np.argsort(-np.abs(z)) if abs(z[i]) >= 6][:3]:
        k, zi = keys[i], float(z[i])
        ins = ctx.confirm(
            Finding(
                kind="outlier",
                table=h.table,
                columns=[num],
                entities=[f"{column}={k}"],
                direction="higher" if zi > 0 else "lower",
                evidence_sql=ev.mean_sql(h.table, ctx.expr(h.table, num), [ev.equals(column, k)]),
                statement=_entity_statement(column, k, h.table, num, typical, zi),
                score=min(50.0, abs(zi)),
                support={"test": "robust z of per-entity means", "z": zi},
            )
        )
        if ins:
            out.insights.append(ins)
            out.follow_ups += [
                hyp.model_copy(update={"origin": "follow-up", "priority": 0.9})
                for hyp in entity_hypotheses(ctx.survey, column, str(k))
                if hyp.kind in {"trend", "share"}
            ]
    return out


def _entity_statement(
    column: str, k: Any, table: str, num: str, typical: float, z: float
) -> Callable[[float], str]:
    return lambda value: (
        f"{column} = {k} stands out in {table}: its mean {num} is {fmt(value)} against a "
        f"typical {fmt(typical)} (robust z = {fmt(z)})"
    )
