"""A third generator: wide cross-sectional tables in the style of econometrics data sets.

Textbook econometrics data (a survey of workers, a sample of houses sold, a list of firms and
their chief executives, a state's schools) come as one table of a few hundred to a few thousand
rows and twenty to forty columns: money amounts that are skewed (wages, prices, sales), their
logarithms and squares beside them, years of schooling and experience as integers, many 0/1
dummies (female, union, south...), an occasional code of a few levels, and missing values in
some columns. Documented facts about such tables are correlations and group differences of
modest size (a t-statistic of four to nine) among many columns that are unrelated.

Neither :mod:`~lemmata.agents.research.synthetic` nor
:mod:`~lemmata.agents.research.synthetic2` writes this shape: their tables are events with
dates, linked by keys, with one planted fact of each kind. This module writes one table per
database, in one of four domains, with ``CORRELATIONS`` planted correlations between measures,
``GAPS`` planted differences between the two levels of a dummy and one level of a code that
stands apart. Everything else is independent of everything else, except what follows by
construction: a column and its logarithm or square (``related``), which a run may report
without a false discovery. With ``planted=False`` the same columns are written with nothing
planted (a table of noise).

The strength of each planted relation is drawn as a t-statistic between ``T_RANGE``'s ends,
so a weak correlation in many rows and a strong one in few are both in the set. Values are
written through monotone transforms (a log-normal wage, schooling rounded to whole years), so
a planted correlation keeps its sign in ranks; its size in Pearson's r varies.

>>> import tempfile, pathlib
>>> g = generate(pathlib.Path(tempfile.mkdtemp()) / "wide.sqlite", seed=2)
>>> len(g.checklist) == CORRELATIONS + GAPS + 1, g.columns >= 20
(True, True)
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.agents.research.types import ChecklistItem
from lemmata.environments.database import quote_ident

__all__ = ["CORRELATIONS", "DOMAINS", "GAPS", "T_RANGE", "WideTable", "generate"]

#: Planted correlations between measures, per table.
CORRELATIONS = 4
#: Planted differences between the two levels of a dummy, per table.
GAPS = 3
#: The t-statistic of each planted relation, drawn uniformly between these.
T_RANGE = (4.0, 9.0)
#: The row counts a table is drawn from.
ROWS = (150, 250, 400, 600, 900, 1500, 2500)

# A column: (name, form, parameters). Forms:
#   money  (log mean, log sd, decimals)  a skewed positive amount (exp of a normal)
#   normal (mean, sd, decimals)          a symmetric measure
#   count  (low, high, centre, spread)   integers, clipped; centre and spread of the normal
#   pct    (decimals,)                   a percentage 0-100 (normal CDF)
#   dummy  (share of ones,)              0/1
#   code   (levels,)                     integer codes 1..levels of about equal size
# Derived columns: (name, "log" | "square", base column).
_Spec = tuple[str, str, tuple[float, ...]]

DOMAINS: dict[str, dict[str, Any]] = {
    "wages": {
        "table": "workers",
        "columns": [
            ("wage", "money", (2.6, 0.55, 2)),
            ("educ", "count", (6, 20, 12.8, 2.6)),
            ("exper", "count", (0, 48, 16, 10)),
            ("tenure", "count", (0, 40, 6, 7)),
            ("age", "count", (18, 64, 38, 11)),
            ("hours", "normal", (41, 9, 0)),
            ("iq", "normal", (101, 15, 0)),
            ("kww", "count", (12, 56, 36, 7.5)),
            ("meduc", "count", (0, 18, 10.7, 2.8)),
            ("feduc", "count", (0, 18, 10.2, 3.3)),
            ("sibs", "count", (0, 14, 2.9, 2.3)),
            ("faminc", "money", (10.4, 0.6, 0)),
            ("nwifeinc", "money", (2.9, 0.6, 2)),
            ("commute", "money", (3.0, 0.7, 1)),
            ("bmi", "normal", (27, 5, 1)),
            ("height", "normal", (68, 4, 1)),
            ("savings", "money", (8.0, 1.3, 0)),
            ("rent", "money", (6.7, 0.4, 0)),
            ("female", "dummy", (0.48,)),
            ("married", "dummy", (0.6,)),
            ("nonwhite", "dummy", (0.12,)),
            ("union", "dummy", (0.2,)),
            ("south", "dummy", (0.33,)),
            ("west", "dummy", (0.18,)),
            ("smsa", "dummy", (0.7,)),
            ("veteran", "dummy", (0.15,)),
            ("services", "dummy", (0.1,)),
            ("manuf", "dummy", (0.18,)),
            ("occ", "code", (7,)),
        ],
        "derived": [
            ("lwage", "log", "wage"),
            ("expersq", "square", "exper"),
            ("tenursq", "square", "tenure"),
            ("lfaminc", "log", "faminc"),
        ],
    },
    "housing": {
        "table": "hprice",
        "columns": [
            ("price", "money", (5.6, 0.35, 1)),
            ("assess", "money", (5.5, 0.3, 1)),
            ("sqrft", "normal", (2000, 450, 0)),
            ("lotsize", "money", (9.0, 0.6, 0)),
            ("bdrms", "count", (1, 8, 3.5, 0.9)),
            ("age", "count", (0, 120, 30, 25)),
            ("nox", "normal", (5.5, 1.2, 2)),
            ("crime", "money", (0.2, 1.2, 3)),
            ("rooms", "normal", (6.2, 0.7, 2)),
            ("dist", "money", (1.2, 0.5, 2)),
            ("stratio", "normal", (18.4, 2.2, 1)),
            ("lowstat", "pct", (1,)),
            ("proptax", "money", (3.8, 0.35, 0)),
            ("inst", "money", (9.9, 0.5, 0)),
            ("cbd", "money", (8.8, 0.6, 0)),
            ("taxrate", "normal", (1.4, 0.3, 2)),
            ("hoa", "money", (4.5, 0.8, 0)),
            ("school", "normal", (7, 1.5, 1)),
            ("elevation", "normal", (150, 60, 0)),
            ("colonial", "dummy", (0.7,)),
            ("garage", "dummy", (0.55,)),
            ("pool", "dummy", (0.12,)),
            ("fireplace", "dummy", (0.4,)),
            ("nearinc", "dummy", (0.25,)),
            ("waterfront", "dummy", (0.07,)),
            ("y81", "dummy", (0.45,)),
            ("district", "code", (6,)),
        ],
        "derived": [
            ("lprice", "log", "price"),
            ("lassess", "log", "assess"),
            ("llotsize", "log", "lotsize"),
            ("lsqrft", "log", "sqrft"),
            ("agesq", "square", "age"),
        ],
    },
    "firms": {
        "table": "ceosal",
        "columns": [
            ("salary", "money", (6.9, 0.55, 0)),
            ("sales", "money", (8.3, 1.2, 1)),
            ("roe", "normal", (17, 8.5, 1)),
            ("ros", "normal", (61, 65, 0)),
            ("mktval", "money", (8.0, 1.1, 0)),
            ("profits", "money", (5.3, 1.2, 0)),
            ("ceoten", "count", (0, 37, 7, 6)),
            ("comten", "count", (0, 58, 22, 12)),
            ("age", "count", (33, 86, 56, 7)),
            ("bonus", "money", (5.5, 0.9, 0)),
            ("pcsalary", "normal", (13, 30, 0)),
            ("debt", "pct", (1,)),
            ("employees", "money", (8.9, 1.1, 0)),
            ("rd", "pct", (2,)),
            ("assets", "money", (9.2, 1.3, 0)),
            ("tobinq", "money", (0.4, 0.5, 2)),
            ("ebit", "money", (6.0, 1.2, 0)),
            ("boardsize", "count", (5, 25, 11, 3)),
            ("college", "dummy", (0.93,)),
            ("grad", "dummy", (0.55,)),
            ("finance", "dummy", (0.2,)),
            ("consprod", "dummy", (0.28,)),
            ("utility", "dummy", (0.17,)),
            ("founder", "dummy", (0.1,)),
            ("sector", "code", (8,)),
        ],
        "derived": [
            ("lsalary", "log", "salary"),
            ("lsales", "log", "sales"),
            ("lmktval", "log", "mktval"),
            ("ceotensq", "square", "ceoten"),
        ],
    },
    "schools": {
        "table": "meap",
        "columns": [
            ("math10", "pct", (1,)),
            ("read4", "pct", (1,)),
            ("lunch", "pct", (1,)),
            ("enroll", "money", (7.6, 0.6, 0)),
            ("exppp", "money", (8.5, 0.2, 0)),
            ("avgsal", "money", (10.6, 0.15, 0)),
            ("bensal", "normal", (0.25, 0.04, 3)),
            ("staff", "normal", (100, 12, 1)),
            ("droprate", "money", (1.1, 0.9, 1)),
            ("gradrate", "normal", (84, 9, 1)),
            ("attend", "normal", (94, 2.5, 1)),
            ("teachers", "count", (8, 220, 60, 35)),
            ("pctwhite", "pct", (1,)),
            ("distance", "money", (2.0, 0.9, 1)),
            ("classize", "normal", (24, 3.5, 1)),
            ("spendgr", "normal", (3, 2.5, 1)),
            ("sat", "normal", (1020, 110, 0)),
            ("absent", "money", (2.3, 0.5, 1)),
            ("urban", "dummy", (0.3,)),
            ("charter", "dummy", (0.08,)),
            ("title1", "dummy", (0.45,)),
            ("magnet", "dummy", (0.06,)),
            ("rural", "dummy", (0.35,)),
            ("union", "dummy", (0.8,)),
            ("county", "code", (9,)),
        ],
        "derived": [
            ("lenroll", "log", "enroll"),
            ("lexppp", "log", "exppp"),
            ("lavgsal", "log", "avgsal"),
        ],
    },
}


@dataclass
class WideTable:
    """A generated wide table: where it was written, what was planted, and which pairs of
    columns are related by construction (a column and its logarithm or square)."""

    path: Path
    table: str
    domain: str
    rows: int
    columns: int
    checklist: list[ChecklistItem]
    related: set[frozenset[str]] = field(default_factory=set)

    def is_planted_or_derived(self, columns: list[str]) -> bool:
        """Whether a relation between ``columns`` is one the generator made (planted, or a
        column and its own transform): on a table of noise, any other is a false discovery."""
        pair = frozenset(c.lower() for c in columns)
        if pair in self.related:
            return True
        return any(pair == frozenset(c.lower() for c in it.columns) for it in self.checklist)


def _measures(specs: list[_Spec]) -> list[int]:
    """The columns a correlation can be planted on: measures with many values (a count of
    a few integers is read as categories)."""
    return [
        i
        for i, (_, form, p) in enumerate(specs)
        if form in ("money", "normal", "pct") or (form == "count" and p[1] - p[0] >= 10)
    ]


def _write(values: Any, form: str, p: tuple[float, ...]) -> Any:
    """A latent standard normal column as the values of its form."""
    import numpy as np
    from scipy import stats

    if form == "money":
        return np.round(np.exp(p[0] + p[1] * values), int(p[2]))
    if form == "normal":
        return np.round(p[0] + p[1] * values, int(p[2]))
    if form == "count":
        return np.clip(np.round(p[2] + p[3] * values), p[0], p[1])
    if form == "pct":
        return np.round(100 * stats.norm.cdf(values), int(p[0]))
    raise ValueError(f"unknown column form {form!r}")


def generate(
    path: Path, seed: int, *, planted: bool = True, domain: str | None = None
) -> WideTable:
    """Write one wide table to ``path`` (SQLite, replaced if it exists) and return what was
    planted in it. ``domain`` is one of :data:`DOMAINS` (drawn from the seed when None)."""
    import numpy as np

    if domain is not None and domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}: one of {', '.join(DOMAINS)}")
    rng = np.random.default_rng(seed)
    name = domain or str(rng.choice(sorted(DOMAINS)))
    spec = DOMAINS[name]
    table = spec["table"]
    n = int(rng.choice(ROWS))
    # Each table keeps every measure and about 85% of its domain's dummies, so widths vary.
    keep = [s for s in spec["columns"] if s[1] != "dummy" or rng.random() < 0.85]
    specs: list[_Spec] = [(s[0], s[1], tuple(s[2])) for s in keep]
    latent = rng.normal(size=(n, len(specs)))
    dummies = [i for i, s in enumerate(specs) if s[1] == "dummy"]
    flags = {i: (rng.random(n) < specs[i][2][0]).astype(int) for i in dummies}
    code = next(i for i, s in enumerate(specs) if s[1] == "code")
    levels = int(specs[code][2][0])
    codes = rng.integers(1, levels + 1, size=n)
    measures = _measures(specs)
    order = [int(i) for i in rng.permutation(measures)]
    items: list[ChecklistItem] = []

    def strength() -> float:
        return float(rng.uniform(*T_RANGE)) * float(rng.choice([-1, 1]))

    if planted:
        for j in range(CORRELATIONS):
            a, b = order[2 * j], order[2 * j + 1]
            t = strength()
            r = max(-0.7, min(0.7, t / math.sqrt(n + t * t)))
            latent[:, b] = r * latent[:, a] + math.sqrt(1 - r * r) * latent[:, b]
            items.append(
                ChecklistItem(
                    id=f"corr{j}",
                    kind="correlation",
                    table=table,
                    columns=[specs[a][0], specs[b][0]],
                    direction="positive" if r > 0 else "negative",
                )
            )
        gap_dummies = [int(i) for i in rng.permutation(dummies)]
        for j in range(GAPS):
            y, f = order[2 * CORRELATIONS + j], gap_dummies[j]
            share = float(flags[f].mean())
            t = strength()
            d = max(-1.2, min(1.2, t / math.sqrt(n * share * (1 - share))))
            latent[:, y] += d * flags[f]
            items.append(
                ChecklistItem(
                    id=f"gap{j}",
                    kind="group_difference",
                    table=table,
                    columns=[specs[y][0], specs[f][0]],
                    entities=[f"{specs[f][0]}=1"],
                    direction="higher" if d > 0 else "lower",
                )
            )
        y = order[2 * CORRELATIONS + GAPS]
        level = int(rng.integers(1, levels + 1))
        inside = codes == level
        t = strength()
        d = max(-1.2, min(1.2, t / math.sqrt(n * inside.mean() * (1 - inside.mean()))))
        latent[:, y] += d * inside
        items.append(
            ChecklistItem(
                id="code",
                kind="group_difference",
                table=table,
                columns=[specs[y][0], specs[code][0]],
                entities=[f"{specs[code][0]}={level}"],
                direction="higher" if d > 0 else "lower",
            )
        )
    values: dict[str, Any] = {}
    for i, (col, form, p) in enumerate(specs):
        if form == "dummy":
            values[col] = flags[i].astype(float)
        elif form == "code":
            values[col] = codes.astype(float)
        else:
            values[col] = _write(latent[:, i], form, p).astype(float)
        # Some columns have gaps (an answer not given, a figure not reported).
        if form != "code" and rng.random() < 0.3:
            values[col][rng.random(n) < rng.uniform(0.01, 0.1)] = np.nan
    related: set[frozenset[str]] = set()
    by_base: dict[str, list[str]] = {}
    for col, how, base in spec["derived"]:
        if base not in values:
            continue
        x = values[base]
        values[col] = np.round(np.log(x), 4) if how == "log" else x * x
        by_base.setdefault(base, [base]).append(col)
    for group in by_base.values():
        related |= {frozenset((a, b)) for a in group for b in group if a != b}
    _create(path, table, values, seed)
    return WideTable(
        path=path,
        table=table,
        domain=name,
        rows=n,
        columns=len(values),
        checklist=items,
        related=related,
    )


def _create(path: Path, table: str, values: dict[str, Any], seed: int) -> None:
    """Write the table, its columns in a shuffled order (as a data set's documentation lists
    them, not grouped by kind), integers as INTEGER and NaN as NULL."""
    import numpy as np

    rng = np.random.default_rng(seed + 7919)
    names = [str(c) for c in rng.permutation(list(values))]
    integral = {c: bool(np.all(np.isnan(v) | (v == np.round(v)))) for c, v in values.items()}
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    try:
        cols = ", ".join(f"{quote_ident(c)} {'INTEGER' if integral[c] else 'REAL'}" for c in names)
        con.execute(f"CREATE TABLE {quote_ident(table)} ({cols})")
        n = len(next(iter(values.values())))

        def cell(c: str, r: int) -> int | float | None:
            v = float(values[c][r])
            if math.isnan(v):
                return None
            return int(v) if integral[c] else v

        rows = [[cell(c, r) for c in names] for r in range(n)]
        marks = ", ".join("?" * len(names))
        con.executemany(f"INSERT INTO {quote_ident(table)} VALUES ({marks})", rows)
        con.commit()
    finally:
        con.close()
