"""A fourth generator: designed studies and surveys, as causal-inference textbooks ship them.

The data sets that econometrics and causal-inference textbooks hand their readers are not
event logs or wide cross sections but *designs*: a randomised trial (arms, one of them
treated, blocks or sites), a before/after panel for a difference in differences (units,
periods, a treated flag and a post flag), an observational comparison where a confounder
drives both who is treated and the outcome, and a survey whose answers are categories
(``yes``/``no``/``unsure``, a rating of 1-5) whose share differs by group. They are often
small (40-300 rows: a trial's patients, a class's pupils) and sometimes large (1,000-5,000
survey respondents), their categories often integer codes (arm 0/1/2, region 1-6), with
missing answers, and sometimes in several tables joined by keys (respondents in households,
patients at sites, observations of units).

Neither :mod:`~lemmata.agents.research.synthetic`, :mod:`~lemmata.agents.research.synthetic2`
nor :mod:`~lemmata.agents.research.synthetic3` writes this shape. Each seed draws one of
``DESIGNS`` and writes one database with:

- group differences (one arm, one education level, the participants of a programme) of
  Cohen's d 0.3-1.2;
- shares that differ by group (the share answering ``yes`` in one region) by 8-35 points,
  told as a ``share`` item with two columns (the answer and the group) and two entities;
- correlations (a baseline and its outcome, a rating and income);
- where the design has it, a difference across a key (a respondent's measure higher in urban
  households: a ``relationship`` item), a period effect, and the treated-after-treatment
  interaction of a difference in differences (a ``group_difference`` item with three columns:
  the outcome, the treated flag and the post flag, entities ``treated=1`` and ``post=1``);

among columns unrelated to anything. The strength of each planted effect is drawn as a
t-statistic between ``T_RANGE``'s ends and turned into an effect for the sample at hand
(clipped to the ranges above): an effect of d 0.3 among 40 people is beyond any test, so a
small study's effects are larger. With ``planted=False`` the same columns are written with
nothing planted: no effect, no block effects, no confounding.

>>> import tempfile, pathlib
>>> s = generate(pathlib.Path(tempfile.mkdtemp()) / "study.sqlite", seed=3)
>>> s.design in DESIGNS and len(s.checklist) >= 3
True
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.agents.research.types import ChecklistItem
from lemmata.environments.database import quote_ident

__all__ = ["DESIGNS", "LARGE", "SMALL", "T_RANGE", "Study", "generate"]

#: The designs a seed draws from.
DESIGNS = ("trial", "did", "observational", "survey")
#: The t-statistic of each planted effect, drawn uniformly between these.
T_RANGE = (4.0, 8.0)
#: Row counts of a small study, and of a large one (drawn one time in three).
SMALL = (40, 60, 90, 120, 160, 240, 300)
LARGE = (1000, 2000, 3500, 5000)
#: The range of a planted group difference (Cohen's d) and share gap (points).
D_RANGE = (0.3, 1.2)
GAP_RANGE = (0.08, 0.35)

# A table as written: column name -> values (None for missing), its primary key and its
# foreign keys (column -> parent table).
_Table = dict[str, list[Any]]
# What a design writes: its tables, their keys (a table's primary key by its name, a foreign
# key by (table, column)), what was planted, and the pairs related by construction.
_Design = tuple[dict[str, _Table], dict[Any, str], list[ChecklistItem], set[frozenset[str]]]


@dataclass
class Study:
    """A generated study: where it was written, its design, its tables' row counts, what
    was planted, and which pairs of columns are related by construction (a post flag and
    the year it is read from)."""

    path: Path
    design: str
    tables: dict[str, int]
    checklist: list[ChecklistItem]
    related: set[frozenset[str]] = field(default_factory=set)

    @property
    def rows(self) -> int:
        """The rows of the study's largest table."""
        return max(self.tables.values())

    def is_planted_or_derived(self, columns: list[str]) -> bool:
        """Whether a relation between ``columns`` is one the generator made (planted, or by
        construction): on a study with nothing planted, any other is a false discovery."""
        names = frozenset(c.lower() for c in columns if c)
        if any(names <= pair for pair in self.related):
            return True
        return any(names <= frozenset(c.lower() for c in it.columns) for it in self.checklist)


