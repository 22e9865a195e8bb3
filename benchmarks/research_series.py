"""Recall on economic and social time series, and where each planted fact is lost, offline.

    python benchmarks/research_series.py [--seeds 0-19] [--held-out 1000-1019]
        [--budget-turns 60] [--no-null] [--verbose] [--json]

Each seed draws one table from :mod:`lemmata.agents.research.synthetic5`: annual macro or
social series (20-80 years), quarterly or monthly series (with seasonality), side by side in
one table or stacked by state or country (a long panel), time as a year integer, a decimal
year, ``'YYYY-MM'``, ``'YYYYQn'`` or an ISO date; AR(1) and random-walk noise, a nominal and
real pair with its deflator, a growth rate beside its level. Planted: two trends (in a panel,
one shared by all units and one of a single unit), a dated level shift, two outliers (a strike
year, a data break) and two series whose changes move together. Seeds 0-19 are development
data; 1000-1019 were fixed before any run and are held out (report them beside, never tune on
them).

Printed for each seed set: recall by kind, and what became of each planted fact that was not
found:

- **never tested**: the run's budget ended before its hypothesis was tried;
- **below the bar**: tested, and its test did not clear the bar (``--verbose`` prints why);
- **reported, not matched**: an insight of the same kind about the same columns that the
  scorer did not accept (another direction, another period or unit);
- **dated wrong**: a change reported with the right direction but dated more than
  ``synthetic5.TOLERANCE`` periods away from the planted one;

then the false discoveries: on the same tables with nothing planted (noise, random walks among
it), every trend, change, outlier and correlation reported, except between columns computed
from each other (a nominal series and its real twin); on the planted tables, those about
series with nothing of the kind planted, and how often the two planted trends (which only
share a trend) were reported as correlated. Also seconds per table.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from lemmata.agents.research.score import matches, score
from lemmata.agents.research.synthetic5 import TOLERANCE, SeriesTable, generate
from lemmata.agents.research.types import ChecklistItem, Insight

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planted_sets import explore, run_sets, set_parser  # noqa: E402

STAGES = ("found", "dated wrong", "reported, not matched", "below the bar", "never tested")
#: The kinds whose findings on a table of noise are false discoveries.
FALSE_KINDS = ("trend", "change", "outlier", "correlation")
_DAYS = {"year": 365.25, "quarter": 91.3, "month": 30.44}


def _keys(item: ChecklistItem) -> set[str]:
    """How the graph records the hypothesis that tests ``item`` (either column order for a
    correlation; a panel's level as its entity, with its note)."""
    cols = [tuple(item.columns)]
    if item.kind == "correlation":
        cols.append(tuple(reversed(item.columns)))
    entities = tuple(e for e in item.entities if item.kind in ("trend", "change"))
    return {repr((item.kind, item.table, c, entities, None)) for c in cols}


def _dated(g: SeriesTable, item: ChecklistItem, ins: Insight) -> bool:
    """Whether a change is dated within the tolerance of the planted one."""
    planted = g.dates.get(item.id)
    since = ins.support.get("since")
    if planted is None:
        return True
    if not isinstance(since, str):
        return False
    try:
        off = abs(date.fromisoformat(since[:10]) - date.fromisoformat(planted)).days
    except ValueError:
        return False
    return off <= TOLERANCE[g.period] * _DAYS[g.period] + 3


def _stage(
    g: SeriesTable, item: ChecklistItem, matched: bool, insights: list[Insight], tested: set[str]
) -> str:
    if matched:
        if item.kind != "change":
            return "found"
        same = [i for i in insights if matches(i, item)]
        return "found" if any(_dated(g, item, i) for i in same) else "dated wrong"
    if item.kind == "change" and any(matches(i, item) for i in insights):
        return "dated wrong"
    wanted = {c.lower() for c in item.columns}
    if any(i.kind == item.kind and wanted <= {c.lower() for c in i.columns} for i in insights):
        return "reported, not matched"
    return "below the bar" if _keys(item) & tested else "never tested"


def _false(g: SeriesTable, insights: list[Insight]) -> list[Insight]:
    """The insights of ``FALSE_KINDS`` that nothing planted or constructed explains."""
    return [
        i for i in insights if i.kind in FALSE_KINDS and not g.is_by_construction(i.kind, i.columns)
    ]


#: Words of the observations each kind's check records when a hypothesis fails.
_SAYS = {
    "trend": ("trend", "too few months"),
    "change": ("step change", "too few months", "too close"),
    "outlier": ("extreme", "too few values"),
    "correlation": ("correlat", "too few pairs", "follow time"),
}


def _why(report: Any, g: SeriesTable, item: ChecklistItem) -> str:
    """The observation a failed hypothesis left (the first naming its series and kind)."""
    series = [c for c in item.columns if c != g.time]
    why = [
        o
        for o in report.observations
        if all(c in o for c in series) and any(w in o for w in _SAYS[item.kind])
    ]
    return why[0] if why else "?"


def run_set(seeds: list[int], work: Path, budget_turns: int, null: bool, verbose: bool) -> dict:
    stages: dict[str, dict[str, int]] = {}
    found: dict[str, list[int]] = {}
    null_false: list[int] = []
    null_by_kind: dict[str, int] = dict.fromkeys(FALSE_KINDS, 0)
    null_walks = 0
    planted_false: list[int] = []
    shared: list[int] = []
    seconds: list[float] = []
    for seed in seeds:
        g = generate(work / f"series{seed}.sqlite", seed)
        started = time.monotonic()
        report, tested = explore(g.path, work / f"series{seed}.out", budget_turns)
        seconds.append(time.monotonic() - started)
        insights = report.insights
        result = score(insights, g.checklist)
        lines = []
        for item in g.checklist:
            stage = _stage(g, item, item.id in result.matched, insights, tested)
            stages.setdefault(item.kind, dict.fromkeys(STAGES, 0))[stage] += 1
            found.setdefault(item.kind, []).append(int(stage == "found"))
            if stage != "found":
                what = "~".join(item.columns) + (f" [{item.entities[0]}]" if item.entities else "")
                lines.append(f"{item.id} {what}: {stage}")
                if verbose and stage == "below the bar":
                    lines[-1] += f" ({_why(report, g, item)})"
        bad = _false(g, insights)
        planted_false.append(len(bad))
        pair = g.shared_trend
        shared.append(
            int(
                bool(pair)
                and any(
                    i.kind == "correlation" and frozenset(c.lower() for c in i.columns) == pair
                    for i in insights
                )
            )
        )
        msg = (
            f"  seed {seed} ({g.domain}, {g.periods} {g.period}s, {g.time} as {g.form}): "
            f"recall {result.recall:.2f}, {len(insights)} insights, {len(bad)} unplanted, "
            f"{seconds[-1]:.1f} s"
        )
        if verbose and bad:
            lines += [f"unplanted: {i.statement}" for i in bad]
        if null:
            empty = generate(work / f"null{seed}.sqlite", seed, planted=False)
            none = explore(empty.path, work / f"null{seed}.out", budget_turns)[0]
            wrong = _false(empty, none.insights)
            null_false.append(len(wrong))
            for i in wrong:
                null_by_kind[i.kind] += 1
                null_walks += any(c.lower() in empty.walks for c in i.columns)
            msg += f"; null: {len(wrong)} false"
            if verbose and wrong:
                lines += [f"null: {i.statement}" for i in wrong]
        print(msg, file=sys.stderr)
        if verbose and lines:
            print("    " + "\n    ".join(lines), file=sys.stderr)
    total = [v for values in found.values() for v in values]
    return {
        "tables": len(seeds),
        "items": len(total),
        "recall": round(statistics.mean(total), 4) if total else 0.0,
        "by_kind": {k: round(statistics.mean(v), 4) for k, v in found.items()},
        "stages": stages,
        "null_fd_per_table": round(statistics.mean(null_false), 3) if null_false else None,
        "null_fd_by_kind": null_by_kind if null_false else None,
        "null_fd_on_walks": null_walks,
        "unplanted_per_table": round(statistics.mean(planted_false), 3),
        "shared_trend_reported": sum(shared),
        "seconds_median": round(statistics.median(seconds), 2),
        "seconds_max": round(max(seconds), 2),
    }


def _print(title: str, r: dict) -> None:
    print(f"{title}: {r['tables']} tables, {r['items']} planted facts")
    print(f"{'recall':<22} {r['recall']:>6.3f}")
    for kind, value in r["by_kind"].items():
        where = ", ".join(f"{s} {n}" for s, n in r["stages"][kind].items() if n and s != "found")
        print(f"  {kind:<20} {value:>6.3f}   {where}")
    print(
        "where the facts went: "
        + ", ".join(f"{stage} {sum(s[stage] for s in r['stages'].values())}" for stage in STAGES)
    )
    if r["null_fd_per_table"] is not None:
        kinds = ", ".join(f"{k} {n}" for k, n in r["null_fd_by_kind"].items() if n)
        print(
            f"{'null FD/table':<22} {r['null_fd_per_table']:>6}   {kinds}; "
            f"{r['null_fd_on_walks']} of them about a random walk"
        )
    print(f"{'unplanted/table':<22} {r['unplanted_per_table']:>6}   (planted tables)")
    print(f"shared-trend pairs reported as correlated: {r['shared_trend_reported']}")
    print(f"{r['seconds_median']} s per table (max {r['seconds_max']})")


def main(argv: list[str] | None = None) -> int:
    ap = set_parser(__doc__, null_help="skip the tables of noise")
    args = ap.parse_args(argv)
    null = not args.no_null
    return run_sets(
        args,
        "research-series-",
        lambda seeds, work: run_set(seeds, work, args.budget_turns, null, args.verbose),
        _print,
    )


if __name__ == "__main__":
    sys.exit(main())
