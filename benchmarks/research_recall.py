"""Checklist recall of the research agent on generated and real databases, offline.

    python benchmarks/research_recall.py [--seeds 1000-1019] [--shape-seeds 1000-1019]
        [--budget-turns 60] [--json] [--no-shapes] [--no-real] [--real-only] [--no-real2]

Five sets, one table each:

(a) the original generator (:mod:`lemmata.agents.research.synthetic`): each seed generates one
    database (three linked tables in one of three domains, with one planted insight of every
    kind, two planted outliers and three facts about one entity; seeds 1000-1019 were not used
    while the explorer was built, which used 0-99);
(b) the second generator (:mod:`lemmata.agents.research.synthetic2`), the same kinds of facts
    in other schema shapes (text time keys, a one-row-per-month table, a wide table, integer
    codes with lookup tables, NULLs, mixed units); it was developed on its seeds 0-9 (and
    null databases 10-79), and 1000-1019 (chosen before any result was seen) are held out;
(c) real data sets with published facts (below);
(d) real data sets, second batch (:mod:`lemmata.agents.research.realdata_sealed`: 20 other
    data sets, 43 facts), sealed for two runs at 0.442 and development data since, so (d) is
    an in-sample figure too (``--no-real2`` skips it);
(e) real data sets, third batch (:mod:`lemmata.agents.research.realdata3`: 17 data sets from
    packages the other batches do not read, 47 facts), development data from the start
    (``--no-real3`` skips it; ``--real-only`` runs (c), (d) and (e)).

Two tasks run per generated database: the whole database against its checklist, and "analyse entity X" against the
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
``--real-only`` runs only them), and the facts missed. All of them are development data: half
of them (``realdata.HELD_OUT``, every second name) were once held out and scored three times
with their misses sealed (recall 0.792 each time); that half has been development data since,
so (c) is an in-sample figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from lemmata.agents.research import realdata3, realdata_sealed
from lemmata.agents.research.evaluate import SuiteResult, _run_task, evaluate_generated
from lemmata.agents.research.realdata import available, evaluate_real


def _seeds(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", default="1000-1019", help="(a) the original generator's seeds")
    ap.add_argument("--shape-seeds", default="1000-1019", help="(b) the second generator's seeds")
    ap.add_argument("--no-shapes", action="store_true", help="skip (b), the second generator")
    ap.add_argument("--no-original", action="store_true", help="skip (a), the original generator")
    ap.add_argument("--budget-turns", type=int, default=60)
    ap.add_argument(
        "--early-turns", type=int, default=3, help="the budgeted run beside (a); 0 skips it"
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-real", action="store_true", help="skip the real data sets")
    ap.add_argument("--real-only", action="store_true", help="only the real data sets")
    ap.add_argument("--no-real2", action="store_true", help="skip (d), the second real batch")
    ap.add_argument("--no-real3", action="store_true", help="skip (e), the third real batch")
    args = ap.parse_args(argv)
    seeds = _seeds(args.seeds)
    shape_seeds = _seeds(args.shape_seeds)
    results = {}
    with tempfile.TemporaryDirectory(prefix="research-bench-") as tmp:
        runs: list[tuple[str, str, list[int], int, bool]] = []
        if not args.real_only:
            if not args.no_original:
                runs.append(("ours", "original", seeds, args.budget_turns, True))
            if args.early_turns > 0 and not args.no_original:
                runs.append(("early_stop", "original", seeds, args.early_turns, False))
            if not args.no_shapes:
                runs.append(("shapes", "shapes", shape_seeds, args.budget_turns, True))
        for label, style, run_seeds, turns, null in runs:
            started = time.monotonic()

            def progress(task: object, _label: str = label) -> None:
                if not args.json:
                    print(
                        f"  [{_label}] {task.name}: recall {task.score.recall:.2f}, "  # type: ignore[attr-defined]
                        f"{task.insights} insights, {task.seconds:.1f} s",  # type: ignore[attr-defined]
                        file=sys.stderr,
                    )

            suite = evaluate_generated(
                run_seeds,
                Path(tmp) / label,
                budget_turns=turns,
                budget_seconds=600,
                null_databases=null,
                on_task=progress,
                style=style,
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
            results["real"] = _real_dict(real_suite, time.monotonic() - started)
        if not args.no_real and not args.no_real2 and realdata_sealed.available():
            started = time.monotonic()
            second = _batch(realdata_sealed, Path(tmp) / "real2", args.budget_turns)
            results["real2"] = _real_dict(second, time.monotonic() - started)
        if not args.no_real and not args.no_real3 and realdata3.available():
            started = time.monotonic()
            third = _batch(realdata3, Path(tmp) / "real3", args.budget_turns)
            results["real3"] = _real_dict(third, time.monotonic() - started)
    if args.json:
        print(json.dumps(results))
        return 0
    if "ours" in results:
        print("(a) the original generator")
        _print_generated(args.seeds, len(seeds), results["ours"], results.get("early_stop"))
    if "shapes" in results:
        print("\n(b) the second generator (other schema shapes)")
        _print_generated(args.shape_seeds, len(shape_seeds), results["shapes"], None)
    if "real" in results:
        _print_real("(c) real data sets", results["real"])
    if "real2" in results:
        _print_real(
            "(d) real data sets, second batch (sealed for two runs at 0.442, development since)",
            results["real2"],
        )
    if "real3" in results:
        _print_real("(e) real data sets, third batch (development)", results["real3"])
    _print_summary(results)
    return 0


def _batch(module: ModuleType, work: Path, budget_turns: int) -> SuiteResult:
    """(d) or (e): the data sets of a batch module (``realdata_sealed``, ``realdata3``),
    researched and scored as :func:`~lemmata.agents.research.realdata.evaluate_real` does it."""
    suite = SuiteResult()
    for name in module.available():
        suite.tasks.append(
            _run_task(
                name,
                module.build(name, work / f"{name}.sqlite"),
                module.DATASETS[name].checklist,
                work / f"{name}.out",
                entity=None,
                budget_turns=budget_turns,
                budget_seconds=120.0,
                model=None,
                judge_model=None,
            )
        )
    return suite


def _real_dict(suite: SuiteResult, wall: float) -> dict[str, Any]:
    """A real-data suite's totals, with each data set's facts found."""
    return suite.to_dict() | {
        "datasets": len(suite.tasks),
        "seconds_per_db_median": round(statistics.median(t.seconds for t in suite.tasks), 2),
        "seconds_per_db_max": round(max(t.seconds for t in suite.tasks), 2),
        "per_dataset": {
            t.name: {
                "found": len(t.score.matched),
                "facts": len(t.score.matched) + len(t.score.missed),
                "insights": t.insights,
                "seconds": round(t.seconds, 2),
            }
            for t in suite.tasks
        },
        "wall_s": round(wall, 1),
    }


def _print_real(title: str, real: dict[str, Any]) -> None:
    """One real-data table: per data set, recall by kind, precision and the facts missed."""
    print(
        f"\n{title}: {real['datasets']} ({real['items']} published facts), "
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


def _print_summary(results: dict[str, Any]) -> None:
    """The sets side by side, with the targets of issue 19."""
    sets = [
        ("(a) original", "ours"),
        ("(b) second generator", "shapes"),
        ("(c) real data", "real"),
        ("(d) real, 2nd batch", "real2"),
        ("(e) real, 3rd batch", "real3"),
    ]
    shown = [(name, results[key]) for name, key in sets if key in results]
    if len(shown) < 2:
        return
    print(
        f"\n{'':<22} {'recall':>7} {'min kind':>9} {'precision':>9} {'null FD/db':>10} {'s/db':>6}"
    )
    for name, r in shown:
        worst = min(r["by_kind"].values()) if r["by_kind"] else 0.0
        null = r.get("null_insights_per_db")
        print(
            f"{name:<22} {r['recall']:>7.3f} {worst:>9.3f} {r['precision']:>9.3f} "
            f"{'-' if null is None else null:>10} {r['seconds_per_db_median']:>6}"
        )
    print(
        "targets: (a) recall >= 0.9; (b), (c) >= 0.85 and every kind >= 0.7 ((d), (e): none "
        "set); "
        "<= 0.1 null FD/db; < 60 s/db"
    )


def _print_generated(
    seed_text: str, n: int, ours: dict[str, Any], early: dict[str, Any] | None
) -> None:
    """One table: the full run, beside the 3-turn run when there is one."""
    print(f"{n} generated databases (seeds {seed_text}), {ours['tasks']} tasks, offline")

    def row(label: str, mine: Any, theirs: Any, fmt: str = ">8", tail: str = "") -> None:
        other = "" if early is None else f" {theirs:{fmt}}"
        print(f"{label:<18} {mine:{fmt}}{other}{tail}")

    print(f"{'':<18} {'ours':>8}" + ("" if early is None else f" {'3 turns':>8}"))
    e = early or {}
    row("recall", ours["recall"], e.get("recall"), ">8.3f")
    for kind in ours["by_kind"]:
        row(
            f"  {kind}",
            ours["by_kind"][kind],
            e.get("by_kind", {}).get(kind, 0),
            ">8.3f",
            f"   ({ours['items_by_kind'][kind]} items)",
        )
    row("precision", ours["precision"], e.get("precision"), ">8.3f")
    row("insights/task", ours["insights_per_task"], e.get("insights_per_task"))
    row("s/database p50", ours["seconds_per_db_median"], e.get("seconds_per_db_median"))
    row("s/database max", ours["seconds_per_db_max"], e.get("seconds_per_db_max"))
    print(
        f"insights on null databases (false discoveries): {ours['null_insights_per_db']} per database"
    )
    if ours["missed"]:
        print("missed:", json.dumps(ours["missed"]))


if __name__ == "__main__":
    sys.exit(main())