class _Draw:
    """The seed's random draws, and the effects they plant."""

    def __init__(self, seed: int, planted: bool) -> None:
        import numpy as np

        self.rng = np.random.default_rng(seed)
        self.planted = planted

    def t(self) -> float:
        return float(self.rng.uniform(*T_RANGE))

    def sign(self) -> int:
        return int(self.rng.choice([-1, 1]))

    def d(self, n1: int, n2: int) -> float:
        """A group difference (in standard deviations) of a drawn t between groups of
        ``n1`` and ``n2`` rows, clipped to ``D_RANGE``; 0 when nothing is planted."""
        if not self.planted:
            return 0.0
        d = self.t() * math.sqrt(1 / max(n1, 1) + 1 / max(n2, 1))
        return min(D_RANGE[1], max(D_RANGE[0], d))

    def gap(self, n1: int, n2: int, base: float) -> float:
        """A share gap (a proportion) of a drawn t around a share of ``base``, clipped to
        ``GAP_RANGE``; 0 when nothing is planted."""
        if not self.planted:
            return 0.0
        g = self.t() * math.sqrt(base * (1 - base) * (1 / max(n1, 1) + 1 / max(n2, 1)))
        return min(GAP_RANGE[1], max(GAP_RANGE[0], g))

    def r(self, n: int) -> float:
        """A correlation of a drawn t among ``n`` rows (0.2-0.7); 0 when nothing is
        planted."""
        if not self.planted:
            return 0.0
        t = self.t()
        return min(0.7, max(0.2, t / math.sqrt(n + t * t)))

    def rows(self) -> int:
        return int(self.rng.choice(LARGE if self.rng.random() < 1 / 3 else SMALL))

    def gaps(self, values: list[Any], share: float) -> list[Any]:
        """``values`` with about ``share`` of them missing."""
        return [None if self.rng.random() < share else v for v in values]

    def missing(self) -> float:
        """A column's share of missing values: none two times in three, else 1-8%."""
        return 0.0 if self.rng.random() < 2 / 3 else float(self.rng.uniform(0.01, 0.08))


def _labels(draw: _Draw, text: list[str], coded: bool) -> list[Any]:
    """A category's levels: ``text``, or the integer codes 1..k (0..k-1 for two levels)
    that many studies store instead."""
    if not coded:
        return list(text)
    start = 0 if len(text) == 2 else 1
    return list(range(start, start + len(text)))


def _round(x: Any, decimals: int) -> list[float]:
    import numpy as np

    return [float(v) for v in np.round(x, decimals)]


def _noise(draw: _Draw, n: int, table: _Table, names: list[str]) -> None:
    """Measures unrelated to anything (a study records more than it finds): normal, skewed
    and integer ones, some with gaps."""
    import numpy as np

    for name in names:
        form = int(draw.rng.integers(0, 3))
        z = draw.rng.normal(size=n)
        if form == 0:
            values: list[Any] = _round(50 + 10 * z, 1)
        elif form == 1:
            values = _round(np.exp(3 + 0.7 * z), 2)
        else:
            values = [int(v) for v in np.clip(np.round(20 + 6 * z), 0, None)]
        table[name] = draw.gaps(values, draw.missing())


def _item(
    kind: str,
    table: str,
    columns: list[str],
    entities: list[str] | None = None,
    direction: str | None = None,
    *,
    id: str,
) -> ChecklistItem:
    return ChecklistItem(
        id=id,
        kind=kind,  # type: ignore[arg-type]
        table=table,
        columns=columns,
        entities=entities or [],
        direction=direction,  # type: ignore[arg-type]
    )


def _binary(draw: _Draw, p: Any, labels: list[Any]) -> list[Any]:
    """Yes/no answers (``labels[1]`` with probability ``p``, row by row)."""
    import numpy as np

    hit = draw.rng.random(len(p)) < np.asarray(p)
    return [labels[1] if h else labels[0] for h in hit]


