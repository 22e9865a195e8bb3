"""One entity (``patient_id=42``): what its rows say against everyone else's.

=======  ======================================================================================
other    the entity's own row (where the column is the table's key)
outlier  its mean (or its number of rows) has \\|robust z\\| >= 3 among entities
trend    its values over time fit a line (p < 5e-3, \\|r\\| >= 0.5, at least 8 rows)
share    one level's share of its rows exceeds the overall share by >= 0.2 (binomial p < 5e-3)
=======  ======================================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.checks.base import (
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    fmt,
    score_of,
)
from lemmata.agents.research.checks.stats import entity_means, robust_z, same_number, typed
from lemmata.agents.research.profile import Survey
from lemmata.agents.research.types import Direction, Hypothesis, Insight
from lemmata.environments.database import quote_ident

__all__ = ["KINDS", "check", "entity_hypotheses", "parse_entity"]

#: The kinds of hypothesis tested about one entity.
KINDS = frozenset({"outlier", "trend", "share", "other"})


def parse_entity(text: str) -> tuple[str, str]:
    """``"patient_id=42"`` -> ``("patient_id", "42")``; raises ValueError naming the problem."""
    column, sep, value = text.partition("=")
    if not sep or not column.strip() or not value.strip():
        raise ValueError(f"--entity {text!r} must be column=value, e.g. patient_id=42")
    return column.strip(), value.strip().strip("'\"")


def entity_hypotheses(survey: Survey, column: str, value: str) -> list[Hypothesis]:
    """What to ask about ``column=value`` in every table that has the column."""
    out = []
    entity = f"{column}={value}"
    for t in survey.tables.values():
        if column not in t.columns:
            continue
        if t.key == column:
            out.append(Hypothesis(kind="other", table=t.name, columns=[column], entities=[entity]))
            continue
        out.append(Hypothesis(kind="outlier", table=t.name, columns=[column], entities=[entity]))
        for n in t.role("numeric"):
            out.append(
                Hypothesis(kind="outlier", table=t.name, columns=[n.name], entities=[entity])
            )
            for d in t.role("date"):
                out.append(
                    Hypothesis(
                        kind="trend", table=t.name, columns=[n.name, d.name], entities=[entity]
                    )
                )
        for c in t.role("categorical"):
            out.append(Hypothesis(kind="share", table=t.name, columns=[c.name], entities=[entity]))
    return out


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    import numpy as np

    try:
        column, value = parse_entity(h.entities[0])
    except ValueError as exc:
        raise DataProblem(str(exc)) from None
    t = ctx.table(h.table)
    if column not in t.raw:
        raise DataProblem(f"{h.table} has no column {column!r}")
    mine = np.array([str(v) == value or same_number(v, value) for v in t.raw[column]], dtype=bool)
    if not mine.any():
        raise DataProblem(f"{h.table} has no rows where {column}={value}")
    where = ev.equals(column, typed(value, t.raw[column]))
    test: Callable[[CheckContext, Hypothesis, str, str, Any, str], Outcome] = {
        "other": _own_row,
        "outlier": _outlier,
        "trend": _trend,
        "share": _share,
    }[h.kind]
    return test(ctx, h, column, value, mine, where)


def _own_row(
    ctx: CheckContext, h: Hypothesis, column: str, value: str, mine: Any, where: str
) -> Outcome:
    import numpy as np

    t = ctx.table(h.table)
    i = int(np.argmax(mine))
    attrs = ", ".join(
        f"{c} {t.raw[c][i]}"
        for c, p in t.profile.columns.items()
        if c != column and p.role in {"categorical", "numeric", "date"} and t.raw[c][i] is not None
    )
    entity = f"{column}={value}"
    # A description, not a number: its evidence is the row itself.
    return Outcome(
        insights=[
            Insight(
                statement=f"{entity} in {h.table}: {attrs}",
                kind="other",
                table=h.table,
                columns=[column],
                entities=[entity],
                evidence_sql=f"SELECT * FROM {quote_ident(h.table)} WHERE {where}",
                score=1.0,
            )
        ]
    )


def _outlier(
    ctx: CheckContext, h: Hypothesis, column: str, value: str, mine: Any, where: str
) -> Outcome:
    import numpy as np

    entity = f"{column}={value}"
    t = ctx.table(h.table)
    (num,) = h.columns
    is_count = num == column
    if not is_count and num not in t.num:
        raise DataProblem(f"{h.table}.{num} is not a measure")
    x = np.ones(t.n) if is_count else t.num[num]
    means = entity_means(t.raw[column], x, counts=is_count)
    keys = [k for k, (_, n) in means.items() if n >= 3 or is_count]
    mine_key = next((k for k in keys if str(k) == value or same_number(k, value)), None)
    if mine_key is None or len(keys) < 10:
        raise DataProblem(f"{entity}: too few rows in {h.table} to compare")
    arr = np.array([means[k][0] for k in keys])
    z = float(robust_z(arr)[keys.index(mine_key)])
    if not abs(z) >= 3:
        return Outcome(observation=f"{entity}: {num} is typical (z={z:.1f})")
    if is_count:
        sql = f"SELECT COUNT(*) FROM {quote_ident(h.table)} WHERE {where}"
        what = f"number of {h.table} rows"
    else:
        sql = ev.mean_sql(h.table, ctx.expr(h.table, num), [where])
        what = f"mean {num}"
    pct = float((arr < means[mine_key][0]).mean() * 100)
    typical = float(np.median(arr))
    return ctx.outcome(
        Finding(
            kind="outlier",
            table=h.table,
            columns=[num],
            entities=[entity],
            direction="higher" if z > 0 else "lower",
            evidence_sql=sql,
            statement=lambda v: (
                f"{entity} has a {'high' if z > 0 else 'low'} {what} in {h.table}: "
                f"{fmt(v)} against a typical {fmt(typical)} ({'above' if z > 0 else 'below'} "
                f"{fmt(pct if z > 0 else 100 - pct)}% of {column}s)"
            ),
            score=min(50.0, abs(z) * 2),
            support={"test": "robust z among entities", "z": z},
        )
    )


def _trend(
    ctx: CheckContext, h: Hypothesis, column: str, value: str, mine: Any, where: str
) -> Outcome:
    import numpy as np
    from scipy import stats

    entity = f"{column}={value}"
    t = ctx.table(h.table)
    num, date_col = h.columns
    x, days = t.num[num][mine], t.days[date_col][mine]
    ok = np.isfinite(x) & np.isfinite(days)
    if ok.sum() < 8:
        raise DataProblem(f"{entity}: too few dated {num} values")
    fit = stats.linregress(days[ok], x[ok])
    if not (fit.pvalue < 5e-3 and abs(fit.rvalue) >= 0.5):
        return Outcome(observation=f"{entity}: no trend in {num} (r={fit.rvalue:.2f})")
    direction: Direction = "increase" if fit.slope > 0 else "decrease"
    sql = ev.entity_slope_sql(
        h.table,
        ctx.expr(h.table, num),
        ctx.col(h.table, date_col).time_sql(),
        [where, ctx.col(h.table, num).present()],
    )
    n, r = int(ok.sum()), float(fit.rvalue)
    return ctx.outcome(
        Finding(
            kind="trend",
            table=h.table,
            columns=[num, date_col],
            entities=[entity],
            direction=direction,
            evidence_sql=sql,
            statement=lambda v: (
                f"{entity}'s {num} {direction}s over time: {fmt(v)} per 30 days across {n} "
                f"{h.table} rows (r = {r:.2f})"
            ),
            score=score_of(float(fit.pvalue)),
            support={"test": "linear fit over the entity's rows", "p": float(fit.pvalue)},
        )
    )


def _share(
    ctx: CheckContext, h: Hypothesis, column: str, value: str, mine: Any, where: str
) -> Outcome:
    from scipy import stats

    entity = f"{column}={value}"
    (cat,) = h.columns
    raw = ctx.table(h.table).raw[cat]
    all_levels = [v for v in raw if v is not None]
    mine_levels = [v for v, m in zip(raw, mine, strict=True) if m and v is not None]
    if len(mine_levels) < 8:
        raise DataProblem(f"{entity}: too few {cat} values")
    top = max(set(mine_levels), key=mine_levels.count)
    s_e = mine_levels.count(top) / len(mine_levels)
    s_p = all_levels.count(top) / len(all_levels)
    p = float(
        stats.binomtest(mine_levels.count(top), len(mine_levels), s_p, alternative="greater").pvalue
    )
    if not (p < 5e-3 and s_e - s_p >= 0.2):
        return Outcome(observation=f"{entity}: {cat} mix is typical")
    return ctx.outcome(
        Finding(
            kind="share",
            table=h.table,
            columns=[cat],
            entities=[entity, f"{cat}={top}"],
            evidence_sql=ev.share_sql(h.table, cat, top, [where]),
            statement=lambda v: (
                f"{fmt(100 * v)}% of {entity}'s {h.table} rows have {cat} = {top}, against "
                f"{fmt(100 * s_p)}% over all rows"
            ),
            score=score_of(p),
            support={"test": "binomial vs the overall share", "p": p, "overall": s_p},
        )
    )
