"""Relationship: the group-difference test across a link, on child values grouped by a
parent column, or on the number of child rows per parent (Welch p < 1e-6, \|d\| >= 0.3).

Where the parent table is a table of units (``CheckContext.units``: households, schools,
sites) and the child rows' test falls short, the parents themselves are compared: each
parent's mean of its child rows, grouped by the parent's level, by Welch's t-test held to
Bonferroni at ``RATE`` over the database's relationship hypotheses and the levels compared,
for \|d\| >= 0.3 between the parents' means. The parents are the independent units (a
household's respondents share the household), so a p-value there means what it says, where
the child rows' would overstate it."""

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
from lemmata.agents.research.checks.stats import best_level, comparisons, other_level
from lemmata.agents.research.types import Direction, Hypothesis

__all__ = ["RATE", "check"]

#: The family-wise error rate of the parents' comparison (Bonferroni over the database's
#: relationship hypotheses and the levels compared).
RATE = 0.01
#: The fewest parents of a level (and of the rest) compared.
MIN_PARENTS = 5


def _per_parent(x: Any, keys: list[Any], parent_keys: list[Any]) -> Any:
    """Each parent's mean of its child rows' ``x`` (NaN for a parent without any)."""
    import numpy as np

    sums: dict[Any, list[float]] = {}
    for k, v in zip(keys, x, strict=True):
        if k is None or not np.isfinite(v):
            continue
        s = sums.setdefault(k, [0.0, 0.0])
        s[0] += float(v)
        s[1] += 1
    return np.array([sums[k][0] / sums[k][1] if k in sums else np.nan for k in parent_keys])


def _parents_bar(ctx: CheckContext, parent: str, groups: list[Any]) -> float:
    """The p-value bar of the parents' comparison (0 where the parent table is no table of
    units, or the hypotheses were not counted)."""
    if not ctx.units(parent):
        return 0.0
    return ctx.alpha("relationship", 0.0, rate=RATE) / comparisons(groups)


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
    plain = found is not None and clear(found[4], found[3])
    by_parents = False
    if not plain:
        # The parents compared as the units they are: each one's mean of its child rows.
        levels = list(parent.raw[pcat])
        keys = parent.raw[link.parent_column]
        means = _per_parent(x, child.raw[link.column], keys) if num else x
        bar = _parents_bar(ctx, link.parent, levels)
        among = best_level(means, levels, bar, min_group=MIN_PARENTS) if bar else None
        if among is not None and among[4] < bar and abs(among[3]) >= 0.3:
            level, _, _, d, p = among
            inside = np.array([g == level for g in groups]) & np.isfinite(x)
            rest = np.array([g is not None and g != level for g in groups]) & np.isfinite(x)
            found = (level, float(x[inside].mean()), float(x[rest].mean()), d, p)
            by_parents = True
    if found is None:
        raise DataProblem(f"{h.note}: groups of {pcat} too small")
    level, ma, mb, d, p = found
    test = "Welch t-test across the link" if plain else "Welch t-test of the parents' means"
    if not (plain or by_parents):
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
                    "test": test,
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
