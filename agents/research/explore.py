"""The statistical explorer: proposes hypotheses from a survey and tests them.

Offline, this is the whole research method; with a model it tests what the model proposes too.
Each hypothesis is tested on the table's rows by the check of its kind
(:mod:`~lemmata.agents.research.checks`), with a stated criterion strict enough that a database
of pure noise yields almost nothing, and a confirmed one becomes an
:class:`~lemmata.agents.research.types.Insight` whose value is computed by its evidence SQL over
all rows.

=================  ==========================================================================
kind               confirmed when
=================  ==========================================================================
distribution       \\|skewness\\| >= 1 without the outlying rows (\\|robust z\\| >= 7), n >= 50
share              one level holds >= max(0.3, 1/k + 0.2 sqrt(1/k (1 - 1/k))) of the rows
                   (Cohen's w >= 0.2 against the rest), chi-square p < 1e-6 (in a small
                   table: p < 5% / share hypotheses)
group_difference   one level's mean differs from the rest: Welch p < 1e-6, \\|Cohen's d\\| >= 0.3
                   (a skewed column: Mann-Whitney, \\|rank-biserial r\\| >= 0.17);
                   or, where another grouping explains >= 30% of the variance (a field
                   trial's sites), within its blocks: p < alpha / k (k levels), \\|d\\| >= 0.5;
                   in a small table (< 200 rows, not a time series), levels of >= 6 rows,
                   \\|d\\| >= 0.5, Welch and Mann-Whitney p below the step-up bar at 5%
                   over the group hypotheses (ranked among the table's), / k
                   (a skewed column: Mann-Whitney alone, \\|rank-biserial r\\| >= 0.28);
                   a date column with 2-7 values is a grouping too
share (by group)   a pair of categories (the share answering yes by region): chi-square of
                   independence, told by the cell of the largest adjusted residual, its
                   share >= 5 points and Cohen's h >= 0.2 above the other rows'; p below
                   the step-up bar at 2.5% over the database's by-group share hypotheses
                   (ranked among the table's) in a small table or a table of units, else
                   p < 1e-6
relationship       the same test across a link (child values grouped by a parent column, or
                   the number of child rows per parent), p < 1e-6; or, where the parent
                   table is a table of units, the parents' own means of their child rows:
                   Welch p < 1% / (relationship hypotheses x levels), \|d\| >= 0.3
correlation        Pearson, or Spearman where a column is skewed (\\|skewness\\| >= 1) or a scale
                   of 3-10 consecutive integers (a rating); n >= 30 (10 in a small table) and \\|r\\| >= 0.05 with
                   p < 1e-6, or \\|r\\| >= 0.2 with p < alpha (0.1%), or in a small table
                   (< 200 rows, not a time series) \\|r\\| >= 0.3 with p below the
                   step-up bar at 5% (ranked among the table's correlations); not
                   when, with each month's mean taken out, \\|r\\| falls below 0.25 and half
                   of itself (both follow time)
trend              monthly means fit a line (p < alpha, R^2 >= 0.3) at least as well as the best
                   step, or move its way on both sides of that step; also each level's own
                   series in a panel (a column whose levels each hold a series over time)
change             a fall and a recovery: a stretch of periods added to a line leaves <= 0.5
                   of a line's and a curve's squared error and <= 0.8 of a line with one
                   step's, F-test p < alpha / s (s: the stretches searched); else a step:
                   the best step leaves <= 0.8 of a line's squared error and less than a
                   curve's (a quadratic: as many free values),
                   Welch p < alpha / s before/after (s: the split points the step was chosen
                   from); else a turn: a line broken at two periods leaves <= 0.5 of a line's
                   and a curve's squared error, F-test p < alpha / s (s: the pairs of breaks
                   searched), told by its steepest piece that runs against a neighbour; each
                   a shift of >= 0.25 standard deviations (a smooth U is no change)
outlier            rows (at most 5) with \\|robust z\\| >= 5.5 (on the log scale for skewed
                   positive columns); for an entity, its mean \\|robust z\\| >= 3 among entities
=================  ==========================================================================

For trends and changes, ``alpha`` is 0.05 over the number of hypotheses of that kind the
database offers (Bonferroni: at most a 5% chance of one false finding of the kind in a
database of noise), so a database with a few short series is held to the bar its hypotheses
need rather than a fixed one (which missed clear trends over a dozen quarters); for a group
difference within blocks it is 0.01 over the group hypotheses and the levels compared, and for
a correlation of \\|r\\| >= 0.2 it is 0.001 over the correlation hypotheses. Without counted
hypotheses (a test run on its own) the fixed bars hold: 1e-4 for trends, 1e-8 for changes in
monthly means of events and 1e-6 for a series. Correlations, plain group differences and
relationships otherwise keep their fixed bars: a looser Bonferroni bar for them (5%; 1% with
\\|r\\| >= 0.2 for correlations; 1% for plain group differences) added false findings on null
databases (the rows of one parent are not independent either, and a looser bar reported noise
across links). A small table (fewer than 200 rows, not a time series) is the exception: its
rows are its units (fifty states, sixty strikes), a moderate effect there cannot reach a fixed
bar, and the database's 5% holds, with a floor on the effect (\\|r\\| >= 0.3, \\|d\\| >= 0.5);
as the Benjamini-Hochberg step-up bar over the kind's hypotheses, ranked among the table's
(``checks.base.SMALL_STEP_UP``; before it, Holm's step-down bar for correlations and
Bonferroni's for group differences): on noise as strict as Bonferroni, looser for each
discovery where a table's columns are related throughout. Null false discoveries were
unchanged by it ((a) 0.05, (b) 0.10 a database, units 0.05 a table, wide tables 0).

A larger table of independent units (a cross section of people, firms or countries: no time
column, no parent it refers to, fewer than 5,000 rows; ``CheckContext.units``) is held to the
database's bar too, 2.5% a kind, with floors for small effects (\\|r\\| >= 0.1, \\|d\\| >=
0.2): its p-values mean what they say, and a documented difference among 500 people (d = 0.4,
p ~ 1e-5) is short of 1e-6. That bar is the Benjamini-Hochberg step-up bar over the kind's
hypotheses, ranked among the table's: in a table of noise it tells something as rarely as
Bonferroni's bar at 2.5% does, while in a survey whose columns are related throughout each
discovery loosens the bar of the next (Holm's step-down bar, used before, hardly moves from
Bonferroni's when ten of 500 questions are discoveries). On tables of generated units
(``benchmarks/research_units.py``, seeds 0-19) recall rose from 0.786 to 0.950, with 0.05
false findings a table of noise; see ``benchmarks/research_wide.py`` for wide econometric
tables (:mod:`~lemmata.agents.research.synthetic3`).

A hypothesis is counted once in its kind's family however its columns are written: a column
that is a monotone transform of another (a wage's logarithm, experience squared) asks the
questions the first asks (``CheckContext.twin``), and the two are not correlated with each
other (their agreement is no finding). A column of two levels makes one level-against-the-rest
comparison, not two.

Where a database offers more hypotheses than a run's budget tests (a wide table of forty
measures has 780 pairs), a quick screen puts last the correlations and group differences
whose \\|t\\| is under 2 and orders the rest by it; a measure of 6-12 integers that fill their
levels (regions numbered 0-5) is also compared as groups.

A hypothesis that names a table, column or link the survey does not hold (a model's proposal
can) is answered with an observation; so is what the data makes impossible to test (too few
rows, a degenerate column). An error in a check's own code is raised, not recorded.
"""

