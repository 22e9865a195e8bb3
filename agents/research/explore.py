"""The statistical explorer: proposes hypotheses from a survey and tests them.

Offline, this is the whole research method; with a model it tests what the model proposes too.
Each hypothesis is tested on the table's rows with a stated criterion (below), strict enough
that a database of pure noise yields almost nothing, and a confirmed one becomes an
:class:`~lemmata.agents.research.types.Insight` whose value is computed by its evidence SQL over
all rows.

=================  ==========================================================================
kind               confirmed when
=================  ==========================================================================
distribution       \\|skewness\\| >= 1 without the outlying rows (\\|robust z\\| >= 7), n >= 50
share              one level holds >= max(0.3, 1.3/k) of the rows, chi-square p < 1e-6
group_difference   one level's mean differs from the rest: Welch p < 1e-6, \\|Cohen's d\\| >= 0.3
relationship       the same test across a link (child values grouped by a parent column, or
                   the number of child rows per parent)
correlation        \\|Pearson r\\| >= 0.25, p < 1e-6, n >= 30; not when, with each month's
                   mean taken out, \\|r\\| falls below 0.25 and half of itself (both follow time)
trend              monthly means fit a line (p < alpha, R^2 >= 0.3) at least as well as the best
                   step
change             the best step leaves <= 0.8 of a line's squared error, Welch p < alpha / s
                   before/after (s: the split points the step was chosen from), a shift of
                   >= 0.25 standard deviations
outlier            rows (at most 5) with \\|robust z\\| >= 5.5 (on the log scale for skewed
                   positive columns); for an entity, its mean \\|robust z\\| >= 3 among entities
=================  ==========================================================================

For trends and changes, ``alpha`` is 0.05 over the number of hypotheses of that kind the
database offers (Bonferroni: at most a 5% chance of one false finding of the kind in a
database of noise), so a database with a few short series is held to the bar its hypotheses
need rather than a fixed one (which missed clear trends over a dozen quarters). Without counted
hypotheses (a test run on its own) the fixed bars hold: 1e-4 for trends, 1e-8 for changes in
monthly means of events and 1e-6 for a series. Correlations, group differences and
relationships keep their fixed bars: the same bar for correlations added a false finding on
null databases (the rows of one parent are not independent either, and a looser bar reported
noise across links).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from lemmata.agents.research import evidence as ev
from lemmata.agents.research import timeseries as ts
from lemmata.agents.research.profile import (
    MAX_CATEGORIES,
    ColumnProfile,
    Link,
    Survey,
    sample_rows,
)
from lemmata.agents.research.types import Hypothesis, Insight
from lemmata.environments.database import Database, quote_ident

__all__ = ["Explorer", "Outcome", "parse_entity"]

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
_MIN_GROUP = 15
# The family-wise error rate of :meth:`Explorer._alpha`'s Bonferroni bars.
_FAMILY_RATE = 0.05


@dataclass
class Outcome:
    """What testing one hypothesis gave: insights, follow-up hypotheses, and a note."""

    insights: list[Insight] = field(default_factory=list)
    follow_ups: list[Hypothesis] = field(default_factory=list)
    observation: str = ""


def parse_entity(text: str) -> tuple[str, str]:
    """``"patient_id=42"`` -> ``("patient_id", "42")``; raises ValueError naming the problem."""
    column, sep, value = text.partition("=")
    if not sep or not column.strip() or not value.strip():
        raise ValueError(f"--entity {text!r} must be column=value, e.g. patient_id=42")
    return column.strip(), value.strip().strip("'\"")


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return str(x)
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _score(p: float) -> float:
    return round(min(50.0, -math.log10(max(p, 1e-300))), 2)


class _Table:
    """A table's sampled rows as arrays, loaded once per explorer."""

    def __init__(self, db: Database, survey: Survey, name: str) -> None:
        import numpy as np

        profile = survey.tables[name]
        self.name = name
        self.profile = profile
        cols = list(profile.columns)
        rows = sample_rows(db, name, cols) if cols else []
        self.n = len(rows)
        self.raw = {c: [r[i] for r in rows] for i, c in enumerate(cols)}
        self.num: dict[str, Any] = {}
        self.days: dict[str, Any] = {}
        for c, p in profile.columns.items():
            if p.role == "numeric":
                self.num[c] = np.array([_to_float(v) for v in self.raw[c]], dtype=float)
            elif p.role == "date":
                self.days[c] = np.array([p.day(v) for v in self.raw[c]], dtype=float)


