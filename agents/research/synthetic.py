"""Generated SQLite databases with planted insights and their checklists.

:func:`generate` writes one database of three linked tables (an entity table, an event table
and a measurement table, with keys, dates, noise, missing values, distractor columns and a
lookup table) in one of several domains, and plants one insight of every kind, plus three facts
about one entity (for an "analyse entity X" task). Each checklist item's ``value`` is computed
from the written data with the same SQL a report's ``evidence_sql`` uses
(:mod:`lemmata.agents.research.evidence`), never from the generation parameters.

>>> import tempfile, pathlib
>>> g = generate(pathlib.Path(tempfile.mkdtemp()) / "db.sqlite", seed=3)
>>> sorted({item.kind for item in g.checklist}) == sorted(set(KINDS) - {"other"})
True
>>> g.entity.split("=")[0] == g.entity_checklist[0].entities[0].split("=")[0]
True
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research.types import KINDS, ChecklistItem
from lemmata.environments.database import quote_ident

__all__ = ["DOMAINS", "GeneratedDatabase", "generate"]

# Names only: every domain gets the same structure, with its columns chosen at random.
DOMAINS: dict[str, dict[str, Any]] = {
    "clinic": {
        "parent": "patients",
        "key": "patient_id",
        "pcats": {
            "sex": ["F", "M"],
            "region": ["north", "south", "east", "west"],
            "insurance": ["public", "private", "none"],
            "smoker": ["yes", "no", "former"],
        },
        "pnums": ["age", "bmi"],
        "child": "visits",
        "ckey": "visit_id",
        "cdate": "visit_date",
        "ccats": {
            "department": ["cardiology", "oncology", "neurology", "orthopedics", "general"],
            "admission": ["planned", "emergency", "transfer"],
            "shift": ["day", "night", "weekend"],
        },
        "cnums": [
            "cost",
            "wait_minutes",
            "length_of_stay",
            "heart_rate",
            "systolic_bp",
            "temperature",
            "pain_score",
            "medication_count",
            "oxygen_saturation",
        ],
        "child2": "labs",
        "c2key": "lab_id",
        "c2date": "taken_on",
        "c2nums": ["glucose", "cholesterol", "creatinine", "hemoglobin", "sodium"],
    },
    "retail": {
        "parent": "customers",
        "key": "customer_id",
        "pcats": {
            "segment": ["consumer", "corporate", "home_office"],
            "region": ["americas", "europe", "asia", "africa"],
            "tier": ["bronze", "silver", "gold"],
            "channel_pref": ["web", "store", "phone"],
        },
        "pnums": ["age", "income"],
        "child": "orders",
        "ckey": "order_id",
        "cdate": "order_date",
        "ccats": {
            "category": ["books", "garden", "toys", "electronics", "grocery"],
            "payment": ["card", "cash", "voucher"],
            "ship_mode": ["standard", "express", "pickup"],
        },
        "cnums": [
            "amount",
            "items",
            "discount",
            "shipping_cost",
            "delivery_days",
            "weight_kg",
            "rating",
            "margin",
            "basket_minutes",
        ],
        "child2": "sessions",
        "c2key": "session_id",
        "c2date": "started_on",
        "c2nums": ["pages_viewed", "duration_s", "cart_value", "latency_ms", "clicks"],
    },
    "finance": {
        "parent": "companies",
        "key": "company_id",
        "pcats": {
            "sector": ["energy", "health", "tech", "retail"],
            "country": ["us", "uk", "de", "jp"],
            "exchange": ["nyse", "nasdaq", "lse"],
            "size_band": ["small", "mid", "large"],
        },
        "pnums": ["founded_year", "employees"],
        "child": "filings",
        "ckey": "filing_id",
        "cdate": "period_end",
        "ccats": {
            "form": ["10-K", "10-Q", "8-K"],
            "auditor": ["a_and_co", "b_partners", "c_llp", "d_group"],
            "segment": ["core", "services", "licensing"],
        },
        "cnums": [
            "revenue",
            "expenses",
            "rd_spend",
            "net_income",
            "cash",
            "debt",
            "capex",
            "dividends",
            "headcount_change",
        ],
        "child2": "prices",
        "c2key": "price_id",
        "c2date": "trade_date",
        "c2nums": ["close", "volume", "volatility", "spread", "short_interest"],
    },
}

_TOLERANCE = {
    "distribution": (0.3, False),
    "group_difference": (0.1, False),
    "trend": (0.35, False),
    "correlation": (0.1, True),
    "outlier": (0.1, False),
    "change": (0.15, False),
    "share": (0.05, True),
    "relationship": (0.1, False),
}


@dataclass
class GeneratedDatabase:
    """A generated database, its checklist, and an entity task with its own checklist."""

    path: Path
    seed: int
    domain: str
    checklist: list[ChecklistItem]
    entity: str
    entity_checklist: list[ChecklistItem]


def _item(
    kind: str, table: str, columns: list[str], statement: str, value: Any, **kw: Any
) -> ChecklistItem:
    tol, absolute = _TOLERANCE[kind]
    return ChecklistItem(
        id=f"{kind}:{table}:{'+'.join(columns)}:{'+'.join(kw.get('entities', []))}",
        kind=kind,  # type: ignore[arg-type]
        table=table,
        columns=columns,
        statement=statement,
        value=None if value is None else float(value),
        tolerance=tol,
        absolute=absolute,
        **kw,
    )


def generate(
    path: str | Path, seed: int, *, domain: str | None = None, planted: bool = True
) -> GeneratedDatabase:
    """Write a database with planted insights to ``path`` (replacing it) and return its
    checklists.

    ``planted=False`` writes the same structure with every effect switched off (a null
    database, to count what an explorer reports about pure noise); its checklists are empty.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    name = domain or list(DOMAINS)[seed % len(DOMAINS)]
    d = DOMAINS[name]
    path = Path(path)
    path.unlink(missing_ok=True)

    # -- shape ------------------------------------------------------------------------------
    n_parent = int(rng.integers(80, 350))
    start = date(int(rng.integers(2018, 2023)), int(rng.integers(1, 13)), 1)
    days = int(rng.integers(24, 40)) * 30
    pcats = list(d["pcats"].items())
    rng.shuffle(pcats)
    pcats = pcats[:3]
    ccats = list(d["ccats"].items())
    rng.shuffle(ccats)
    cnums = list(rng.permutation(d["cnums"]))
    c2nums = list(rng.permutation(d["c2nums"]))
    key, ckey, c2key = d["key"], d["ckey"], d["c2key"]
    cdate, c2date = d["cdate"], d["c2date"]

    # Roles of the columns (each planted insight gets its own).
    n_skew, n_grp, n_cor_a, n_cor_b, n_out, n_rel, n_ent = (str(c) for c in cnums[:7])
    c_distractors = [str(c) for c in cnums[7:]]
    n_trend, n_change, n_enttrend = (str(c) for c in c2nums[:3])
    c2_distractors = [str(c) for c in c2nums[3:]]
    grp_cat, grp_levels = ccats[0]
    share_cat, share_levels = ccats[1]
    pcat_rel, prel_levels = pcats[0]

    # -- the entity table ---------------------------------------------------------------------
    parent_ids = rng.choice(np.arange(1000, 1000 + 20 * n_parent), size=n_parent, replace=False)
    parent_ids.sort()
    parent_rows: list[dict[str, Any]] = []
    for pid in parent_ids:
        row: dict[str, Any] = {key: int(pid)}
        for cname, levels in pcats:
            row[cname] = str(rng.choice(levels))
        for num in d["pnums"]:
            row[num] = round(float(rng.normal(50, 12)), 1)
        row["notes"] = None if rng.random() < 0.6 else f"note {int(rng.integers(1_000_000))}"
        parent_rows.append(row)
    entity_index = int(rng.integers(0, n_parent))
    entity_id = int(parent_ids[entity_index])

    # -- the event table -----------------------------------------------------------------------
    per_parent = rng.poisson(rng.uniform(5, 14), size=n_parent) + 1
    per_parent[entity_index] = int(rng.integers(24, 36)) if planted else per_parent[entity_index]
    base = {c: float(rng.uniform(20, 500)) for c in cnums}
    sd = {c: base[c] * float(rng.uniform(0.15, 0.3)) for c in cnums}
    grp_level = str(rng.choice(grp_levels))
    grp_sign = 1 if rng.random() < 0.5 else -1
    grp_d = float(rng.uniform(0.3, 1.2))
    cor_sign = 1 if rng.random() < 0.5 else -1
    cor_r = float(rng.uniform(0.2, 0.8))
    rel_level = str(rng.choice(prel_levels))
    rel_sign = 1 if rng.random() < 0.5 else -1
    rel_d = float(rng.uniform(0.3, 1.1))
    share_level = str(rng.choice(share_levels))
    share_p = float(rng.uniform(0.4, 0.68))
    ent_sign = 1 if rng.random() < 0.5 else -1
    ent_shift = float(rng.uniform(0.8, 2.2))
    ent_cat_level = str(rng.choice(grp_levels))
    ent_cat_p = float(rng.uniform(0.45, 0.85))
    skew_sigma = float(rng.uniform(0.35, 0.9))
    if not planted:
        grp_d = cor_r = rel_d = ent_shift = 0.0
        share_p, ent_cat_p = 1 / len(share_levels), 1 / len(grp_levels)
    parent_of = {int(p): r for p, r in zip(parent_ids, parent_rows, strict=True)}

    def pick_share(levels: list[str], level: str, p: float) -> str:
        if rng.random() < p:
            return level
        others = [lv for lv in levels if lv != level]
        return str(rng.choice(others))

    child_rows: list[dict[str, Any]] = []
    next_id = int(rng.integers(10_000, 20_000))
    for pid, count in zip(parent_ids, per_parent, strict=True):
        pid = int(pid)
        for _ in range(int(count)):
            next_id += int(rng.integers(1, 4))
            day = start + timedelta(days=int(rng.integers(0, days)))
            row = {ckey: next_id, key: pid, cdate: day.isoformat()}
            is_entity = pid == entity_id
            row[grp_cat] = (
                pick_share(grp_levels, ent_cat_level, ent_cat_p)
                if is_entity
                else str(rng.choice(grp_levels))
            )
            row[share_cat] = pick_share(share_levels, share_level, share_p)
            for cname, levels in ccats[2:]:
                row[cname] = str(rng.choice(levels))
            for c in cnums:
                row[c] = float(rng.normal(base[c], sd[c]))
            if planted:
                row[n_skew] = float(base[n_skew] * 0.5 * rng.lognormal(0, skew_sigma))
            if row[grp_cat] == grp_level:
                row[n_grp] += grp_sign * grp_d * sd[n_grp]
            z = (row[n_cor_a] - base[n_cor_a]) / sd[n_cor_a]
            noise = float(rng.normal())
            row[n_cor_b] = base[n_cor_b] + sd[n_cor_b] * (
                cor_sign * cor_r * z + (1 - cor_r**2) ** 0.5 * noise
            )
            if parent_of[pid][pcat_rel] == rel_level:
                row[n_rel] += rel_sign * rel_d * sd[n_rel]
            if is_entity:
                row[n_ent] += ent_sign * ent_shift * sd[n_ent]
            child_rows.append(row)
    # Outliers: two events far above the rest.
    outlier_rows = [int(i) for i in rng.choice(len(child_rows), size=2, replace=False)]
    if not planted:
        outlier_rows = []
    for i in outlier_rows:
        child_rows[i][n_out] = base[n_out] + sd[n_out] * float(rng.uniform(5, 14))
    for row in child_rows:
        for c in cnums:
            row[c] = round(row[c], 2)
            if rng.random() < 0.015 and c != n_out:
                row[c] = None
        row["comment"] = None if rng.random() < 0.7 else str(rng.choice(["ok", "late", "n/a"]))
    for i in outlier_rows:
        if child_rows[i][n_out] is None:
            child_rows[i][n_out] = round(base[n_out] + 11 * sd[n_out], 2)

    # -- the measurement table -----------------------------------------------------------------
    base2 = {c: float(rng.uniform(10, 300)) for c in c2nums}
    sd2 = {c: base2[c] * float(rng.uniform(0.1, 0.2)) for c in c2nums}
    trend_sign = 1 if rng.random() < 0.5 else -1
    trend_total = float(rng.uniform(0.08, 0.5)) * base2[n_trend]
    change_sign = 1 if rng.random() < 0.5 else -1
    change_size = float(rng.uniform(0.06, 0.4)) * base2[n_change]
    change_day = int(days * float(rng.uniform(0.35, 0.65)))
    change_date = start + timedelta(days=change_day)
    ent_trend_sign = 1 if rng.random() < 0.5 else -1
    ent_trend_total = float(rng.uniform(2, 6)) * sd2[n_enttrend]
    if not planted:
        trend_total = change_size = ent_trend_total = 0.0
    per_parent2 = rng.poisson(5, size=n_parent) + 1
    per_parent2[entity_index] = int(rng.integers(18, 26)) if planted else per_parent2[entity_index]
    child2_rows: list[dict[str, Any]] = []
    next2 = int(rng.integers(50_000, 60_000))
    for pid, count in zip(parent_ids, per_parent2, strict=True):
        for _ in range(int(count)):
            next2 += 1
            offset = int(rng.integers(0, days))
            row = {
                c2key: next2,
                key: int(pid),
                c2date: (start + timedelta(days=offset)).isoformat(),
            }
            for c in c2nums:
                row[c] = float(rng.normal(base2[c], sd2[c]))
            row[n_trend] += trend_sign * trend_total * (offset / days - 0.5)
            if offset >= change_day:
                row[n_change] += change_sign * change_size
            if int(pid) == entity_id:
                row[n_enttrend] += ent_trend_sign * ent_trend_total * (offset / days - 0.5)
            for c in c2nums:
                row[c] = round(row[c], 3)
            child2_rows.append(row)

    # -- write -----------------------------------------------------------------------------------
    con = sqlite3.connect(path)
    parent, child, child2 = d["parent"], d["child"], d["child2"]
    _create(con, parent, parent_rows, primary=key)
    _create(con, child, child_rows, primary=ckey, foreign=(key, parent))
    _create(con, child2, child2_rows, primary=c2key, foreign=(key, parent))
    # A lookup table with no link declared, and no effect.
    region_like = pcats[-1]
    lookup = [
        {region_like[0]: lv, "manager": f"m{i}", "budget": float(rng.integers(1, 9)) * 1000}
        for i, lv in enumerate(region_like[1])
    ]
    _create(con, f"{region_like[0]}_info", lookup, primary=None)
    con.commit()
    con.close()

    # -- checklists, computed from the written data ------------------------------------------
    from lemmata.environments.database import Database

    q = quote_ident
    with Database(path) as db:

        def val(sql: str) -> float:
            return float(db.scalar(sql))

        items = [
            _item(
                "distribution",
                child,
                [n_skew],
                f"{n_skew} is right-skewed",
                val(ev.skew_sql(child, q(n_skew), [f"{q(n_skew)} IS NOT NULL"])),
            ),
            _item(
                "group_difference",
                child,
                [n_grp, grp_cat],
                f"{n_grp} is {'higher' if grp_sign > 0 else 'lower'} for {grp_cat}={grp_level}",
                val(ev.mean_sql(child, q(n_grp), [ev.equals(grp_cat, grp_level)])),
                entities=[f"{grp_cat}={grp_level}"],
                direction="higher" if grp_sign > 0 else "lower",
            ),
            _item(
                "correlation",
                child,
                [n_cor_a, n_cor_b],
                f"{n_cor_a} and {n_cor_b} are {'positively' if cor_sign > 0 else 'negatively'} correlated",
                val(
                    ev.pearson_sql(
                        child,
                        q(n_cor_a),
                        q(n_cor_b),
                        [f"{q(n_cor_a)} IS NOT NULL", f"{q(n_cor_b)} IS NOT NULL"],
                    )
                ),
                direction="positive" if cor_sign > 0 else "negative",
            ),
            *[
                _item(
                    "outlier",
                    child,
                    [n_out],
                    f"{ckey}={child_rows[i][ckey]} has an extreme {n_out}",
                    val(ev.row_value_sql(child, q(n_out), ckey, child_rows[i][ckey])),
                    entities=[f"{ckey}={child_rows[i][ckey]}"],
                    direction="higher",
                )
                for i in outlier_rows
            ],
            _item(
                "share",
                child,
                [share_cat],
                f"most {child} have {share_cat}={share_level}",
                val(ev.share_sql(child, share_cat, share_level)),
                entities=[f"{share_cat}={share_level}"],
            ),
            _item(
                "relationship",
                child,
                [n_rel, pcat_rel],
                f"{n_rel} is {'higher' if rel_sign > 0 else 'lower'} for {parent} with {pcat_rel}={rel_level}",
                val(
                    ev.join_mean_sql(
                        child,
                        f"c.{q(n_rel)}",
                        key,
                        parent,
                        key,
                        [ev.equals(pcat_rel, rel_level, "p")],
                    )
                ),
                entities=[f"{pcat_rel}={rel_level}"],
                direction="higher" if rel_sign > 0 else "lower",
            ),
            _item(
                "trend",
                child2,
                [n_trend, c2date],
                f"{n_trend} {'increases' if trend_sign > 0 else 'decreases'} over time",
                val(
                    ev.monthly_slope_sql(
                        child2, q(n_trend), q(c2date), [f"{q(n_trend)} IS NOT NULL"]
                    )
                ),
                direction="increase" if trend_sign > 0 else "decrease",
            ),
            _item(
                "change",
                child2,
                [n_change, c2date],
                f"{n_change} {'rises' if change_sign > 0 else 'falls'} from {change_date.isoformat()} on",
                val(
                    ev.mean_sql(
                        child2,
                        q(n_change),
                        [f"{q(c2date)} >= {ev.literal(change_date.isoformat())}"],
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
                [n_ent],
                f"{entity} has a {'high' if ent_sign > 0 else 'low'} mean {n_ent}",
                val(ev.mean_sql(child, q(n_ent), [ev.equals(key, entity_id)])),
                entities=[entity],
                direction="higher" if ent_sign > 0 else "lower",
            ),
            _item(
                "trend",
                child2,
                [n_enttrend, c2date],
                f"{entity}'s {n_enttrend} {'increases' if ent_trend_sign > 0 else 'decreases'} over time",
                val(
                    ev.entity_slope_sql(
                        child2, q(n_enttrend), q(c2date), [ev.equals(key, entity_id)]
                    )
                ),
                entities=[entity],
                direction="increase" if ent_trend_sign > 0 else "decrease",
            ),
            _item(
                "share",
                child,
                [grp_cat],
                f"most of {entity}'s {child} have {grp_cat}={ent_cat_level}",
                val(ev.share_sql(child, grp_cat, ent_cat_level, [ev.equals(key, entity_id)])),
                entities=[entity, f"{grp_cat}={ent_cat_level}"],
            ),
        ]
    if not planted:
        items, entity_items = [], []
    else:
        assert {i.kind for i in items} == set(KINDS) - {"other"}
    del c_distractors, c2_distractors  # present in the data with no effect
    return GeneratedDatabase(
        path=path,
        seed=seed,
        domain=name,
        checklist=items,
        entity=entity,
        entity_checklist=entity_items,
    )


def _create(
    con: sqlite3.Connection,
    table: str,
    rows: list[dict[str, Any]],
    *,
    primary: str | None,
    foreign: tuple[str, str] | None = None,
) -> None:
    columns = list(rows[0])
    defs = []
    for c in columns:
        sample = next((r[c] for r in rows if r[c] is not None), None)
        kind = (
            "INTEGER"
            if isinstance(sample, int)
            else "REAL"
            if isinstance(sample, float)
            else "TEXT"
        )
        defs.append(f"{quote_ident(c)} {kind}{' PRIMARY KEY' if c == primary else ''}")
    if foreign is not None:
        defs.append(
            f"FOREIGN KEY ({quote_ident(foreign[0])}) REFERENCES {quote_ident(foreign[1])} "
            f"({quote_ident(foreign[0])})"
        )
    con.execute(f"CREATE TABLE {quote_ident(table)} ({', '.join(defs)})")
    marks = ", ".join("?" for _ in columns)
    con.executemany(
        f"INSERT INTO {quote_ident(table)} VALUES ({marks})",
        [tuple(r[c] for c in columns) for r in rows],
    )