from __future__ import annotations

from typing import Any

from lemmata.agents.research.checks import CHECKS, ENTITY_CHECK, CheckContext, DataProblem, Outcome
from lemmata.agents.research.checks.base import link_note
from lemmata.agents.research.checks.entity import KINDS as ENTITY_KINDS
from lemmata.agents.research.checks.entity import entity_hypotheses, parse_entity
from lemmata.agents.research.checks.share import BY_GROUP
from lemmata.agents.research.checks.stats import group_screen, pair_screen
from lemmata.agents.research.checks.temporal import panel_columns
from lemmata.agents.research.profile import MAX_CATEGORIES, Link, Survey
from lemmata.agents.research.types import Hypothesis
from lemmata.environments.database import Database

__all__ = ["Explorer", "Outcome", "parse_entity"]

#: The most distinct values of a date column compared as groups (fewer than a trend needs).
FEW_PERIODS = 7
#: The note of a hypothesis about one level of a panel (each level's rows a series).
PANEL = "one level of a panel"
#: How many integer values a measure has that is also compared as groups (fewer are
#: categories already; see :mod:`~lemmata.agents.research.profile`).
CODES = (6, 12)
#: The share of the rows each of those values must hold.
CODE_SHARE = 0.03
#: From this many hypotheses (about what a run of 40 turns tests), a quick screen orders them.
SCREEN_FROM = 320
#: The quick \\|t\\| under which a correlation or group difference is tested last.
SCREEN_T = 2.0
#: How far such a hypothesis's priority falls (below every other kind's prior).
SCREEN_DROP = 0.3
#: The most a strong screen lifts one (ordering the pairs that pass it, \\|t\\| up to 10).
SCREEN_ORDER = 0.02

