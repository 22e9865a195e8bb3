"""Checklist recall of the research agent on the sealed real data sets, offline: totals only.

    python benchmarks/research_sealed.py [--budget-turns 60] [--json]
    python benchmarks/research_sealed.py --list

The data sets of :mod:`lemmata.agents.research.realdata_sealed2` (textbook econometrics data,
the data of *The Effect* and *The Mixtape*, Gapminder and others, 24 data sets and 60 published
facts) were written from their documentation and the literature before the agent was ever run
on them, and never looked at through the agent. Each is built into SQLite and researched offline
as :func:`lemmata.agents.research.realdata.evaluate_real` does it, and its insights are scored
against its facts. Printed: the number of data sets and facts, recall overall and by kind
(pooled over facts), precision (insights that match a fact or whose evidence query reproduces
their value, over all insights) and seconds per data set (median and max). Nothing is printed
per data set or per fact, not even in ``--json``: the set stays sealed, so that its figure
measures what the agent does on data nobody tuned it on. Run it once per change worth
measuring, never to diagnose a miss.

The first sealed set (:mod:`lemmata.agents.research.realdata_sealed`) scored 0.442 recall
twice; it is development data now, and this set took its place.

``--list`` prints the data sets and their number of facts and runs nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lemmata.agents.research.evaluate import SuiteResult, _run_task
from lemmata.agents.research.realdata_sealed2 import DATASETS, available, build


def _list() -> None:
    names = available()
    for name, data in DATASETS.items():
        mark = "" if name in names else f"  (not installed: {data.package})"
        print(f"{name:<24} {data.package:<14} {len(data.facts):>2} facts{mark}")
    facts = sum(len(d.facts) for d in DATASETS.values())
    print(f"{len(DATASETS)} data sets, {facts} facts ({len(names)} installed)")


def _totals(suite: SuiteResult, wall: float, budget_turns: int) -> dict[str, Any]:
    """The suite's totals, without anything per data set or per fact."""
    out = suite.to_dict()
    out.pop("missed", None)
    out.pop("null_insights_per_db", None)
    seconds = [t.seconds for t in suite.tasks]
    return out | {
        "datasets": len(suite.tasks),
        "seconds_per_db_median": round(statistics.median(seconds), 2) if seconds else 0,
        "seconds_per_db_max": round(max(seconds), 2) if seconds else 0,
        "wall_s": round(wall, 1),
        "budget_turns": budget_turns,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the data sets; run nothing")
    ap.add_argument("--budget-turns", type=int, default=60)
    ap.add_argument("--budget-seconds", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        _list()
        return 0
    if args.budget_turns < 1 or args.budget_seconds <= 0:
        ap.error("--budget-turns must be at least 1 and --budget-seconds positive")
    names = available()
    if not names:
        print("no sealed data set is installed: pip install 'lemmata[research]'", file=sys.stderr)
        return 1
    started = time.monotonic()
    suite = SuiteResult()
    with tempfile.TemporaryDirectory(prefix="research-sealed-") as tmp:
        work = Path(tmp)
        for n, name in enumerate(names, 1):
            suite.tasks.append(
                _run_task(
                    name,
                    build(name, work / f"{name}.sqlite"),
                    DATASETS[name].checklist,
                    work / f"{name}.out",
                    entity=None,
                    budget_turns=args.budget_turns,
                    budget_seconds=args.budget_seconds,
                    model=None,
                    judge_model=None,
                )
            )
            # Progress without names or results: the set stays sealed.
            print(f"  {n}/{len(names)} data sets done", file=sys.stderr)
    totals = _totals(suite, time.monotonic() - started, args.budget_turns)
    if args.json:
        print(json.dumps(totals))
        return 0
    print(
        f"sealed real data sets: {totals['datasets']} ({totals['items']} published facts), "
        f"offline, {totals['budget_turns']} turns"
    )
    print(f"{'recall':<18} {totals['recall']:>8.3f}")
    for kind, value in totals["by_kind"].items():
        print(f"  {kind:<16} {value:>8.3f}   ({totals['items_by_kind'][kind]} facts)")
    print(f"{'precision':<18} {totals['precision']:>8.3f}")
    print(f"{'insights/db':<18} {totals['insights_per_task']:>8}")
    print(f"{'s/db median':<18} {totals['seconds_per_db_median']:>8}")
    print(f"{'s/db max':<18} {totals['seconds_per_db_max']:>8}")
    print(f"{'wall s':<18} {totals['wall_s']:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
