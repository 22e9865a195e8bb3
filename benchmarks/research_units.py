"""Development cases for tables whose rows are independent units (people, firms, countries):
one table, many measures and indicators, a few planted correlations and group differences.

    python benchmarks/research_units.py [--seeds 0-19] [--budget-turns 60] [--null]

Each seed draws a table of 120 to 2,000 rows and 11 to 36 measures (some skewed, as incomes
and prices are), 3 to 10 indicators (0/1) and a categorical column, with four correlations and
three group differences planted at a strength a textbook would document: their t-statistic
between 4.5 and 9 (so a weak correlation in many rows, a strong one in few). Every other pair
is independent. Printed: recall by kind, and with ``--null`` the insights reported on the same
tables with nothing planted (every one a false discovery).

Econometric and survey data sets have this shape (one row per person, tens of columns); the
generated and real data sets of ``research_recall.py`` have few such tables, so this script
shows what the explorer's budget and bars do with one. Development data: not a held-out
measure.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

from lemmata.agents.research.evaluate import _run_task
from lemmata.agents.research.run import research
from lemmata.agents.research.types import ChecklistItem


def generate(path: Path, seed: int, planted: bool = True) -> list[ChecklistItem]:
    """Write one units table to ``path`` (SQLite); its checklist (empty unless ``planted``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = int(rng.choice([120, 250, 400, 700, 1200, 2000]))
    p = int(rng.integers(11, 37))
    k = int(rng.integers(3, 11))
    x = rng.normal(size=(n, p))
    flags = np.array([rng.random(n) < rng.uniform(0.15, 0.5) for _ in range(k)]).T.astype(int)
    region = rng.choice(["north", "south", "east", "west"], size=n)
    items: list[ChecklistItem] = []
    names = [f"m{i}" for i in range(p)]
    fnames = [f"f{i}" for i in range(k)]
    pairs = rng.permutation(p)
    if planted:
        for j in range(4):
            a, b = int(pairs[2 * j]), int(pairs[2 * j + 1])
            rho = min(0.8, float(rng.uniform(4.5, 9)) / np.sqrt(n)) * rng.choice([-1, 1])
            x[:, b] = rho * x[:, a] + np.sqrt(1 - rho**2) * x[:, b]
            items.append(
                ChecklistItem(
                    id=f"corr{j}",
                    kind="correlation",
                    table="units",
                    columns=[names[a], names[b]],
                    direction="positive" if rho > 0 else "negative",
                )
            )
        for j in range(3):
            col = int(pairs[8 + j])
            f = j % k
            share = flags[:, f].mean()
            d = float(rng.uniform(4.5, 9)) / np.sqrt(n * share * (1 - share))
            d = min(d, 1.5) * rng.choice([-1, 1])
            x[:, col] += d * flags[:, f]
            items.append(
                ChecklistItem(
                    id=f"group{j}",
                    kind="group_difference",
                    table="units",
                    columns=[names[col], fnames[f]],
                    entities=[f"{fnames[f]}=1"],
                    direction="higher" if d > 0 else "lower",
                )
            )
    # Some measures are skewed (incomes, prices): a monotone transform keeps each planted
    # relation's direction.
    for i in range(p):
        if rng.random() < 0.3:
            x[:, i] = np.exp(0.8 * x[:, i]) * 1000
        else:
            x[:, i] = x[:, i] * rng.uniform(1, 20) + rng.uniform(0, 100)
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    cols = ", ".join([*(f"{c} REAL" for c in names), *(f"{c} INTEGER" for c in fnames), "region"])
    con.execute(f"CREATE TABLE units ({cols})")
    rows = [
        [*(round(float(v), 3) for v in x[r]), *(int(v) for v in flags[r]), str(region[r])]
        for r in range(n)
    ]
    con.executemany(f"INSERT INTO units VALUES ({', '.join('?' * (p + k + 1))})", rows)
    con.commit()
    con.close()
    return items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", default="0-19")
    ap.add_argument("--budget-turns", type=int, default=60)
    ap.add_argument("--null", action="store_true", help="also the tables with nothing planted")
    args = ap.parse_args(argv)
    a, _, b = args.seeds.partition("-")
    seeds = range(int(a), int(b or a) + 1)
    found: dict[str, list[int]] = {}
    null: list[int] = []
    with tempfile.TemporaryDirectory(prefix="research-units-") as tmp:
        for seed in seeds:
            db = Path(tmp) / f"units{seed}.sqlite"
            checklist = generate(db, seed)
            task = _run_task(
                f"units{seed}",
                db,
                checklist,
                Path(tmp) / f"units{seed}.out",
                entity=None,
                budget_turns=args.budget_turns,
                budget_seconds=120.0,
                model=None,
                judge_model=None,
            )
            for item in checklist:
                found.setdefault(item.kind, []).append(int(item.id in task.score.matched))
            line = f"  units{seed}: recall {task.score.recall:.2f}, {task.insights} insights"
            if args.null:
                empty = Path(tmp) / f"null{seed}.sqlite"
                generate(empty, seed, planted=False)
                report = research(
                    empty,
                    Path(tmp) / f"null{seed}.out",
                    budget_turns=args.budget_turns,
                    figures=False,
                )
                # Skewed columns are skewed, and shares are what they are: only a relation
                # between columns is false on a table where none was planted.
                null.append(
                    sum(i.kind in ("correlation", "group_difference") for i in report.insights)
                )
                line += f"; null: {null[-1]} insights"
            print(line, file=sys.stderr)
    total = [v for values in found.values() for v in values]
    print(f"recall {statistics.mean(total):.3f} ({len(total)} items)")
    for kind, values in found.items():
        print(f"  {kind:<18} {statistics.mean(values):.3f} ({len(values)} items)")
    if null:
        print(f"insights on null tables (false discoveries): {statistics.mean(null):.2f} per table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