def _trial(draw: _Draw) -> _Design:
    """A randomised trial: patients at sites (a parent table), two to four arms, a baseline
    and its outcome, a yes/no outcome, and measures that nothing moves."""
    import numpy as np

    rng = draw.rng
    n = draw.rows()
    k = int(rng.choice([2, 2, 3, 4]))
    coded = rng.random() < 0.4
    arm_text = [["control", "treatment"], ["placebo", "low", "high"], ["control", "a", "b", "c"]]
    arms = _labels(draw, arm_text[k - 2], coded)
    arm_col = str(rng.choice(["arm", "group", "treat"]))
    arm = rng.integers(0, k, size=n)
    treated = int(rng.integers(1, k))  # the arm that works
    sites = int(rng.integers(4, 9))
    site = rng.integers(0, sites, size=n)
    site_effect = rng.normal(0, 0.8, size=sites) if draw.planted else np.zeros(sites)
    inside = arm == treated
    d = draw.d(int(inside.sum()), int((~inside).sum())) * draw.sign()
    r = draw.r(n)
    baseline = rng.normal(size=n)
    outcome = r * baseline + math.sqrt(1 - r * r) * rng.normal(size=n)
    outcome += d * inside + site_effect[site]
    base_share = float(rng.uniform(0.3, 0.6))
    gap = draw.gap(int(inside.sum()), int((~inside).sum()), base_share)
    yes_no = _labels(draw, ["no", "yes"], rng.random() < 0.5)
    improved = _binary(draw, base_share + gap * inside, yes_no)
    outcome_col = str(rng.choice(["score", "outcome", "pain", "recovery_days"]))
    scale = (50.0, 12.0)
    table: _Table = {
        "patient_id": list(range(1, n + 1)),
        "site_id": [int(s) + 1 for s in site],
        arm_col: [arms[a] for a in arm],
        "age": [int(v) for v in np.clip(np.round(rng.normal(52, 13, size=n)), 18, 90)],
        "female": [int(v) for v in rng.random(n) < 0.5],
        "baseline": _round(scale[0] + scale[1] * baseline, 1),
        outcome_col: _round(scale[0] + scale[1] * outcome, 1),
        "improved": improved,
    }
    table["baseline"] = draw.gaps(table["baseline"], draw.missing())
    _noise(draw, n, table, ["bmi", "sbp", "cost", "visits"][: int(rng.integers(2, 5))])
    parent: _Table = {
        "site_id": list(range(1, sites + 1)),
        "city": [f"City {chr(65 + i)}" for i in range(sites)],
        "beds": [int(v) for v in rng.integers(40, 600, size=sites)],
    }
    items = []
    if draw.planted:
        trt = f"{arm_col}={arms[treated]}"
        items = [
            _item(
                "group_difference",
                "patients",
                [outcome_col, arm_col],
                [trt],
                "higher" if d > 0 else "lower",
                id="arm",
            ),
            _item(
                "share",
                "patients",
                ["improved", arm_col],
                [f"improved={yes_no[1]}", trt],
                "higher",
                id="improved",
            ),
            _item(
                "correlation", "patients", ["baseline", outcome_col], None, "positive", id="base"
            ),
        ]
    tables = {"sites": parent, "patients": table}
    keys = {"sites": "site_id", "patients": "patient_id", ("patients", "site_id"): "sites"}
    return tables, keys, items, set()


