"""What the planted-fact benchmarks share (``research_wide.py``, ``research_series.py``,
``research_designs.py``): their command line, seed ranges, one exploration that records the
hypotheses it tested, and running a development and a held-out set of seeds side by side.

Each script keeps what is its own: its generator, how a planted fact is matched, where a miss
was lost, and its printout."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lemmata.agents.research.run import research

__all__ = ["explore", "parse_seeds", "run_sets", "set_parser"]


def parse_seeds(text: str) -> list[int]:
    """``'0-19'`` or ``'7'`` -> the seeds; anything else ends the run with a message."""
    a, _, b = text.partition("-")
    if not a.isdigit() or (b and not b.isdigit()):
        raise SystemExit(f"seeds are written 0-19 or 7, not {text!r}")
    return list(range(int(a), int(b or a) + 1))


def set_parser(doc: str | None, *, null_help: str) -> argparse.ArgumentParser:
    """The options every planted-fact benchmark takes; a script adds its own before parsing."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", default="0-19", help="development seeds")
    ap.add_argument("--held-out", default="1000-1019", help="held-out seeds ('' skips them)")
    ap.add_argument("--budget-turns", type=int, default=60)
    ap.add_argument("--no-null", action="store_true", help=null_help)
    ap.add_argument("--verbose", action="store_true", help="each miss and why")
    ap.add_argument("--json", action="store_true")
    return ap


def explore(path: Path, out: Path, budget_turns: int) -> tuple[Any, set[str]]:
    """Research the database at ``path``; the report and the keys of every hypothesis tested."""
    tested: set[str] = set()

    def step(state: Any) -> None:
        tested.update(state.get("tested", []))

    report = research(
        path, out, budget_turns=budget_turns, budget_seconds=300.0, figures=False, on_step=step
    )
    return report, tested


def run_sets(
    args: argparse.Namespace,
    prefix: str,
    run_set: Callable[[list[int], Path], dict],
    show: Callable[[str, dict], None],
) -> int:
    """Run the development seeds and the held-out ones, each in its own folder, and print
    both (or one JSON object)."""
    if args.budget_turns < 1:
        raise SystemExit("--budget-turns must be at least 1")
    results = {}
    sets = [("development", args.seeds), ("held out", args.held_out)]
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for label, text in sets:
            if not text:
                continue
            work = Path(tmp) / label.replace(" ", "_")
            work.mkdir()
            results[label] = run_set(parse_seeds(text), work)
    if args.json:
        print(json.dumps(results))
        return 0
    for label, text in sets:
        if label in results:
            show(f"\n{label} (seeds {text})", results[label])
    return 0
