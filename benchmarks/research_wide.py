"""Recall on wide econometric tables, and where each planted fact is lost, offline.

    python benchmarks/research_wide.py [--seeds 0-19] [--held-out 1000-1019]
        [--budget-turns 60] [--no-null] [--verbose] [--json]

Each seed draws one table from :mod:`lemmata.agents.research.synthetic3` (a survey of workers,
houses sold, firms and their chief executives, or schools: 150 to 2,500 rows, 25 to 40
columns of skewed amounts, their logarithms and squares, integers, dummies and a code, some
with missing values), with four correlations, three dummy gaps and one code level planted at
t-statistics of 4 to 9 among columns that are otherwise unrelated. Seeds 0-19 are development
data; 1000-1019 were fixed before any run and are held out (report them beside, never tune on
them).

Printed for each seed set: recall by kind, and what became of each planted fact that was not
found:

- **never tested**: the run's budget ended before its hypothesis was tried;
- **below the bar**: tested, and its test did not clear the bar (``--verbose`` prints why);
- **reported, not matched**: an insight about the same columns that the scorer did not accept
  (another direction or level);

and, on the same tables with nothing planted, the correlations and group differences reported
between columns the generator did not relate (a column and its own logarithm or square are
related): every one a false discovery. Also the hypotheses a run tested and left, and seconds
per table.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from lemmata.agents.research.score import score
from lemmata.agents.research.synthetic3 import generate
from lemmata.agents.research.types import ChecklistItem, Insight

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planted_sets import explore, run_sets, set_parser  # noqa: E402

STAGES = ("found", "reported, not matched", "below the bar", "never tested")


def _keys(item: ChecklistItem) -> set[str]:
    """How the graph records the hypothesis that tests ``item`` (either column order for a
    correlation)."""
    cols = [tuple(item.columns)]
    if item.kind == "correlation":
        cols.append(tuple(reversed(item.columns)))
    return {repr((item.kind, item.table, c, (), None)) for c in cols}


def _stage(item: ChecklistItem, matched: bool, insights: list[Insight], tested: set[str]) -> str:
    if matched:
        return "found"
    wanted = {c.lower() for c in item.columns}
    if any(i.kind == item.kind and wanted <= {c.lower() for c in i.columns} for i in insights):
        return "reported, not matched"
    return "below the bar" if _keys(item) & tested else "never tested"


def run_set(seeds: list[int], work: Path, budget_turns: int, null: bool, verbose: bool) -> dict:
    stages: dict[str, dict[str, int]] = {}
    found: dict[str, list[int]] = {}
    false: list[int] = []
    seconds: list[float] = []
    tested_counts: list[int] = []
    left_counts: list[int] = []
    for seed in seeds:
        g = generate(work / f"wide{seed}.sqlite", seed)
        started = time.monotonic()
        report, tested = explore(g.path, work / f"wide{seed}.out", budget_turns)
        seconds.append(time.monotonic() - started)
        tested_counts.append(report.stats["hypotheses_tested"])
        left_counts.append(report.stats["hypotheses_left"])
        result = score(report.insights, g.checklist)
        line = []
        for item in g.checklist:
            stage = _stage(item, item.id in result.matched, report.insights, tested)
            stages.setdefault(item.kind, dict.fromkeys(STAGES, 0))[stage] += 1
            found.setdefault(item.kind, []).append(int(stage == "found"))
            if stage != "found":
                line.append(f"{item.id} {'~'.join(item.columns)}: {stage}")
                if verbose and stage == "below the bar":
                    a, b = item.columns
                    heads: tuple[str, ...] = (f"{g.table}.{a} ~ {b}:", f"{g.table}.{b} ~ {a}:")
                    if item.kind == "group_difference":
                        heads = (f"{g.table}.{a} by {b}:",)
                    why = [o for o in report.observations if o.startswith(heads)]
                    line[-1] += f" [{why[0] if why else '?'}]"
        msg = (
            f"  seed {seed} ({g.domain}, {g.rows} rows, {g.columns} columns): recall "
            f"{result.recall:.2f}, {len(report.insights)} insights, tested "
            f"{tested_counts[-1]}, left {left_counts[-1]}, {seconds[-1]:.1f} s"
        )
        if null:
            empty = generate(work / f"null{seed}.sqlite", seed, planted=False)
            none = explore(empty.path, work / f"null{seed}.out", budget_turns)[0]
            bad = [
                i
                for i in none.insights
                if i.kind in ("correlation", "group_difference")
                and not empty.is_planted_or_derived(i.columns)
            ]
            false.append(len(bad))
            msg += f"; null: {len(bad)} false"
            if verbose and bad:
                msg += " (" + "; ".join(i.statement for i in bad) + ")"
        print(msg, file=sys.stderr)
        if verbose and line:
            print("    " + "\n    ".join(line), file=sys.stderr)
    total = [v for values in found.values() for v in values]
    return {
        "tables": len(seeds),
        "items": len(total),
        "recall": round(statistics.mean(total), 4) if total else 0.0,
        "by_kind": {k: round(statistics.mean(v), 4) for k, v in found.items()},
        "stages": stages,
        "null_fd_per_table": round(statistics.mean(false), 3) if false else None,
        "tested_median": statistics.median(tested_counts),
        "left_median": statistics.median(left_counts),
        "seconds_median": round(statistics.median(seconds), 2),
        "seconds_max": round(max(seconds), 2),
    }


def _print(title: str, r: dict) -> None:
    print(f"{title}: {r['tables']} tables, {r['items']} planted facts")
    print(f"{'recall':<22} {r['recall']:>6.3f}")
    for kind, value in r["by_kind"].items():
        print(f"  {kind:<20} {value:>6.3f}")
    print(
        "where the facts went: "
        + ", ".join(f"{stage} {sum(s[stage] for s in r['stages'].values())}" for stage in STAGES)
    )
    if r["null_fd_per_table"] is not None:
        print(f"{'null FD/table':<22} {r['null_fd_per_table']:>6}")
    print(
        f"hypotheses tested {r['tested_median']} (median), left {r['left_median']}; "
        f"{r['seconds_median']} s per table (max {r['seconds_max']})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = set_parser(__doc__, null_help="skip the tables of noise")
    args = ap.parse_args(argv)
    null = not args.no_null
    return run_sets(
        args,
        "research-wide-",
        lambda seeds, work: run_set(seeds, work, args.budget_turns, null, args.verbose),
        _print,
    )


if __name__ == "__main__":
    sys.exit(main())