def _to_float(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _within_month_r(x: Any, y: Any, days: Any) -> float | None:
    """Pearson r of ``x`` and ``y`` after each month's mean is taken out of both (both may
    simply follow time: a trend and a step change correlate with each other); None when
    there are too few months or pairs to tell."""
    import numpy as np

    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(days)
    if ok.sum() < 30:
        return None
    months = np.array([_month_of(d) for d in days[ok]])
    if len(np.unique(months)) < 6:
        return None
    xs, ys = x[ok].astype(float), y[ok].astype(float)
    _, inverse = np.unique(months, return_inverse=True)
    for v in (xs, ys):
        sums = np.bincount(inverse, weights=v)
        counts = np.bincount(inverse)
        v -= (sums / counts)[inverse]
    if xs.std() == 0 or ys.std() == 0:
        return None
    return float(np.corrcoef(xs, ys)[0, 1])


def _month_of(day: float) -> int:
    from datetime import date

    d = date.fromordinal(int(day))
    return d.year * 12 + d.month


class Explorer:
    """Hypotheses and their tests over one database (optionally about one entity)."""

    def __init__(self, db: Database, survey: Survey, *, entity: str | None = None) -> None:
        self.db = db
        self.survey = survey
        self.entity = parse_entity(entity) if entity else None
        self._tables: dict[str, _Table] = {}
        # How many hypotheses of each kind the database offers (set by :meth:`initial`).
        self._family: dict[str, int] = {}
        self._periods: dict[tuple[str, str], str] = {}  # (table, date column) -> its period

    # -- data --------------------------------------------------------------------------------

    def table(self, name: str) -> _Table:
        if name not in self._tables:
            self._tables[name] = _Table(self.db, self.survey, name)
        return self._tables[name]

    def _col(self, table: str, column: str) -> ColumnProfile:
        return self.survey.tables[table].columns[column]

    def _expr(self, table: str, column: str, alias: str | None = None) -> str:
        p = self._col(table, column)
        col = f"{alias}.{quote_ident(column)}" if alias else quote_ident(column)
        return f"CAST({col} AS REAL)" if p.mixed else col

    def _value(self, sql: str) -> float | None:
        v = self.db.scalar(sql)
        try:
            f = float(v)
        except (TypeError, ValueError):
            return None
        return f if math.isfinite(f) else None

    def _link(self, note: str) -> Link | None:
        for link in self.survey.links:
            if note == f"{link.child}.{link.column}->{link.parent}.{link.parent_column}":
                return link
        return None

    # -- hypotheses ----------------------------------------------------------------------------

    def initial(self) -> list[Hypothesis]:
        """Every hypothesis the survey suggests, ranked by prior."""
        out: list[Hypothesis] = []
        if self.entity is not None:
            out += self._entity_hypotheses(*self.entity)
        for t in self.survey.tables.values():
            if t.rows < 10:
                continue
            nums = [c.name for c in t.role("numeric")]
            cats = [c.name for c in t.role("categorical")]
            dates = [c.name for c in t.role("date")]

            def add(kind: str, cols: list[str], note: str = "", _t: str = t.name) -> None:
                out.append(Hypothesis(kind=kind, table=_t, columns=cols, note=note))  # type: ignore[arg-type]

            for n in nums:
                add("distribution", [n])
                add("outlier", [n])
                for c in cats:
                    add("group_difference", [n, c])
                for d in dates:
                    add("trend", [n, d])
                    add("change", [n, d])
            for c in cats:
                add("share", [c])
            for i, a in enumerate(nums):
                for b in nums[i + 1 :]:
                    add("correlation", [a, b])
            for d in dates:
                if not (t.series and d == t.time):  # a series has one row per period
                    add("trend", ["", d])
        for link in self.survey.links:
            parent = self.survey.tables[link.parent]
            child = self.survey.tables[link.child]
            note = f"{link.child}.{link.column}->{link.parent}.{link.parent_column}"
            for pc in parent.role("categorical"):
                out.append(
                    Hypothesis(
                        kind="relationship", table=link.child, columns=["", pc.name], note=note
                    )
                )
                for cn in child.role("numeric"):
                    out.append(
                        Hypothesis(
                            kind="relationship",
                            table=link.child,
                            columns=[cn.name, pc.name],
                            note=note,
                        )
                    )
            # A few parents, each named (eleven firms): does one's child rows differ from the
            # rest? (With many parents, the per-entity outlier test below asks this.)
            labels = [
                c.name
                for c in parent.role("text")
                if parent.rows <= MAX_CATEGORIES and c.distinct == parent.rows - c.nulls
            ]
            for label in labels:
                for cn in child.role("numeric"):
                    out.append(
                        Hypothesis(
                            kind="relationship",
                            table=link.child,
                            columns=[cn.name, label],
                            note=note,
                        )
                    )
            for cn in child.role("numeric"):
                out.append(
                    Hypothesis(
                        kind="outlier", table=link.child, columns=[cn.name, link.column], note=note
                    )
                )
        for h in out:
            h.priority = _PRIOR[h.kind] + (0.4 if h.entities else 0.0)
            if not h.entities:
                self._family[h.kind] = self._family.get(h.kind, 0) + 1
        return out

    def _alpha(self, kind: str, fixed: float) -> float:
        """The p-value bar for a kind: Bonferroni at a family-wise rate of ``_FAMILY_RATE``
        over the database's hypotheses of that kind (a database with few of them needs less
        than a fixed bar, which misses clear effects in short series); ``fixed`` when the
        hypotheses were not counted."""
        m = self._family.get(kind, 0)
        return _FAMILY_RATE / m if m else fixed

    def _entity_hypotheses(self, column: str, value: str) -> list[Hypothesis]:
        out = []
        entity = f"{column}={value}"
        for t in self.survey.tables.values():
            if column not in t.columns:
                continue
            if t.key == column:
                out.append(
                    Hypothesis(kind="other", table=t.name, columns=[column], entities=[entity])
                )
                continue
            out.append(
                Hypothesis(kind="outlier", table=t.name, columns=[column], entities=[entity])
            )
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
                out.append(
                    Hypothesis(kind="share", table=t.name, columns=[c.name], entities=[entity])
                )
        return out

    # -- tests -----------------------------------------------------------------------------------

    def test(self, h: Hypothesis) -> Outcome:
        """Test ``h``; never raises for what the data holds (that is an observation)."""
        try:
            if (
                h.entities
                and self.entity is not None
                and h.kind in {"outlier", "trend", "share", "other"}
            ):
                return self._test_entity(h)
            method = getattr(self, f"_test_{h.kind}", None)
            if method is None:
                return Outcome(observation=f"no statistical test for {h.kind}")
            result: Outcome = method(h)
            return result
        except (ValueError, ZeroDivisionError, FloatingPointError, KeyError) as exc:
            return Outcome(observation=f"{h.kind} on {h.table}.{h.columns}: {exc}")

    def _insight(self, **kw: Any) -> Insight | None:
        value = kw.get("value")
        if value is None and kw.get("kind") != "other":
            return None
        return Insight(**kw)

    def _test_distribution(self, h: Hypothesis) -> Outcome:
        import numpy as np
        from scipy import stats

        (col,) = h.columns
        x = self.table(h.table).num[col]
        x = x[np.isfinite(x)]
        if len(x) < 50:
            return Outcome(observation=f"{h.table}.{col}: too few values")
        kept = x[np.abs(_robust_z(x)) < 7]
        g = float(stats.skew(kept))
        if not abs(g) >= 1.0:
            return Outcome(observation=f"{h.table}.{col}: skewness {g:.2f}")
        sql = ev.skew_sql(h.table, self._expr(h.table, col), [self._col(h.table, col).present()])
        value = self._value(sql)
        median, mean = float(np.median(x)), float(np.mean(x))
        side = "right" if g > 0 else "left"
        ins = self._insight(
            statement=(
                f"{h.table}.{col} is {side}-skewed (skewness {_fmt(value or g)}): its mean "
                f"{_fmt(mean)} is {'above' if mean > median else 'below'} its median {_fmt(median)}"
            ),
            kind="distribution",
            table=h.table,
            columns=[col],
            direction=None,
            value=value,
            evidence_sql=sql,
            score=min(50.0, abs(g) * 5),
            support={"test": "skewness without outliers", "skewness": g, "n": len(x)},
        )
        return Outcome(insights=[ins] if ins else [])

    def _test_share(self, h: Hypothesis) -> Outcome:
        from scipy import stats

        (col,) = h.columns
        values = [v for v in self.table(h.table).raw[col] if v is not None and v != ""]
        counts: dict[Any, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        k = len(counts)
        if k < 2 or len(values) < 30:
            return Outcome(observation=f"{h.table}.{col}: fewer than two levels")
        top, n_top = max(counts.items(), key=lambda kv: kv[1])
        share = n_top / len(values)
        p = float(stats.chisquare(list(counts.values())).pvalue)
        if share < max(0.3, 1.3 / k) or not p < 1e-6:
            return Outcome(observation=f"{h.table}.{col}: top level {top!r} holds {share:.0%}")
        sql = ev.share_sql(h.table, col, top)
        value = self._value(sql)
        ins = self._insight(
            statement=(
                f"{_fmt(100 * (value or share))}% of {h.table} rows have {col} = {top} "
                f"(an even split over its {k} levels would give {_fmt(100 / k)}%)"
            ),
            kind="share",
            table=h.table,
            columns=[col],
            entities=[f"{col}={top}"],
            value=value,
            evidence_sql=sql,
            score=_score(p),
            support={"test": "chi-square vs uniform", "p": p, "levels": k},
        )
        return Outcome(insights=[ins] if ins else [])

    def _best_level(
        self, x: Any, groups: list[Any], alpha: float = 1e-6
    ) -> tuple[Any, float, float, float, float] | None:
        """The level whose mean differs most from the rest: (level, mean, rest mean, d, p).

        Of the levels whose difference is significant (Welch p < ``alpha``), the one with the
        largest effect (the heaviest species, the biggest firm), not the one measured most
        precisely; else the one with the largest t."""
        import numpy as np
        from scipy import stats

        g = np.array([None if v == "" else v for v in groups], dtype=object)
        ok = np.isfinite(x) & np.array([v is not None for v in g])
        x, g = x[ok], g[ok]
        found = []
        # Sorted, so that the choice does not follow the hash order of the levels.
        for level in sorted(set(g.tolist()), key=str):
            inside = g == level
            a, b = x[inside], x[~inside]
            if len(a) < _MIN_GROUP or len(b) < _MIN_GROUP:
                continue
            t, p = stats.ttest_ind(a, b, equal_var=False)
            pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2) or 1e-12
            d = (a.mean() - b.mean()) / pooled
            found.append((level, float(a.mean()), float(b.mean()), float(d), float(p), float(t)))
        if not found:
            return None
        significant = [f for f in found if f[4] < alpha]
        size = 3 if significant else 5  # |d|, else |t|
        pool = significant or found
        top = max(abs(f[size]) for f in pool)
        # Of two levels that differ equally (the two of a binary column: one higher is the
        # other lower), the higher one is told.
        level, ma, mb, d, p, _ = max(
            (f for f in pool if math.isclose(abs(f[size]), top, rel_tol=1e-9)),
            key=lambda f: f[3],
        )
        return level, ma, mb, d, p

    def _test_group_difference(self, h: Hypothesis) -> Outcome:
        num, cat = h.columns
        t = self.table(h.table)
        found = self._best_level(t.num[num], t.raw[cat])
        if found is None:
            return Outcome(observation=f"{h.table}: groups of {cat} too small")
        level, ma, mb, d, p = found
        if not (p < 1e-6 and abs(d) >= 0.3):
            return Outcome(observation=f"{h.table}.{num} by {cat}: no clear difference (p={p:.2g})")
        direction = "higher" if d > 0 else "lower"
        sql = ev.mean_sql(h.table, self._expr(h.table, num), [ev.equals(cat, level)])
        value = self._value(sql)
        ins = self._insight(
            statement=(
                f"{h.table}.{num} is {direction} where {cat} = {level}: mean {_fmt(value or ma)} "
                f"against {_fmt(mb)} for the other rows ({_fmt(abs(ma / mb - 1) * 100) if mb else '?'}% "
                f"{'more' if d > 0 else 'less'})"
            ),
            kind="group_difference",
            table=h.table,
            columns=[num, cat],
            entities=[f"{cat}={level}"],
            direction=direction,
            value=value,
            evidence_sql=sql,
            score=_score(p),
            support={"test": "Welch t-test, level vs rest", "p": p, "cohen_d": d, "rest_mean": mb},
        )
        return Outcome(insights=[ins] if ins else [])

    def _test_relationship(self, h: Hypothesis) -> Outcome:
        import numpy as np

        link = self._link(h.note)
        if link is None:
            return Outcome(observation=f"no link {h.note}")
        num, pcat = h.columns
        child, parent = self.table(link.child), self.table(link.parent)
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
        found = self._best_level(x, groups)
        if found is None:
            return Outcome(observation=f"{h.note}: groups of {pcat} too small")
        level, ma, mb, d, p = found
        if not (p < 1e-6 and abs(d) >= 0.3):
            return Outcome(observation=f"{h.note} by {pcat}: no clear difference (p={p:.2g})")
        direction = "higher" if d > 0 else "lower"
        where = [ev.equals(pcat, level, "p")]
        if num:
            sql = ev.join_mean_sql(
                link.child,
                self._expr(link.child, num, "c"),
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
        value = self._value(sql)
        ins = self._insight(
            statement=(
                f"{what} is {direction} for {link.parent} with {pcat} = {level}: mean "
                f"{_fmt(value or ma)} against {_fmt(mb)} for the others"
            ),
            kind="relationship",
            table=link.child,
            columns=columns,
            entities=[f"{pcat}={level}"],
            direction=direction,
            value=value,
            evidence_sql=sql,
            score=_score(p),
            support={
                "test": "Welch t-test across the link",
                "link": h.note,
                "p": p,
                "cohen_d": d,
                "rest_mean": mb,
            },
        )
        return Outcome(insights=[ins] if ins else [])

    def _test_correlation(self, h: Hypothesis) -> Outcome:
        import numpy as np
        from scipy import stats

        a, b = h.columns
        t = self.table(h.table)
        x, y = t.num[a], t.num[b]
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.sum() < 30:
            return Outcome(observation=f"{h.table}: too few pairs of {a}, {b}")
        r, p = stats.pearsonr(x[ok], y[ok])
        r, p = float(r), float(p)
        if not (abs(r) >= 0.25 and p < 1e-6):
            return Outcome(observation=f"{h.table}.{a} ~ {b}: r = {r:.2f}")
        for date_col, days in t.days.items():
            # A daily or weekly series has many rows a month: its months take time out. A
            # monthly or coarser one has one row a period: its changes from one to the next.
            series = (
                t.profile.series
                and date_col == t.profile.time
                and t.profile.period not in ("day", "week")
            )
            if series:
                keep = ok & np.isfinite(days)
                within = ts.differenced_r(days[keep], x[keep], y[keep])
            else:
                within = _within_month_r(x, y, days)
            if within is not None and abs(within) < 0.5 * abs(r) and abs(within) < 0.25:
                return Outcome(
                    observation=(
                        f"{h.table}.{a} ~ {b}: r = {r:.2f}, but {within:.2f} "
                        f"{'in changes from period to period' if series else 'within months'} "
                        f"of {date_col}: both follow time, not each other"
                    )
                )
        sql = ev.pearson_sql(
            h.table,
            self._expr(h.table, a),
            self._expr(h.table, b),
            [self._col(h.table, a).present(), self._col(h.table, b).present()],
        )
        value = self._value(sql)
        direction = "positive" if r > 0 else "negative"
        strength = "strongly" if abs(r) >= 0.7 else "moderately" if abs(r) >= 0.4 else "weakly"
        ins = self._insight(
            statement=(
                f"{h.table}.{a} and {h.table}.{b} are {strength} {direction}ly correlated "
                f"(Pearson r = {_fmt(value if value is not None else r)}, n = {int(ok.sum())})"
            ),
            kind="correlation",
            table=h.table,
            columns=[a, b],
            direction=direction,
            value=value,
            evidence_sql=sql,
            score=_score(p),
            support={"test": "Pearson", "p": p, "n": int(ok.sum())},
        )
        return Outcome(insights=[ins] if ins else [])

    def _period(self, table: str, date_col: str) -> str:
        """The period values are grouped by: a series' own step (months for a long daily
        series), else months (worked out once per column)."""
        key = (table, date_col)
        if key not in self._periods:
            self._periods[key] = self._find_period(table, date_col)
        return self._periods[key]

    def _find_period(self, table: str, date_col: str) -> str:
        import numpy as np

        p = self.survey.tables[table]
        if p.series and date_col == p.time and p.period in ts.PERIODS:
            if p.period in ("day", "week") and p.rows > 400:
                return "month"
            return p.period
        # Events dated only to the year (or quarter) are grouped by it, not by month.
        days = self.table(table).days.get(date_col)
        starts: Any = np.unique(days[np.isfinite(days)]) if days is not None else []
        for coarse in ("year", "quarter"):
            if len(starts) and all(
                ts.period_start(ts.period_key(d, coarse), coarse).toordinal() == int(d)
                for d in starts
            ):
                return coarse
        return "month"

    def _monthly(
        self, table: str, num: str, date_col: str
    ) -> tuple[Any, Any, Any, Any, str] | None:
        """Each period's mean of ``num`` (row count when empty): (periods, means, each row's
        period, each row's value, the period's name)."""
        import numpy as np

        t = self.table(table)
        period = self._period(table, date_col)
        series = period != "month" or self.survey.tables[table].series
        days = t.days[date_col]
        x = t.num[num] if num else np.ones_like(days)
        ok = np.isfinite(days) & np.isfinite(x)
        days, x = days[ok], x[ok]
        if len(x) < (8 if series else 30):
            return None
        keys = np.array([ts.period_key(d, period) for d in days])
        levels = np.unique(keys)
        if num:
            means = np.array([x[keys == m].mean() for m in levels])
            sizes = np.array([(keys == m).sum() for m in levels])
            # A series has one row per period; events need a few rows for a mean.
            keep = sizes >= (1 if series else 5)
        else:
            means = np.array([float((keys == m).sum()) for m in levels])
            keep = np.ones(len(levels), dtype=bool)
            keep[[0, -1]] = False  # first and last months are usually partial
        if keep.sum() < (8 if series else 6):
            return None
        return levels[keep], means[keep], keys, x, period

    def _trend_fit(self, table: str, num: str, date_col: str) -> dict[str, Any] | None:
        import numpy as np

        data = self._monthly(table, num, date_col)
        if data is None:
            return None
        t, y, keys, x, period = data
        fit = ts.trend(t, y, season_of=ts.season_of(t, period))
        y = fit.values
        line = np.polyfit(t, y, 1)
        lin_sse = float(np.sum((y - np.polyval(line, t)) ** 2))
        best = ts.step(y)
        step_sse, split = best if best is not None else (math.inf, 0)
        return {
            "slope": fit.slope,
            "p": fit.p,
            "tau": fit.tau,
            "r2": fit.r2,
            "seasonal": fit.seasonal,
            "period": period,
            "lin_sse": lin_sse,
            "step_sse": step_sse,
            "split_month": int(t[split]) if split else None,
            "months": len(t),
            "first": float(y[:3].mean()),
            "last": float(y[-3:].mean()),
            "rows": (keys, x),
        }

    def _test_trend(self, h: Hypothesis) -> Outcome:
        num, date_col = h.columns
        fit = self._trend_fit(h.table, num, date_col)
        if fit is None:
            return Outcome(observation=f"{h.table}.{num or 'rows'} over {date_col}: too few months")
        alpha = self._alpha("trend", 1e-4)
        if not (fit["p"] < alpha and fit["r2"] >= 0.3 and fit["lin_sse"] <= fit["step_sse"]):
            return Outcome(
                observation=f"{h.table}.{num or 'rows'} over {date_col}: no steady trend (R^2={fit['r2']:.2f})"
            )
        direction = "increase" if fit["slope"] > 0 else "decrease"
        where = [self._col(h.table, num).present()] if num else []
        period = fit["period"]
        sql = ev.monthly_slope_sql(
            h.table,
            self._expr(h.table, num) if num else None,
            self._col(h.table, date_col).time_sql(),
            where,
            period=period,
        )
        value = self._value(sql)
        series = self.survey.tables[h.table].series and date_col == self.survey.tables[h.table].time
        what = (
            f"{h.table}.{num}"
            if num and series
            else f"the {period}ly mean of {h.table}.{num}"
            if num
            else f"the number of {h.table} rows per {period}"
        )
        seasonal = ", with its seasonal pattern taken out" if fit["seasonal"] else ""
        ins = self._insight(
            statement=(
                f"{what} {direction}s steadily over {date_col}: by {_fmt(value or fit['slope'])} "
                f"a {period}, from about {_fmt(fit['first'])} to {_fmt(fit['last'])} over "
                f"{fit['months']} {period}s (Mann-Kendall tau = {fit['tau']:.2f}{seasonal})"
            ),
            kind="trend",
            table=h.table,
            columns=[num, date_col] if num else [date_col],
            direction=direction,
            value=value,
            evidence_sql=sql,
            score=_score(fit["p"]),
            support={
                "test": "Mann-Kendall on period means, Theil-Sen slope",
                "p": fit["p"],
                "tau": fit["tau"],
                "theil_sen_slope": fit["slope"],
                "r2": fit["r2"],
                "seasonal": fit["seasonal"],
                "period": period,
            },
        )
        return Outcome(insights=[ins] if ins else [])

    def _test_change(self, h: Hypothesis) -> Outcome:
        from scipy import stats

        num, date_col = h.columns
        fit = self._trend_fit(h.table, num, date_col)
        if fit is None or fit["split_month"] is None:
            return Outcome(observation=f"{h.table}.{num} over {date_col}: too few months")
        months, x = fit["rows"]
        before, after = x[months < fit["split_month"]], x[months >= fit["split_month"]]
        if min(len(before), len(after)) < (5 if fit["period"] != "month" else 10):
            return Outcome(observation=f"{h.table}.{num}: change too close to an end")
        _, p = stats.ttest_ind(before, after, equal_var=False)
        p = float(p)
        sd = float(x.std()) or 1e-12
        diff = float(after.mean() - before.mean())
        # Events give many rows a side; a series has one a period, so it needs less. Counted
        # hypotheses set the bar instead: Bonferroni over them and over the split points the
        # step fit chose from (the best of them is no single test).
        fixed = (
            1e-8 if fit["period"] == "month" and not self.survey.tables[h.table].series else 1e-6
        )
        splits = max(1, fit["months"] - 5)
        alpha = self._alpha("change", fixed * splits) / splits
        if not (p < alpha and abs(diff) >= 0.25 * sd and fit["step_sse"] <= 0.8 * fit["lin_sse"]):
            return Outcome(observation=f"{h.table}.{num} over {date_col}: no step change")
        when = ts.period_start(fit["split_month"], fit["period"]).isoformat()
        direction = "increase" if diff > 0 else "decrease"
        time_sql = self._col(h.table, date_col).time_sql()
        since = (
            f"{quote_ident(date_col)} >= {ev.literal(when)}"
            if time_sql == quote_ident(date_col)
            else f"date({time_sql}) >= {ev.literal(when)}"
        )
        sql = ev.mean_sql(
            h.table, self._expr(h.table, num), [since, self._col(h.table, num).present()]
        )
        value = self._value(sql)
        ins = self._insight(
            statement=(
                f"{h.table}.{num} {'rose' if diff > 0 else 'fell'} from a mean of "
                f"{_fmt(float(before.mean()))} before {when} to {_fmt(value or float(after.mean()))} "
                f"from then on, and stayed there"
            ),
            kind="change",
            table=h.table,
            columns=[num, date_col],
            direction=direction,
            value=value,
            evidence_sql=sql,
            score=_score(p),
            support={
                "test": "step fit of monthly means; Welch t-test",
                "p": p,
                "since": when,
                "before_mean": float(before.mean()),
            },
        )
        return Outcome(insights=[ins] if ins else [])

    def _test_outlier(self, h: Hypothesis) -> Outcome:
        import numpy as np

        if len(h.columns) == 2:
            return self._test_entity_outliers(h)
        (col,) = h.columns
        t = self.table(h.table)
        x = t.num[col]
        ok = np.isfinite(x)
        if ok.sum() < 50:
            return Outcome(observation=f"{h.table}.{col}: too few values")
        scale = x.copy()
        finite = x[ok]
        # Skew judged without the extreme rows themselves, so that two outliers do not turn
        # the column to the log scale (where small values would look extreme instead).
        if finite.min() > 0 and abs(_skew(finite[np.abs(_robust_z(finite)) < 7])) >= 1:
            scale = np.where(ok, np.log(np.where(ok, x, 1.0)), np.nan)
        z = np.full(len(x), np.nan)
        z[ok] = _robust_z(scale[ok])
        flagged = [
            i for i in np.argsort(-np.abs(np.nan_to_num(z))) if abs(np.nan_to_num(z[i])) >= 5.5
        ]
        if not flagged or len(flagged) > max(5, int(0.002 * ok.sum())):
            return Outcome(observation=f"{h.table}.{col}: {len(flagged)} extreme rows")
        # A series without a key is told apart by its time column.
        key = t.profile.key or (t.profile.time if t.profile.series else None)
        insights = []
        median = float(np.median(finite))
        for i in flagged[:3]:
            key_col, key_value = (key, t.raw[key][i]) if key else ("rowid", None)
            if key_value is None:
                continue
            sql = ev.row_value_sql(h.table, self._expr(h.table, col), key_col, key_value)
            value = self._value(sql)
            direction = "higher" if z[i] > 0 else "lower"
            ins = self._insight(
                statement=(
                    f"{h.table} row {key_col} = {key_value} has an extreme {col} of "
                    f"{_fmt(value if value is not None else float(x[i]))}, against a median of "
                    f"{_fmt(median)} (robust z = {_fmt(float(z[i]))})"
                ),
                kind="outlier",
                table=h.table,
                columns=[col],
                entities=[f"{key_col}={key_value}"],
                direction=direction,
                value=value,
                evidence_sql=sql,
                score=min(50.0, abs(float(z[i]))),
                support={"test": "robust z (median, MAD)", "z": float(z[i])},
            )
            if ins:
                insights.append(ins)
        return Outcome(insights=insights)

    def _entity_means(
        self, table: str, num: str | None, column: str
    ) -> dict[Any, tuple[float, int]]:
        import numpy as np

        t = self.table(table)
        keys = t.raw[column]
        x = t.num[num] if num else np.ones(t.n)
        sums: dict[Any, list[float]] = {}
        for k, v in zip(keys, x, strict=True):
            if k is None or not math.isfinite(v):
                continue
            sums.setdefault(k, []).append(float(v))
        if num is None:
            return {k: (float(len(v)), len(v)) for k, v in sums.items()}
        return {k: (sum(v) / len(v), len(v)) for k, v in sums.items()}

    def _test_entity_outliers(self, h: Hypothesis) -> Outcome:
        import numpy as np

        num, column = h.columns
        means = {k: m for k, (m, n) in self._entity_means(h.table, num, column).items() if n >= 5}
        if len(means) < 20:
            return Outcome(observation=f"{h.table}: too few {column} with 5 rows")
        keys = list(means)
        z = _robust_z(np.array([means[k] for k in keys]))
        flagged = [i for i in np.argsort(-np.abs(z)) if abs(z[i]) >= 6][:3]
        out = Outcome()
        for i in flagged:
            k = keys[i]
            sql = ev.mean_sql(h.table, self._expr(h.table, num), [ev.equals(column, k)])
            value = self._value(sql)
            direction = "higher" if z[i] > 0 else "lower"
            ins = self._insight(
                statement=(
                    f"{column} = {k} stands out in {h.table}: its mean {num} is "
                    f"{_fmt(value or means[k])} against a typical {_fmt(float(np.median(list(means.values()))))} "
                    f"(robust z = {_fmt(float(z[i]))})"
                ),
                kind="outlier",
                table=h.table,
                columns=[num],
                entities=[f"{column}={k}"],
                direction=direction,
                value=value,
                evidence_sql=sql,
                score=min(50.0, abs(float(z[i]))),
                support={"test": "robust z of per-entity means", "z": float(z[i])},
            )
            if ins:
                out.insights.append(ins)
                out.follow_ups += [
                    hyp.model_copy(update={"origin": "follow-up", "priority": 0.9})
                    for hyp in self._entity_hypotheses(column, str(k))
                    if hyp.kind in {"trend", "share"}
                ]
        return out

    # -- one entity ------------------------------------------------------------------------------

    def _entity_rows(self, table: str, column: str, value: str) -> Any:
        import numpy as np

        raw = self.table(table).raw[column]
        return np.array([str(v) == value or _same_number(v, value) for v in raw], dtype=bool)

    def _test_entity(self, h: Hypothesis) -> Outcome:
        import numpy as np
        from scipy import stats

        column, value = parse_entity(h.entities[0])
        t = self.table(h.table)
        mine = self._entity_rows(h.table, column, value)
        entity = f"{column}={value}"
        key_value: Any = _typed(value, t.raw[column])
        where = [ev.equals(column, key_value)]
        if not mine.any():
            return Outcome(observation=f"{h.table} has no rows where {entity}")
        if h.kind == "other":
            i = int(np.argmax(mine))
            attrs = ", ".join(
                f"{c} {t.raw[c][i]}"
                for c, p in t.profile.columns.items()
                if c != column
                and p.role in {"categorical", "numeric", "date"}
                and t.raw[c][i] is not None
            )
            sql = f"SELECT * FROM {quote_ident(h.table)} WHERE {where[0]}"
            return Outcome(
                insights=[
                    Insight(
                        statement=f"{entity} in {h.table}: {attrs}",
                        kind="other",
                        table=h.table,
                        columns=[column],
                        entities=[entity],
                        evidence_sql=sql,
                        score=1.0,
                    )
                ]
            )
        if h.kind == "outlier":
            (num,) = h.columns
            is_count = num == column
            means = self._entity_means(h.table, None if is_count else num, column)
            keys = [k for k, (_, n) in means.items() if n >= 3 or is_count]
            mine_key = next((k for k in keys if str(k) == value or _same_number(k, value)), None)
            if mine_key is None or len(keys) < 10:
                return Outcome(observation=f"{entity}: too few rows in {h.table} to compare")
            arr = np.array([means[k][0] for k in keys])
            z = float(_robust_z(arr)[keys.index(mine_key)])
            if not abs(z) >= 3:
                return Outcome(observation=f"{entity}: {num} is typical (z={z:.1f})")
            direction = "higher" if z > 0 else "lower"
            if is_count:
                sql = f"SELECT COUNT(*) FROM {quote_ident(h.table)} WHERE {where[0]}"
                what = f"number of {h.table} rows"
            else:
                sql = ev.mean_sql(h.table, self._expr(h.table, num), where)
                what = f"mean {num}"
            v = self._value(sql)
            pct = float((arr < means[mine_key][0]).mean() * 100)
            ins = self._insight(
                statement=(
                    f"{entity} has a {'high' if z > 0 else 'low'} {what} in {h.table}: "
                    f"{_fmt(v if v is not None else means[mine_key][0])} against a typical "
                    f"{_fmt(float(np.median(arr)))} ({'above' if z > 0 else 'below'} "
                    f"{_fmt(pct if z > 0 else 100 - pct)}% of {column}s)"
                ),
                kind="outlier",
                table=h.table,
                columns=[num],
                entities=[entity],
                direction=direction,
                value=v,
                evidence_sql=sql,
                score=min(50.0, abs(z) * 2),
                support={"test": "robust z among entities", "z": z},
            )
            return Outcome(insights=[ins] if ins else [])
        if h.kind == "trend":
            num, date_col = h.columns
            x, days = t.num[num][mine], t.days[date_col][mine]
            ok = np.isfinite(x) & np.isfinite(days)
            if ok.sum() < 8:
                return Outcome(observation=f"{entity}: too few dated {num} values")
            fit = stats.linregress(days[ok], x[ok])
            if not (fit.pvalue < 5e-3 and abs(fit.rvalue) >= 0.5):
                return Outcome(observation=f"{entity}: no trend in {num} (r={fit.rvalue:.2f})")
            direction = "increase" if fit.slope > 0 else "decrease"
            sql = ev.entity_slope_sql(
                h.table,
                self._expr(h.table, num),
                self._col(h.table, date_col).time_sql(),
                [*where, self._col(h.table, num).present()],
            )
            v = self._value(sql)
            ins = self._insight(
                statement=(
                    f"{entity}'s {num} {direction}s over time: {_fmt(v if v is not None else fit.slope * 30)} "
                    f"per 30 days across {int(ok.sum())} {h.table} rows (r = {fit.rvalue:.2f})"
                ),
                kind="trend",
                table=h.table,
                columns=[num, date_col],
                entities=[entity],
                direction=direction,
                value=v,
                evidence_sql=sql,
                score=_score(float(fit.pvalue)),
                support={"test": "linear fit over the entity's rows", "p": float(fit.pvalue)},
            )
            return Outcome(insights=[ins] if ins else [])
        (cat,) = h.columns
        raw = t.raw[cat]
        all_levels = [v for v in raw if v is not None]
        mine_levels = [v for v, m in zip(raw, mine, strict=True) if m and v is not None]
        if len(mine_levels) < 8:
            return Outcome(observation=f"{entity}: too few {cat} values")
        top = max(set(mine_levels), key=mine_levels.count)
        s_e = mine_levels.count(top) / len(mine_levels)
        s_p = all_levels.count(top) / len(all_levels)
        p = float(
            stats.binomtest(
                mine_levels.count(top), len(mine_levels), s_p, alternative="greater"
            ).pvalue
        )
        if not (p < 5e-3 and s_e - s_p >= 0.2):
            return Outcome(observation=f"{entity}: {cat} mix is typical")
        sql = ev.share_sql(h.table, cat, top, where)
        v = self._value(sql)
        ins = self._insight(
            statement=(
                f"{_fmt(100 * (v if v is not None else s_e))}% of {entity}'s {h.table} rows have "
                f"{cat} = {top}, against {_fmt(100 * s_p)}% over all rows"
            ),
            kind="share",
            table=h.table,
            columns=[cat],
            entities=[entity, f"{cat}={top}"],
            value=v,
            evidence_sql=sql,
            score=_score(p),
            support={"test": "binomial vs the overall share", "p": p, "overall": s_p},
        )
        return Outcome(insights=[ins] if ins else [])


def _same_number(a: Any, b: str) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _typed(value: str, column: list[Any]) -> Any:
    """``value`` as the column stores it (an int for an integer key)."""
    sample = next((v for v in column if v is not None), None)
    if isinstance(sample, int | float) and not isinstance(sample, bool):
        try:
            f = float(value)
        except ValueError:
            return value
        return int(f) if isinstance(sample, int) and f.is_integer() else f
    return value


def _robust_z(x: Any) -> Any:
    import numpy as np

    median = np.median(x)
    mad = np.median(np.abs(x - median)) * 1.4826
    if mad == 0:
        mad = np.std(x) or 1e-12
    return (x - median) / mad


def _skew(x: Any) -> float:
    from scipy import stats

    return float(stats.skew(x))
