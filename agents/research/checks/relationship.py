"""Relationship: the group-difference test across a link, on child values grouped by a
parent column, or on the number of child rows per parent."""

from __future__ import annotations

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
from lemmata.agents.research.checks.group import clear, mirror
from lemmata.agents.research.checks.stats import best_level, other_level
from lemmata.agents.research.types import Direction, Hypothesis

__all__ = ["check"]


def check(ctx: CheckContext, h: Hypothesis) -> Outcome:
    import numpy as np

    link = ctx.link(h.note)
    if link is None:
        raise DataProblem(f"no link {h.note}")
    num, pcat = h.columns
    child, parent = ctx.table(link.child), ctx.table(link.parent)
    if pcat not in parent.raw or (num and num not in child.num):
        raise DataProblem(
            f"{h.note}: no column {pcat!r} in {link.parent} or {num!r} in {link.child}"
        )
    level_of = dict(zip(parent.raw[link.parent_column], parent.raw[pcat], strict=True))
    if num:
        x = child.num[num]
        groups = [level_of.get(k) for k in child.raw[link.column]]
    else:
        counts: dict[Any, int] = {}
        for k in child.raw[link.column]:
            counts[k] = counts.get(k, 0) + 1
        keys = parent.raw[link.parent_column]
        x = np.array([float(counts.get(k, 0)) for k in keys])
        groups = list(parent.raw[pcat])
    found = best_level(x, groups)
    if found is None:
        raise DataProblem(f"{h.note}: groups of {pcat} too small")
    level, ma, mb, d, p = found
    if not clear(p, d):
        return Outcome(observation=f"{h.note} by {pcat}: no clear difference (p={p:.2g})")
    direction: Direction = "higher" if d > 0 else "lower"
    where = [ev.equals(pcat, level, "p")]
    if num:
        sql = ev.join_mean_sql(
            link.child,
            ctx.expr(link.child, num, "c"),
            link.column,
            link.parent,
            link.parent_column,
            where,
        )
        what = f"{link.child}.{num}"
        columns = [num, pcat]
    else:
        sql = ev.count_per_entity_sql(
            link.child, link.column, link.parent, link.parent_column, where
        )
        what = f"the number of {link.child} per {link.parent} row"
        columns = [link.column, pcat]
    return ctx.outcome(
        Finding(
            kind="relationship",
            table=link.child,
            columns=columns,
            entities=[f"{pcat}={level}"],
            direction=direction,
            evidence_sql=sql,
            statement=lambda value: (
                f"{what} is {direction} for {link.parent} with {pcat} = {level}: mean "
                f"{fmt(value)} against {fmt(mb)} for the others"
            ),
            score=score_of(p),
            support=mirror(
                {
                    "test": "Welch t-test across the link",
                    "link": h.note,
                    "p": p,
                    "cohen_d": d,
                    "rest_mean": mb,
                },
                pcat,
                other_level(groups, level),
            ),
        )
    )
