"""Checklist recall of the research agent on generated databases, offline.

    python benchmarks/research_recall.py [--seeds 1000-1019] [--budget-turns 60] [--json]
    python benchmarks/research_recall.py --real-only

Each seed generates one database (three linked tables in one of three domains, with one
planted insight of every kind, two planted outliers and three facts about one entity; seeds
1000-1019 were not used while the explorer was built, which used 0-99). Two tasks run per
database: the whole database against its checklist, and "analyse entity X" against the
entity's checklist. Printed: recall overall and by kind (pooled over items), precision
(insights that match a checklist item or whose evidence query reproduces their value, over all
insights), seconds per database (both tasks, median and max), and the insights the agent
reports on the same databases with nothing planted (pure noise: every one is a false
discovery).

Side by side: the same agent stopped after 3 turns (24 hypotheses), as a loop that stops at its
first few findings would; it shows what exploring on a budget buys.

Then the real data sets that PyPI packages ship (statsmodels, vega_datasets, scikit-learn,
palmerpenguins; :mod:`lemmata.agents.research.realdata`), each scored against facts published
about it: recall by kind, precision and seconds per data set (``--no-real`` skips them,
``--real-only`` runs only them).
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

from lemmata.agents.research.evaluate import evaluate_generated
from lemmata.agents.research.realdata import available, evaluate_real


def _seeds(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", default="1000-1019")
    ap.add_argument("--budget-turns", type=int, default=60)
    ap.add_argument("--early-turns", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-real", action="store_true", help="skip the real data sets")
    ap.add_argument("--real-only", action="store_true", help="only the real data sets")
    args = ap.parse_args(argv)
    seeds = _seeds(args.seeds)
    results = {}
    with tempfile.TemporaryDirectory(prefix="research-bench-") as tmp:
        for label, turns, null in (
            ()
            if args.real_only
            else (("ours", args.budget_turns, True), ("early_stop", args.early_turns, False))
        ):
            started = time.monotonic()

            def progress(task: object, _label: str = label) -> None:
                if not args.json:
                    print(
                        f"  [{_label}] {task.name}: recall {task.score.recall:.2f}, "  # type: ignore[attr-defined]
                        f"{task.insights} insights, {task.seconds:.1f} s",  # type: ignore[attr-defined]
                        file=sys.stderr,
                    )

            suite = evaluate_generated(
                seeds,
                Path(tmp) / label,
                budget_turns=turns,
                budget_seconds=600,
                null_databases=null,
                on_task=progress,
            )
            out = suite.to_dict()
            per_db: dict[str, float] = {}
            for t in suite.tasks:
                db = t.name.split("[")[0]
                per_db[db] = per_db.get(db, 0.0) + t.seconds
            out["seconds_per_db_median"] = round(statistics.median(per_db.values()), 2)
            out["seconds_per_db_max"] = round(max(per_db.values()), 2)
            out["wall_s"] = round(time.monotonic() - started, 1)
            out["budget_turns"] = turns
            results[label] = out
        if not args.no_real and available():
            started = time.monotonic()
            real_suite = evaluate_real(None, Path(tmp) / "real", budget_turns=args.budget_turns)
            results["real"] = real_suite.to_dict() | {
                "datasets": len(real_suite.tasks),
                "seconds_per_db_median": round(
                    statistics.median(t.seconds for t in real_suite.tasks), 2
                ),
                "seconds_per_db_max": round(max(t.seconds for t in real_suite.tasks), 2),
                "per_dataset": {
                    t.name: {
                        "found": len(t.score.matched),
                        "facts": len(t.score.matched) + len(t.score.missed),
                        "insights": t.insights,
                        "seconds": round(t.seconds, 2),
                    }
                    for t in real_suite.tasks
                },
                "wall_s": round(time.monotonic() - started, 1),
            }
    if args.json:
        print(json.dumps(results))
        return 0
    if "ours" in results:
        _print_generated(args.seeds, len(seeds), results["ours"], results["early_stop"])
    real = results.get("real")
    if real:
        print(
            f"\nreal data sets: {real['datasets']} ({real['items']} published facts), "
            f"{real['seconds_per_db_median']} s per data set (median; max "
            f"{real['seconds_per_db_max']})"
        )
        for name, d in real["per_dataset"].items():
            print(
                f"  {name:<18} {d['found']:>2}/{d['facts']:<2} facts  {d['insights']:>4} insights"
                f"  {d['seconds']:>6} s"
            )
        print(f"{'recall':<18} {real['recall']:>8.3f}")
        for kind, value in real["by_kind"].items():
            print(f"  {kind:<16} {value:>8.3f}   ({real['items_by_kind'][kind]} items)")
        print(f"{'precision':<18} {real['precision']:>8.3f}")
        if real["missed"]:
            print("missed:", json.dumps(real["missed"]))
    return 0


def _print_generated(seed_text: str, n: int, ours: dict[str, Any], early: dict[str, Any]) -> None:
    print(f"{n} generated databases (seeds {seed_text}), {ours['tasks']} tasks, offline")
    print(f"{'':<18} {'ours':>8} {'3 turns':>8}")
    print(f"{'recall':<18} {ours['recall']:>8.3f} {early['recall']:>8.3f}")
    for kind in ours["by_kind"]:
        print(
            f"  {kind:<16} {ours['by_kind'][kind]:>8.3f} {early['by_kind'].get(kind, 0):>8.3f}"
            f"   ({ours['items_by_kind'][kind]} items)"
        )
    print(f"{'precision':<18} {ours['precision']:>8.3f} {early['precision']:>8.3f}")
    print(f"{'insights/task':<18} {ours['insights_per_task']:>8} {early['insights_per_task']:>8}")
    print(
        f"{'s/database p50':<18} {ours['seconds_per_db_median']:>8} {early['seconds_per_db_median']:>8}"
    )
    print(
        f"{'s/database max':<18} {ours['seconds_per_db_max']:>8} {early['seconds_per_db_max']:>8}"
    )
    print(
        f"insights on null databases (false discoveries): {ours['null_insights_per_db']} per database"
    )
    if ours["missed"]:
        print("missed:", json.dumps(ours["missed"]))


if __name__ == "__main__":
    sys.exit(main())
