"""Recall on designed studies and surveys, and where each planted fact is lost, offline.

    python benchmarks/research_designs.py [--seeds 0-19] [--held-out 1000-1019]
        [--design trial|did|observational|survey] [--budget-turns 60] [--no-null]
        [--verbose] [--json]

Each seed draws one study from :mod:`lemmata.agents.research.synthetic4`: a randomised trial
(patients at sites, two to four arms, some integer-coded), a difference in differences (units
observed over two to six years, a treated flag and a post flag, the flag in the panel or in
its parent table), an observational comparison with a confounder, or a household survey
(answers of yes/no/unsure, a rating of 1-5, respondents in households). 40 to 5,000 rows;
group differences, shares that differ by group, correlations, a difference across a key and
a difference in differences planted among unrelated columns. Seeds 0-19 are development data;
1000-1019 were fixed before any run and are held out (report them beside, never tune on them).

Printed for each seed set: recall by kind, and what became of each planted fact not found:

- **never tested**: no hypothesis of the run asked it (or the budget ended first);
- **below the bar**: tested, and its test did not clear the bar (``--verbose`` prints why);
- **reported, not matched**: an insight of the same kind about the same columns that the
  scorer did not accept (another level or direction);

and, on the same studies with nothing planted, the correlations, group differences,
relationships and shares by group reported between columns the generator did not relate:
every one a false discovery. Also seconds per study.
"""

from __future__ import annotations

import ast
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lemmata.agents.research.score import score
from lemmata.agents.research.synthetic4 import DESIGNS, Study, generate
from lemmata.agents.research.types import ChecklistItem, Insight

sys.path.insert(0, str(Path(__file__).resolve().parent))
from planted_sets import explore, run_sets, set_parser  # noqa: E402

STAGES = ("found", "reported, not matched", "below the bar", "never tested")
#: The kinds of insight that relate columns: on a study of noise, any that the generator did
#: not make is a false discovery (a share of one column is a description, not a relation).
RELATING = ("correlation", "group_difference", "relationship", "share")


def _asked(item: ChecklistItem, tested: set[tuple[str, str, frozenset[str]]]) -> bool:
    """Whether a hypothesis of the item's kind about its table and columns was tested."""
    return (item.kind, item.table.lower(), frozenset(c.lower() for c in item.columns)) in tested


def _stage(
    item: ChecklistItem,
    matched: bool,
    insights: list[Insight],
    tested: set[tuple[str, str, frozenset[str]]],
) -> str:
    if matched:
        return "found"
    wanted = {c.lower() for c in item.columns}
    if any(i.kind == item.kind and wanted <= {c.lower() for c in i.columns} for i in insights):
        return "reported, not matched"
    return "below the bar" if _asked(item, tested) else "never tested"


def _run(path: Path, out: Path, budget_turns: int) -> tuple[Any, set]:
    report, keys = explore(path, out, budget_turns)
    tested: set[tuple[str, str, frozenset[str]]] = set()
    for key in keys:
        try:
            kind, table, columns = ast.literal_eval(key)[:3]
        except (ValueError, SyntaxError, TypeError):  # not a hypothesis's key
            continue
        tested.add((kind, str(table).lower(), frozenset(str(c).lower() for c in columns)))
    return report, tested


def _false(study: Study, insights: list[Insight]) -> list[Insight]:
    """The insights relating columns that the generator did not relate."""
    return [
        i
        for i in insights
        if i.kind in RELATING
        and not (i.kind == "share" and len([c for c in i.columns if c]) < 2)
        and not study.is_planted_or_derived(i.columns)
    ]


def run_set(
    seeds: list[int], work: Path, budget_turns: int, null: bool, verbose: bool, design: str | None
) -> dict:
    stages: dict[str, dict[str, int]] = {}
    found: dict[str, list[int]] = {}
    by_design: dict[str, list[int]] = {}
    false: list[int] = []
    seconds: list[float] = []
    for seed in seeds:
        g = generate(work / f"study{seed}.sqlite", seed, design=design)
        started = time.monotonic()
        report, tested = _run(g.path, work / f"study{seed}.out", budget_turns)
        seconds.append(time.monotonic() - started)
        result = score(report.insights, g.checklist)
        line = []
        for item in g.checklist:
            stage = _stage(item, item.id in result.matched, report.insights, tested)
            stages.setdefault(item.kind, dict.fromkeys(STAGES, 0))[stage] += 1
            found.setdefault(item.kind, []).append(int(stage == "found"))
            by_design.setdefault(g.design, []).append(int(stage == "found"))
            if stage != "found":
                line.append(
                    f"{item.id} {item.kind} {'~'.join(item.columns)} {item.entities}: {stage}"
                )
                if verbose and stage == "below the bar":
                    heads = tuple(f"{item.table}.{c}" for c in item.columns[:1])
                    why = [o for o in report.observations if o.startswith(heads)]
                    why = [o for o in why if all(c in o for c in item.columns)] or why
                    line[-1] += f" [{why[0] if why else '?'}]"
        msg = (
            f"  seed {seed} ({g.design}, {g.tables}): recall {result.recall:.2f}, "
            f"{len(report.insights)} insights, {seconds[-1]:.1f} s"
        )
        if null:
            empty = generate(work / f"null{seed}.sqlite", seed, planted=False, design=design)
            none = explore(empty.path, work / f"null{seed}.out", budget_turns)[0]
            bad = _false(empty, none.insights)
            false.append(len(bad))
            msg += f"; null: {len(bad)} false"
            if verbose and bad:
                msg += " (" + "; ".join(i.statement for i in bad) + ")"
        print(msg, file=sys.stderr)
        if verbose and line:
            print("    " + "\n    ".join(line), file=sys.stderr)
    total = [v for values in found.values() for v in values]
    return {
        "studies": len(seeds),
        "items": len(total),
        "recall": round(statistics.mean(total), 4) if total else 0.0,
        "by_kind": {k: round(statistics.mean(v), 4) for k, v in found.items()},
        "by_design": {k: round(statistics.mean(v), 4) for k, v in sorted(by_design.items())},
        "stages": stages,
        "null_fd_per_study": round(statistics.mean(false), 3) if false else None,
        "seconds_median": round(statistics.median(seconds), 2),
        "seconds_max": round(max(seconds), 2),
    }


def _print(title: str, r: dict) -> None:
    print(f"{title}: {r['studies']} studies, {r['items']} planted facts")
    print(f"{'recall':<22} {r['recall']:>6.3f}")
    for kind, value in r["by_kind"].items():
        print(f"  {kind:<20} {value:>6.3f}")
    print("by design: " + ", ".join(f"{k} {v:.3f}" for k, v in r["by_design"].items()))
    print(
        "where the facts went: "
        + ", ".join(f"{stage} {sum(s[stage] for s in r['stages'].values())}" for stage in STAGES)
    )
    if r["null_fd_per_study"] is not None:
        print(f"{'null FD/study':<22} {r['null_fd_per_study']:>6}")
    print(f"{r['seconds_median']} s per study (max {r['seconds_max']})")


def main(argv: list[str] | None = None) -> int:
    ap = set_parser(__doc__, null_help="skip the studies with nothing planted")
    ap.add_argument("--design", choices=DESIGNS, help="one design for every seed")
    args = ap.parse_args(argv)
    null = not args.no_null
    return run_sets(
        args,
        "research-designs-",
        lambda seeds, work: run_set(
            seeds, work, args.budget_turns, null, args.verbose, args.design
        ),
        _print,
    )


if __name__ == "__main__":
    sys.exit(main())
