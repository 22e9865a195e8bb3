"""A second generator of databases with planted insights, in schema shapes the first never writes.

:mod:`~lemmata.agents.research.synthetic` writes one shape only: ISO dates, text categories,
numbers in one unit, events in long tables. An explorer tuned on it can lean on that shape
without anyone noticing, so this module plants the same kinds of facts (one of every kind, two
outliers, three facts about one entity, checklists in the same format, each value computed from
the written data with the evidence SQL) in the shapes real databases also come in:

- **text time keys**: events dated ``YYYY/MM/DD``; a monthly table keyed by ``YYYY-MM`` or by
  month names (``Jan 2023``); a quarterly table keyed by ``2023Q1``;
- **one row per period**: the monthly table is a time series, where the trend and the step
  change are planted (a dozen to five dozen rows, not thousands of events);
- **a wide table**: one row per quarter and one column per region (or sector, tier...) of the
  entity table, with a trend planted in one of those columns;
- **integer codes with a lookup table**: the grouping category of the events and the entity
  category behind the relationship are stored as ``*_code`` integers, their labels in
  ``*_codes`` tables;
- **nullable columns**: measures and categories with 5-15% NULLs (the share fact is about a
  category with NULLs, counted over the rows that have a value);
- **mixed units**: half the event measures are stored as integer thousandths (``*_milli``),
  and the monthly table repeats one event measure as a monthly mean in the other unit.

It is a module of its own, not a ``style=`` switch inside :func:`synthetic.generate`, so that
the original generator stays byte for byte what it was (its seeds' databases and results remain
comparable across versions: the benchmark reports both) and neither module grows past one job.
Names, domains and tolerances are shared with the original.

>>> import tempfile, pathlib
>>> g = generate(pathlib.Path(tempfile.mkdtemp()) / "db.sqlite", seed=3)
>>> sorted({item.kind for item in g.checklist}) == sorted(set(KINDS) - {"other"})
True
"""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.synthetic import DOMAINS, GeneratedDatabase, _create, _item
from lemmata.agents.research.timeforms import FORMS
from lemmata.agents.research.types import KINDS
from lemmata.environments.database import quote_ident

__all__ = ["generate"]