def _did(draw: _Draw) -> _Design:
    """A difference in differences: units (a parent table holding who is treated) observed
    in two to six years, before and after a policy; the outcome moves with the years, the
    treated units start apart, and the treated move again after the policy."""
    import numpy as np

    rng = draw.rng
    units = max(20, draw.rows() // 2)
    years = int(rng.integers(2, 7))
    first = int(rng.integers(1985, 2015))
    policy = int(rng.integers(1, years)) if years > 2 else 1  # the first year after it
    treated = (rng.random(units) < rng.uniform(0.3, 0.6)).astype(int)
    if treated.sum() < 3 or treated.sum() > units - 3:
        treated[:3], treated[3:6] = 1, 0
    n = units * years
    unit = np.repeat(np.arange(units), years)
    year = np.tile(np.arange(years), units)
    post = (year >= policy).astype(int)
    tr = treated[unit]
    level = rng.normal(0, 0.6, size=units)
    n_post, n_pre = int(post.sum()), int((1 - post).sum())
    did = draw.d(int((tr * post).sum()), n - int((tr * post).sum())) * draw.sign()
    # The period effect and the treated units' head start (a difference across the key when
    # the flag is in the parent table) are drawn for the pooled rows, the interaction's part
    # in them taken out, so that the two never cancel.
    time_effect = draw.d(n_post, n_pre) * draw.sign() - did * float(tr[post == 1].mean())
    start = draw.d(int(treated.sum()) * years, int((1 - treated).sum()) * years) * draw.sign()
    start -= did * float(post[tr == 1].mean())
    y = level[unit] + time_effect * post + start * tr + did * tr * post + rng.normal(size=n)
    outcome_col = str(rng.choice(["employment", "price", "wage", "injuries"]))
    flat = rng.random() < 0.5  # a textbook's flat table holds the treated flag itself
    panel: _Table = {
        "unit_id": [int(u) + 1 for u in unit],
        "year": [first + int(v) for v in year],
        "post": [int(v) for v in post],
        outcome_col: _round(20 + 5 * y, 2),
    }
    if flat:
        panel["treated"] = [int(v) for v in tr]
    _noise(draw, n, panel, ["hours", "firms", "population"][: int(rng.integers(1, 4))])
    regions = _labels(draw, ["north", "south", "east", "west"], rng.random() < 0.4)
    parent: _Table = {
        "unit_id": list(range(1, units + 1)),
        "treated": [int(v) for v in treated],
        "region": [regions[int(v)] for v in rng.integers(0, 4, size=units)],
    }
    items = []
    if draw.planted:
        items = [
            _item(
                "group_difference",
                "observations",
                [outcome_col, "post"],
                ["post=1"],
                "higher" if y[post == 1].mean() > y[post == 0].mean() else "lower",
                id="post",
            ),
            _item(
                "group_difference",
                "observations",
                [outcome_col, "treated", "post"],
                ["treated=1", "post=1"],
                "higher" if did > 0 else "lower",
                id="did",
            ),
        ]
        if flat:
            items.append(
                _item(
                    "group_difference",
                    "observations",
                    [outcome_col, "treated"],
                    ["treated=1"],
                    "higher" if y[tr == 1].mean() > y[tr == 0].mean() else "lower",
                    id="start",
                )
            )
        else:
            items.append(
                _item(
                    "relationship",
                    "observations",
                    [outcome_col, "treated"],
                    ["treated=1"],
                    "higher" if y[tr == 1].mean() > y[tr == 0].mean() else "lower",
                    id="start",
                )
            )
    tables = {"units": parent, "observations": panel}
    keys = {"units": "unit_id", ("observations", "unit_id"): "units"}
    related = {frozenset(("post", "year"))}
    return tables, keys, items, related


def _observational(
    draw: _Draw,
) -> _Design:
    """An observational comparison: age drives both who joins a programme and the outcome
    (the participants are older, and the raw outcome gap is partly age's); employment's
    share differs by region."""
    import numpy as np

    rng = draw.rng
    n = draw.rows()
    age_z = rng.normal(size=n)
    push = draw.d(n // 2, n // 2) if draw.planted else 0.0
    joined = rng.random(n) < 1 / (1 + np.exp(-(-0.4 + 1.6 * push * age_z)))
    r = draw.r(n)
    outcome = r * age_z + math.sqrt(1 - r * r) * rng.normal(size=n)
    # The programme's own effect has the sign of age's (confounding adds to it: the raw gap
    # overstates it), so that the correlation with age is never cancelled.
    effect = draw.d(int(joined.sum()), int((~joined).sum()))
    outcome += effect * joined
    coded = rng.random() < 0.4
    yes_no = _labels(draw, ["no", "yes"], coded)
    k = int(rng.integers(3, 7))
    regions = _labels(draw, [f"region {chr(65 + i)}" for i in range(k)], coded)
    region = rng.integers(0, k, size=n)
    where = int(rng.integers(0, k))
    base = float(rng.uniform(0.4, 0.7))
    inside = region == where
    gap = draw.gap(int(inside.sum()), int((~inside).sum()), base) * draw.sign()
    employed = _binary(draw, base + gap * inside, yes_no)
    outcome_col = str(rng.choice(["earnings", "health_index", "test_score"]))
    program = str(rng.choice(["program", "training", "insured"]))
    table: _Table = {
        "person_id": list(range(1, n + 1)),
        "age": [int(v) for v in np.clip(np.round(40 + 11 * age_z), 18, 80)],
        program: _binary(draw, joined.astype(float), yes_no),
        outcome_col: _round(100 + 15 * outcome, 1),
        "region": [regions[int(v)] for v in region],
        "employed": draw.gaps(employed, draw.missing()),
        "educ": [int(v) for v in np.clip(np.round(rng.normal(12.5, 2.5, size=n)), 6, 20)],
    }
    _noise(
        draw,
        n,
        table,
        ["income", "children", "commute", "weight", "sleep"][: int(rng.integers(2, 6))],
    )
    items = []
    if draw.planted:
        yes = f"{program}={yes_no[1]}"
        items = [
            _item("correlation", "people", ["age", outcome_col], None, "positive", id="age"),
            _item("group_difference", "people", ["age", program], [yes], "higher", id="older"),
            _item(
                "group_difference",
                "people",
                [outcome_col, program],
                [yes],
                "higher" if outcome[joined].mean() > outcome[~joined].mean() else "lower",
                id="effect",
            ),
            _item(
                "share",
                "people",
                ["employed", "region"],
                [f"employed={yes_no[1 if gap > 0 else 0]}", f"region={regions[where]}"],
                "higher",
                id="employed",
            ),
        ]
    return {"people": table}, {"people": "person_id"}, items, set()


def _survey(draw: _Draw) -> _Design:
    """A household survey: respondents in households (a parent table: urban or rural),
    answers of yes/no/unsure and a rating of 1-5, income by education, one answer's share
    higher in one region, and hours worked apart in urban households (across the key)."""
    import numpy as np

    rng = draw.rng
    n = draw.rows()
    households = max(15, n // int(rng.integers(1, 4)))
    hh = rng.integers(0, households, size=n)
    urban = (rng.random(households) < 0.5).astype(int)
    coded = rng.random() < 0.4
    k = int(rng.integers(3, 7))
    regions = _labels(draw, [f"r{i + 1}" for i in range(k)], coded)
    region = rng.integers(0, k, size=n)
    levels = _labels(draw, ["primary", "secondary", "tertiary"], coded)
    sexes = _labels(draw, ["f", "m"], coded)
    educ = rng.choice(3, size=n, p=[0.3, 0.45, 0.25])
    top = educ == 2
    d_inc = draw.d(int(top.sum()), int((~top).sum()))
    log_income = 10 + 0.6 * (rng.normal(size=n) + d_inc * top)
    r = draw.r(n)
    z = (log_income - log_income.mean()) / log_income.std()
    trust_z = r * z + math.sqrt(1 - r * r) * rng.normal(size=n)
    trust = np.clip(np.round(3 + 1.1 * trust_z), 1, 5).astype(int)
    answers = _labels(draw, ["no", "yes", "unsure"], coded)
    where = int(rng.integers(0, k))
    inside = region == where
    base = float(rng.uniform(0.3, 0.5))
    gap = draw.gap(int(inside.sum()), int((~inside).sum()), base)
    u = urban[hh].astype(bool)
    d_hours = draw.d(int(u.sum()), int((~u).sum())) * draw.sign()
    hours = 38 + 8 * (rng.normal(size=n) + d_hours * u)
    table: _Table = {
        "respondent_id": list(range(1, n + 1)),
        "household_id": [int(h) + 1 for h in hh],
        "region": [regions[int(v)] for v in region],
        "sex": [sexes[int(v)] for v in rng.integers(0, 2, size=n)],
        "education": [levels[int(v)] for v in educ],
        "income": _round(np.exp(log_income), 0),
        "trust": draw.gaps([int(v) for v in trust], draw.missing()),
        "hours": _round(hours, 1),
    }
    questions = int(rng.integers(3, 6))
    asked = int(rng.integers(0, questions))
    for q in range(questions):
        p_yes = base + (gap if q == asked else 0.0) * inside
        p_unsure = np.full(n, 0.15)
        draws = rng.random(n)
        values = [
            answers[1] if a < p else answers[2] if a < p + s else answers[0]
            for a, p, s in zip(draws, p_yes, p_unsure, strict=True)
        ]
        table[f"q{q + 1}"] = draw.gaps(values, draw.missing())
    _noise(draw, n, table, ["commute", "rent", "savings"][: int(rng.integers(1, 4))])
    parent: _Table = {
        "household_id": list(range(1, households + 1)),
        "urban": [int(v) for v in urban],
        "size": [int(v) for v in rng.integers(1, 7, size=households)],
    }
    items = []
    if draw.planted:
        items = [
            _item(
                "group_difference",
                "respondents",
                ["income", "education"],
                [f"education={levels[2]}"],
                "higher",
                id="income",
            ),
            _item("correlation", "respondents", ["income", "trust"], None, "positive", id="trust"),
            _item(
                "share",
                "respondents",
                [f"q{asked + 1}", "region"],
                [f"q{asked + 1}={answers[1]}", f"region={regions[where]}"],
                "higher",
                id="answer",
            ),
            _item(
                "relationship",
                "respondents",
                ["hours", "urban"],
                ["urban=1"],
                "higher" if d_hours > 0 else "lower",
                id="urban",
            ),
        ]
    tables = {"households": parent, "respondents": table}
    keys = {
        "households": "household_id",
        "respondents": "respondent_id",
        ("respondents", "household_id"): "households",
    }
    return tables, keys, items, set()


_DESIGNS = {"trial": _trial, "did": _did, "observational": _observational, "survey": _survey}


def generate(path: Path, seed: int, *, planted: bool = True, design: str | None = None) -> Study:
    """Write one study to ``path`` (SQLite, replaced if it exists) and return what was
    planted in it. ``design`` is one of :data:`DESIGNS` (drawn from the seed when None)."""
    if design is not None and design not in DESIGNS:
        raise ValueError(f"unknown design {design!r}: one of {', '.join(DESIGNS)}")
    draw = _Draw(seed, planted)
    name = design or DESIGNS[int(draw.rng.integers(0, len(DESIGNS)))]
    tables, keys, items, related = _DESIGNS[name](draw)
    _create(path, tables, keys)
    return Study(
        path=path,
        design=name,
        tables={t: len(next(iter(cols.values()))) for t, cols in tables.items()},
        checklist=items,
        related=related,
    )


def _create(path: Path, tables: dict[str, _Table], keys: dict[Any, str]) -> None:
    """Write the tables (parents first), a primary key and foreign keys declared, integers
    as INTEGER, numbers as REAL, anything else as TEXT, None as NULL."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    try:
        for name, cols in tables.items():

            def sql_type(values: list[Any]) -> str:
                present = [v for v in values if v is not None]
                if all(isinstance(v, int) for v in present):
                    return "INTEGER"
                if all(isinstance(v, int | float) for v in present):
                    return "REAL"
                return "TEXT"

            defs = []
            for col, values in cols.items():
                kind = sql_type(values)
                extra = " PRIMARY KEY" if keys.get(name) == col else ""
                parent = keys.get((name, col))
                if parent is not None:
                    extra += f" REFERENCES {quote_ident(parent)}({quote_ident(col)})"
                defs.append(f"{quote_ident(col)} {kind}{extra}")
            con.execute(f"CREATE TABLE {quote_ident(name)} ({', '.join(defs)})")
            names = list(cols)
            rows = list(zip(*(cols[c] for c in names), strict=True))
            marks = ", ".join("?" * len(names))
            con.executemany(f"INSERT INTO {quote_ident(name)} VALUES ({marks})", rows)
        con.commit()
    finally:
        con.close()