#: The prior of a share by group (a pair of categories): after the measures' questions, so
#: that a table of many dummies does not spend a run's budget on their pairs first.
BY_GROUP_PRIOR = 0.4

_PRIOR = {
    "group_difference": 0.6,
    "relationship": 0.6,
    "trend": 0.6,
    "change": 0.55,
    "correlation": 0.5,
    "share": 0.5,
    "distribution": 0.45,
    "outlier": 0.5,
    "other": 0.3,
}

# The roles each column of a hypothesis must have for its check ("" for any column, None for
# a column that may also be left empty: a trend of the number of rows).
_SHAPES: dict[str, list[tuple[str | None, ...]]] = {
    "distribution": [("numeric",)],
    "share": [("",), ("categorical", "categorical")],
    "group_difference": [("numeric", "")],
    "correlation": [("", "")],
    "trend": [(None, "date")],
    "change": [("numeric", "date")],
    "outlier": [("numeric",), ("numeric", "")],
}
_ENTITY_SHAPES: dict[str, list[tuple[str | None, ...]]] = {
    "other": [("",)],
    "outlier": [("",)],
    "trend": [("numeric", "date")],
    "share": [("",)],
}


class Explorer:
    """Hypotheses and their tests over one database (optionally about one entity)."""

    def __init__(self, db: Database, survey: Survey, *, entity: str | None = None) -> None:
        self.db = db
        self.survey = survey
        self.entity = parse_entity(entity) if entity else None
        self.context = CheckContext(db, survey, self.entity)

    # -- hypotheses ----------------------------------------------------------------------------

    def initial(self) -> list[Hypothesis]:
        """Every hypothesis the survey suggests, ranked by prior."""
        out: list[Hypothesis] = []
        if self.entity is not None:
            out += entity_hypotheses(self.survey, *self.entity)
        for t in self.survey.tables.values():
            if t.rows < 10:
                continue
            nums = [c.name for c in t.role("numeric")]
            cats = [c.name for c in t.role("categorical")]
            dates = [c.name for c in t.role("date")]

            def add(kind: str, cols: list[str], _t: str = t.name) -> None:
                out.append(Hypothesis(kind=kind, table=_t, columns=cols))  # type: ignore[arg-type]

            # A date with a handful of values (two seasons of a field trial) is too short for
            # a trend; its values are groups to compare.
            few = [d for d in dates if 2 <= t.columns[d].distinct <= FEW_PERIODS]
            # A measure of a few integers that fill their levels may be codes (six regions
            # numbered 0-5): its levels are groups too.
            raw = self.context.table(t.name).raw if nums else {}
            codes = [n for n in nums if _code_like(raw[n])]
            for n in nums:
                add("distribution", [n])
                add("outlier", [n])
                for c in cats + few + [k for k in codes if k != n]:
                    add("group_difference", [n, c])
                for d in dates:
                    add("trend", [n, d])
                    add("change", [n, d])
            for c in cats:
                add("share", [c])
            # A share that differs by group (the share answering yes in each region): each
            # pair of categories once.
            for i, a in enumerate(cats):
                for b in cats[i + 1 :]:
                    add("share", [a, b])
            for i, a in enumerate(nums):
                for b in nums[i + 1 :]:
                    # A column and its own logarithm or square are one variable written
                    # twice: their agreement is no finding.
                    if self.context.twin(t.name, a) != self.context.twin(t.name, b):
                        add("correlation", [a, b])
            if cats and nums:
                for scale in self.context.table(t.name).ordinal:
                    for n in nums:
                        add("correlation", [n, scale])
            for d in dates:
                if not (t.series and d == t.time):  # a series has one row per period
                    add("trend", ["", d])
            # A panel in long form (five stocks' monthly prices): each level's own series.
            if t.time and nums:
                for c in panel_columns(self.context, t.name, t.time):
                    for level, _ in t.columns[c].top:
                        for n in nums:
                            for kind in ("trend", "change"):
                                out.append(
                                    Hypothesis(
                                        kind=kind,
                                        table=t.name,
                                        columns=[n, t.time],
                                        entities=[f"{c}={level}"],
                                        note=PANEL,
                                    )
                                )
        for link in self.survey.links:
            out += self._link_hypotheses(link)
        family = self.context.family
        counted: set[tuple[Any, ...]] = set()
        for h in out:
            focused = bool(h.entities) and h.note != PANEL
            by_group = h.kind == "share" and len(h.columns) == 2
            h.priority = (BY_GROUP_PRIOR if by_group else _PRIOR[h.kind]) + (
                0.4 if focused else 0.0
            )
            question = self._question(h)
            if not focused and question not in counted:
                counted.add(question)
                # A share by group is counted in its own family: one column's shares keep
                # their bar.
                kind = BY_GROUP if by_group else h.kind
                family[kind] = family.get(kind, 0) + 1
                self.context.members.setdefault(kind, []).append(h)
        if len(out) > SCREEN_FROM:
            self._screen(out)
        return out

    def _question(self, h: Hypothesis) -> tuple[Any, ...]:
        """What ``h`` asks, with each column named by its first twin (a wage for its
        logarithm): hypotheses that ask one question count once in their kind's family (a
        wage's correlations and its logarithm's have the same ranks, and for a Bonferroni or
        step-up bar they are one test, not two)."""
        columns = [self.context.twin(h.table, c) if c else c for c in h.columns]
        if h.kind == "correlation":
            columns.sort()
        return (h.kind, h.table, tuple(columns), tuple(h.entities), h.note)

    def _screen(self, hypotheses: list[Hypothesis]) -> None:
        """Put last the correlations and group differences that a quick statistic shows
        cannot clear any bar (\\|t\\| < ``SCREEN_T``: p > 5% before any correction), so
        that a run whose budget does not reach every hypothesis of a wide table (forty
        measures: 780 pairs) tests the pairs that can hold a finding first, the strongest
        first."""
        for h in hypotheses:
            if h.entities or h.kind not in ("correlation", "group_difference"):
                continue
            t = self.context.table(h.table)
            a, b = h.columns
            if h.kind == "correlation" and a in t.num and b in t.num:
                strength = pair_screen(t.num[a], t.num[b])
            elif h.kind == "group_difference" and a in t.num and b in t.raw:
                strength = group_screen(t.num[a], t.raw[b])
            else:
                continue
            if strength < SCREEN_T:
                h.priority -= SCREEN_DROP
            else:  # the stronger first, without passing another kind's prior
                h.priority += SCREEN_ORDER * min(1.0, strength / 10)

    def _link_hypotheses(self, link: Link) -> list[Hypothesis]:
        parent = self.survey.tables[link.parent]
        child = self.survey.tables[link.child]
        note = link_note(link)

        def rel(columns: list[str]) -> Hypothesis:
            return Hypothesis(kind="relationship", table=link.child, columns=columns, note=note)

        out = []
        for pc in parent.role("categorical"):
            out.append(rel(["", pc.name]))
            out += [rel([cn.name, pc.name]) for cn in child.role("numeric")]
        # A few parents, each named (eleven firms): does one's child rows differ from the
        # rest? (With many parents, the per-entity outlier test below asks this.)
        labels = [
            c.name
            for c in parent.role("text")
            if parent.rows <= MAX_CATEGORIES and c.distinct == parent.rows - c.nulls
        ]
        for label in labels:
            out += [rel([cn.name, label]) for cn in child.role("numeric")]
        for cn in child.role("numeric"):
            out.append(
                Hypothesis(
                    kind="outlier", table=link.child, columns=[cn.name, link.column], note=note
                )
            )
        return out

    # -- tests -----------------------------------------------------------------------------------

    def test(self, h: Hypothesis) -> Outcome:
        """Test ``h``. What the data holds, or a hypothesis about what the database does not
        have, is an observation; an error in a check's code is raised."""
        about_entity = (
            bool(h.entities)
            and self.entity is not None
            and h.kind in ENTITY_KINDS
            and h.note != PANEL
        )
        check = ENTITY_CHECK if about_entity else CHECKS.get(h.kind)
        if check is None:
            return Outcome(observation=f"no statistical test for {h.kind}")
        problem = self._unfit(h, _ENTITY_SHAPES if about_entity else _SHAPES)
        if problem:
            return Outcome(observation=f"{h.kind} on {h.table}.{h.columns}: {problem}")
        try:
            return check(self.context, h)
        except (DataProblem, ArithmeticError) as exc:
            return Outcome(observation=f"{h.kind} on {h.table}.{h.columns}: {exc}")
        except ValueError as exc:
            # numpy and scipy raise ValueError for degenerate data (all x equal, too few
            # points): that is what the data holds. Raised anywhere else, it is a defect.
            if not _raised_by_numerics(exc):
                raise
            return Outcome(observation=f"{h.kind} on {h.table}.{h.columns}: {exc}")

    def _unfit(self, h: Hypothesis, shapes: dict[str, list[tuple[str | None, ...]]]) -> str:
        """Why ``h`` cannot be tested here ("" when it can)."""
        table = self.survey.tables.get(h.table)
        if table is None:
            return f"no table {h.table!r}"
        if h.kind == "relationship":
            ok = len(h.columns) == 2 and self.context.link(h.note) is not None
            return (
                ""
                if ok
                else f"a relationship needs [column, parent column] and a link, not {h.note!r}"
            )
        allowed = shapes.get(h.kind, [])
        shape = next((s for s in allowed if len(s) == len(h.columns)), None)
        if shape is None:
            return f"a {h.kind} test takes {' or '.join(str(len(s)) for s in allowed)} columns"
        for column, role in zip(h.columns, shape, strict=True):
            if role is None and column == "":
                continue
            profile = table.columns.get(column)
            if profile is None:
                return f"no column {column!r} in {h.table}"
            if role and profile.role != role:
                return f"{h.table}.{column} is {profile.role}, not {role}"
        return ""


def _code_like(values: list[Any]) -> bool:
    """Whether a numeric column may hold codes: integers of ``CODES[0]`` to ``CODES[1]``
    values, each held by at least ``CODE_SHARE`` of the rows (a count has a tail of rare
    values; codes fill their levels)."""
    counts: dict[int, int] = {}
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int | float) or not float(v).is_integer():
            return False
        counts[int(v)] = counts.get(int(v), 0) + 1
    present = sum(counts.values())
    return (
        CODES[0] <= len(counts) <= CODES[1]
        and present > 0
        and min(counts.values()) >= CODE_SHARE * present
    )


def _raised_by_numerics(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside numpy or scipy."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    where = frames[-1].filename.replace("\\", "/")
    return any(f"/{lib}/" in where for lib in ("numpy", "scipy"))