_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _add_months(start: date, months: int) -> date:
    m = start.month - 1 + months
    return date(start.year + m // 12, m % 12 + 1, 1)


def _month_key(day: date, form: str) -> str:
    if form == "month_name":
        return f"{_MONTHS[day.month - 1]} {day.year}"
    return f"{day.year}-{day.month:02d}"


def generate(
    path: str | Path, seed: int, *, domain: str | None = None, planted: bool = True
) -> GeneratedDatabase:
    """Write a database in the second generator's shapes to ``path`` (replacing it) and return
    its checklists; ``planted=False`` switches every effect off (a null database)."""
    import numpy as np

    # A stream of its own: seed s here shares nothing with seed s of the original generator.
    rng = np.random.default_rng([seed, 2])
    name = domain or list(DOMAINS)[seed % len(DOMAINS)]
    d = DOMAINS[name]
    path = Path(path)
    path.unlink(missing_ok=True)
    q = quote_ident

    # -- shape ------------------------------------------------------------------------------
    n_parent = int(rng.integers(80, 300))
    start = date(int(rng.integers(2015, 2022)), int(rng.integers(1, 13)), 1)
    months = int(rng.integers(30, 61))
    # The events cover the monthly table's months, each whole (no partial last month).
    days = (_add_months(start, months) - start).days
    month_form = str(rng.choice(["year_month", "month_name"]))
    pcats = list(d["pcats"].items())
    rng.shuffle(pcats)
    ccats = list(d["ccats"].items())
    rng.shuffle(ccats)
    cnums = [str(c) for c in rng.permutation(d["cnums"])]
    c2nums = [str(c) for c in rng.permutation(d["c2nums"])]
    key, ckey = d["key"], d["ckey"]
    cdate = d["cdate"]
    parent, child, child2 = d["parent"], d["child"], d["child2"]
    # Half the event measures are stored in thousandths, as integers.
    milli = {c for c in cnums if rng.random() < 0.5}
    col = {c: f"{c}_milli" if c in milli else c for c in cnums}

    n_skew, n_grp, n_cor_a, n_cor_b, n_out, n_rel, n_ent, n_enttrend = cnums[:8]
    n_trend, n_change = c2nums[:2]
    grp_cat, grp_levels = ccats[0]
    share_cat, share_levels = ccats[1]
    pcat_rel, prel_levels = pcats[0]
    pcat_wide, wide_levels = pcats[1]
    grp_code, rel_code = f"{grp_cat}_code", f"{pcat_rel}_code"

    # -- the entity table: a coded category, a category and measures with NULLs -----------------
    parent_ids = rng.choice(np.arange(1, 1 + 30 * n_parent), size=n_parent, replace=False)
    parent_ids.sort()
    parent_rows: list[dict[str, Any]] = []
    for pid in parent_ids:
        row: dict[str, Any] = {key: int(pid)}
        row[rel_code] = int(rng.integers(1, len(prel_levels) + 1))
        for cname, levels in pcats[1:3]:
            row[cname] = None if rng.random() < 0.12 else str(rng.choice(levels))
        for num in d["pnums"]:
            row[num] = None if rng.random() < 0.05 else round(float(rng.normal(50, 12)), 1)
        parent_rows.append(row)
    entity_index = int(rng.integers(0, n_parent))
    entity_id = int(parent_ids[entity_index])
    rel_of = {int(r[key]): r[rel_code] for r in parent_rows}

    # -- the event table ---------------------------------------------------------------------------
    per_parent = rng.poisson(rng.uniform(4, 12), size=n_parent) + 1
    if planted:
        per_parent[entity_index] = int(rng.integers(24, 36))
    base = {c: float(rng.uniform(5, 500)) for c in cnums}
    sd = {c: base[c] * float(rng.uniform(0.15, 0.3)) for c in cnums}
    grp_level = int(rng.integers(1, len(grp_levels) + 1))
    grp_sign = 1 if rng.random() < 0.5 else -1
    grp_d = float(rng.uniform(0.3, 1.2))
    cor_sign = 1 if rng.random() < 0.5 else -1
    cor_r = float(rng.uniform(0.2, 0.8))
    rel_level = int(rng.integers(1, len(prel_levels) + 1))
    rel_sign = 1 if rng.random() < 0.5 else -1
    rel_d = float(rng.uniform(0.3, 1.1))
    share_level = str(rng.choice(share_levels))
    share_p = float(rng.uniform(0.4, 0.68))
    ent_sign = 1 if rng.random() < 0.5 else -1
    ent_shift = float(rng.uniform(0.8, 2.2))
    ent_cat_level = int(rng.integers(1, len(grp_levels) + 1))
    ent_cat_p = float(rng.uniform(0.45, 0.85))
    ent_trend_sign = 1 if rng.random() < 0.5 else -1
    ent_trend_total = float(rng.uniform(2, 6)) * sd[n_enttrend]
    skew_sigma = float(rng.uniform(0.35, 0.9))
    if not planted:
        grp_d = cor_r = rel_d = ent_shift = ent_trend_total = 0.0
        share_p, ent_cat_p = 1 / len(share_levels), 1 / len(grp_levels)

    def pick(levels: list[Any], level: Any, p: float) -> Any:
        if rng.random() < p:
            return level
        return rng.choice([lv for lv in levels if lv != level]).item()

    codes = list(range(1, len(grp_levels) + 1))
    child_rows: list[dict[str, Any]] = []
    next_id = int(rng.integers(100_000, 200_000))
    for pid, count in zip(parent_ids, per_parent, strict=True):
        pid = int(pid)
        is_entity = pid == entity_id
        for _ in range(int(count)):
            next_id += int(rng.integers(1, 5))
            offset = int(rng.integers(0, days))
            day = start + timedelta(days=offset)
            row = {ckey: next_id, key: pid, cdate: day.strftime("%Y/%m/%d")}
            row[grp_code] = (
                pick(codes, ent_cat_level, ent_cat_p) if is_entity else int(rng.choice(codes))
            )
            row[share_cat] = (
                None if rng.random() < 0.12 else pick(share_levels, share_level, share_p)
            )
            for cname, levels in ccats[2:]:
                row[cname] = str(rng.choice(levels))
            x = {c: float(rng.normal(base[c], sd[c])) for c in cnums}
            if planted:
                x[n_skew] = float(base[n_skew] * 0.5 * rng.lognormal(0, skew_sigma))
            if row[grp_code] == grp_level:
                x[n_grp] += grp_sign * grp_d * sd[n_grp]
            z = (x[n_cor_a] - base[n_cor_a]) / sd[n_cor_a]
            x[n_cor_b] = base[n_cor_b] + sd[n_cor_b] * (
                cor_sign * cor_r * z + (1 - cor_r**2) ** 0.5 * float(rng.normal())
            )
            if rel_of[pid] == rel_level:
                x[n_rel] += rel_sign * rel_d * sd[n_rel]
            if is_entity:
                x[n_ent] += ent_sign * ent_shift * sd[n_ent]
                x[n_enttrend] += ent_trend_sign * ent_trend_total * (offset / days - 0.5)
            for c in cnums:
                row[col[c]] = x[c]
            child_rows.append(row)
    outlier_rows = (
        [int(i) for i in rng.choice(len(child_rows), size=2, replace=False)] if planted else []
    )
    for i in outlier_rows:
        child_rows[i][col[n_out]] = base[n_out] + sd[n_out] * float(rng.uniform(5, 14))
    for i, row in enumerate(child_rows):
        for c in cnums:
            v = row[col[c]]
            row[col[c]] = int(round(v * 1000)) if c in milli else round(v, 2)
            if rng.random() < 0.07 and not (c == n_out and i in outlier_rows):
                row[col[c]] = None

    # -- a monthly table: one row per month, keyed by text ------------------------------------------
    base2 = {c: float(rng.uniform(10, 300)) for c in c2nums}
    sd2 = {c: base2[c] * float(rng.uniform(0.05, 0.15)) for c in c2nums}
    trend_sign = 1 if rng.random() < 0.5 else -1
    trend_total = float(rng.uniform(2.5, 6)) * sd2[n_trend]
    change_sign = 1 if rng.random() < 0.5 else -1
    change_size = float(rng.uniform(1.5, 3.5)) * sd2[n_change]
    change_month = int(months * float(rng.uniform(0.35, 0.65)))
    if not planted:
        trend_total = change_size = 0.0
    # The same measure as the events hold, in the other unit: a monthly mean.
    unit = 0.001 if n_cor_a in milli else 1000.0
    avg_name = f"avg_{n_cor_a}" if n_cor_a in milli else f"avg_{n_cor_a}_milli"
    monthly = f"{child2}_monthly"
    month_rows: list[dict[str, Any]] = []
    for m in range(months):
        first = _add_months(start, m)
        row = {"month": _month_key(first, month_form)}
        for c in c2nums:
            row[c] = float(rng.normal(base2[c], sd2[c]))
        row[n_trend] += trend_sign * trend_total * (m / (months - 1) - 0.5)
        if m >= change_month:
            row[n_change] += change_sign * change_size
        for c in c2nums:
            row[c] = None if rng.random() < 0.05 else round(row[c], 3)
        prefix = first.strftime("%Y/%m/")
        in_month = [
            r[col[n_cor_a]]
            for r in child_rows
            if r[col[n_cor_a]] is not None and r[cdate].startswith(prefix)
        ]
        row[avg_name] = round(float(np.mean(in_month)) * unit, 3) if in_month else None
        month_rows.append(row)
    change_date = _add_months(start, change_month)

    # -- a wide table: one row per quarter, one column per level of an entity category ---------
    quarters = int(rng.integers(12, 21))
    q0 = date(start.year, 3 * ((start.month - 1) // 3) + 1, 1)
    wide = f"{child2}_by_{pcat_wide}"
    wide_base = {lv: float(rng.uniform(50, 500)) for lv in wide_levels}
    wide_sd = {lv: wide_base[lv] * float(rng.uniform(0.05, 0.15)) for lv in wide_levels}
    wide_level = str(rng.choice(wide_levels))
    wide_sign = 1 if rng.random() < 0.5 else -1
    wide_total = float(rng.uniform(3, 7)) * wide_sd[wide_level] if planted else 0.0
    wide_rows: list[dict[str, Any]] = []
    for k in range(quarters):
        first = _add_months(q0, 3 * k)
        row = {"quarter": f"{first.year}Q{(first.month - 1) // 3 + 1}"}
        for lv in wide_levels:
            v = float(rng.normal(wide_base[lv], wide_sd[lv]))
            if lv == wide_level:
                v += wide_sign * wide_total * (k / (quarters - 1) - 0.5)
            row[lv] = None if rng.random() < 0.04 and lv != wide_level else round(v, 2)
        wide_rows.append(row)

    # -- write -------------------------------------------------------------------------------------
    con = sqlite3.connect(path)
    _create(con, parent, parent_rows, primary=key)
    _create(con, child, child_rows, primary=ckey, foreign=(key, parent))
    _create(con, monthly, month_rows, primary="month")
    _create(con, wide, wide_rows, primary="quarter")
    for code, levels in ((grp_code, grp_levels), (rel_code, prel_levels)):
        label = code.removesuffix("_code")
        lookup = [{code: i + 1, label: lv} for i, lv in enumerate(levels)]
        _create(con, f"{label}_codes", lookup, primary=code)
    con.commit()
    con.close()

    # -- checklists, computed from the written data -------------------------------------------
    from lemmata.environments.database import Database

    event_time = FORMS["iso_slash"].sql(q(cdate))
    month_time = FORMS[month_form].sql(q("month"))
    quarter_time = FORMS["quarter"].sql(q("quarter"))

    def present(c: str) -> str:
        return f"{q(c)} IS NOT NULL"

    with Database(path) as db:

        def val(sql: str) -> float:
            return float(db.scalar(sql))

        s_skew, s_grp, s_a, s_b = col[n_skew], col[n_grp], col[n_cor_a], col[n_cor_b]
        s_out, s_rel, s_ent, s_et = col[n_out], col[n_rel], col[n_ent], col[n_enttrend]
        items = [
            _item(
                "distribution",
                child,
                [s_skew],
                f"{s_skew} is right-skewed",
                val(ev.skew_sql(child, q(s_skew), [present(s_skew)])),
            ),
            _item(
                "group_difference",
                child,
                [s_grp, grp_code],
                f"{s_grp} is {'higher' if grp_sign > 0 else 'lower'} for {grp_code}={grp_level} "
                f"({grp_levels[grp_level - 1]})",
                val(ev.mean_sql(child, q(s_grp), [ev.equals(grp_code, grp_level)])),
                entities=[f"{grp_code}={grp_level}"],
                direction="higher" if grp_sign > 0 else "lower",
            ),
            _item(
                "correlation",
                child,
                [s_a, s_b],
                f"{s_a} and {s_b} are {'positively' if cor_sign > 0 else 'negatively'} correlated",
                val(ev.pearson_sql(child, q(s_a), q(s_b), [present(s_a), present(s_b)])),
                direction="positive" if cor_sign > 0 else "negative",
            ),
            *[
                _item(
                    "outlier",
                    child,
                    [s_out],
                    f"{ckey}={child_rows[i][ckey]} has an extreme {s_out}",
                    val(ev.row_value_sql(child, q(s_out), ckey, child_rows[i][ckey])),
                    entities=[f"{ckey}={child_rows[i][ckey]}"],
                    direction="higher",
                )
                for i in outlier_rows
            ],
            _item(
                "share",
                child,
                [share_cat],
                f"most {child} with a {share_cat} have {share_cat}={share_level}",
                val(ev.share_sql(child, share_cat, share_level)),
                entities=[f"{share_cat}={share_level}"],
            ),
            _item(
                "relationship",
                child,
                [s_rel, rel_code],
                f"{s_rel} is {'higher' if rel_sign > 0 else 'lower'} for {parent} with "
                f"{rel_code}={rel_level} ({prel_levels[rel_level - 1]})",
                val(
                    ev.join_mean_sql(
                        child,
                        f"c.{q(s_rel)}",
                        key,
                        parent,
                        key,
                        [ev.equals(rel_code, rel_level, "p")],
                    )
                ),
                entities=[f"{rel_code}={rel_level}"],
                direction="higher" if rel_sign > 0 else "lower",
            ),
            _item(
                "trend",
                monthly,
                [n_trend, "month"],
                f"{n_trend} {'increases' if trend_sign > 0 else 'decreases'} month by month",
                val(ev.monthly_slope_sql(monthly, q(n_trend), month_time, [present(n_trend)])),
                direction="increase" if trend_sign > 0 else "decrease",
            ),
            _item(
                "trend",
                wide,
                [wide_level, "quarter"],
                f"{wide_level}'s value {'increases' if wide_sign > 0 else 'decreases'} by quarter",
                val(
                    ev.monthly_slope_sql(
                        wide, q(wide_level), quarter_time, [present(wide_level)], period="quarter"
                    )
                ),
                direction="increase" if wide_sign > 0 else "decrease",
            ),
            _item(
                "change",
                monthly,
                [n_change, "month"],
                f"{n_change} {'rises' if change_sign > 0 else 'falls'} from "
                f"{_month_key(change_date, month_form)} on",
                val(
                    ev.mean_sql(
                        monthly,
                        q(n_change),
                        [
                            f"date({month_time}) >= {ev.literal(change_date.isoformat())}",
                            present(n_change),
                        ],
                    )
                ),
                direction="increase" if change_sign > 0 else "decrease",
            ),
        ]
        entity = f"{key}={entity_id}"
        entity_items = [
            _item(
                "outlier",
                child,
                [s_ent],
                f"{entity} has a {'high' if ent_sign > 0 else 'low'} mean {s_ent}",
                val(ev.mean_sql(child, q(s_ent), [ev.equals(key, entity_id)])),
                entities=[entity],
                direction="higher" if ent_sign > 0 else "lower",
            ),
            _item(
                "trend",
                child,
                [s_et, cdate],
                f"{entity}'s {s_et} {'increases' if ent_trend_sign > 0 else 'decreases'} over time",
                val(ev.entity_slope_sql(child, q(s_et), event_time, [ev.equals(key, entity_id)])),
                entities=[entity],
                direction="increase" if ent_trend_sign > 0 else "decrease",
            ),
            _item(
                "share",
                child,
                [grp_code],
                f"most of {entity}'s {child} have {grp_code}={ent_cat_level}",
                val(ev.share_sql(child, grp_code, ent_cat_level, [ev.equals(key, entity_id)])),
                entities=[entity, f"{grp_code}={ent_cat_level}"],
            ),
        ]
    if not planted:
        items, entity_items = [], []
    else:
        assert {i.kind for i in items} == set(KINDS) - {"other"}
    return GeneratedDatabase(
        path=path,
        seed=seed,
        domain=name,
        checklist=items,
        entity=entity,
        entity_checklist=entity_items,
    )
