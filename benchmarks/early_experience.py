"""Early experience against imitation: IL, IL+IWM and IL+SR on the same demonstrations.

    python benchmarks/early_experience.py [--env NAME] [--demos N] [--k K] [--seeds 3] [--json]

For each environment (every configured one when ``--env`` is not given) it collects N expert
demonstrations from the train split with K alternatives at every expert state (environment steps
per second reported), trains the three policies of
:mod:`lemmata.agents.experience.policy` with the same number of updates for each seed, and
evaluates them on the in-distribution (``test-id``) and out-of-distribution (``test-ood``)
splits. It prints success and invalid-action rates as the mean and spread (standard deviation)
over seeds, and each method's gain over imitation; ``--json`` prints one object by environment,
split and method instead. Progress goes to stderr.

The settings per environment (task types, episode limits, updates) were chosen on a validation
split carved from the train tasks, never on the test splits.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from lemmata.agents.experience.policy import METHODS, PolicyConfig, evaluate, train_policy
from lemmata.agents.experience.records import ExpertStep
from lemmata.agents.experience.rollouts import roll_out
from lemmata.environments.text import Task, TextEnvironment, open_environment


@dataclass(frozen=True)
class Setting:
    """How one environment is benchmarked."""

    names: tuple[str, ...]
    demos: int
    k: int
    evals: int  # test tasks per task type and split
    max_steps: int
    config: PolicyConfig
    options: dict[str, Any] = field(default_factory=dict)


SETTINGS: dict[str, Setting] = {
    "textworld-express": Setting(
        names=("coin", "mapreader", "twc", "cookingworld"),
        demos=40,
        k=4,
        evals=25,
        max_steps=50,
        config=PolicyConfig(updates=800),
        options={"verbose": True},
    ),
    "scienceworld": Setting(
        names=("find-living-thing", "find-non-living-thing", "find-plant", "find-animal"),
        demos=20,
        k=3,
        evals=5,
        max_steps=20,
        config=PolicyConfig(updates=800),
        options={"step_limit": 40},
    ),
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def collect(env: TextEnvironment, tasks: list[Task], k: int) -> tuple[list[ExpertStep], float, int]:
    """The rollouts' records, environment steps per second, and tasks that ended in an error."""
    steps: list[ExpertStep] = []
    env_steps, errors = 0, 0
    start = time.perf_counter()
    for i, task in enumerate(tasks, 1):
        out = roll_out(env, task, k, random.Random(task.id))
        steps += out.steps
        env_steps += out.env_steps
        errors += out.error is not None
        if i % 10 == 0 or i == len(tasks):
            log(f"  collected {i}/{len(tasks)} demonstrations ({len(steps)} expert states)")
    elapsed = time.perf_counter() - start
    return steps, env_steps / elapsed if elapsed else 0.0, errors


def summary(values: list[float]) -> dict[str, Any]:
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": statistics.fmean(values), "spread": spread, "seeds": values}


def run_environment(name: str, demos: int | None, k: int | None, seeds: int) -> dict[str, Any]:
    setting = SETTINGS[name]
    demos = setting.demos if demos is None else demos
    k = setting.k if k is None else k
    log(f"{name}: {demos} demonstrations, K={k}, {seeds} seeds")
    with open_environment(name, **setting.options) as env:
        per_type = math.ceil(demos / len(setting.names))
        train = env.tasks("train", list(setting.names), limit=per_type)[:demos]
        steps, rate, errors = collect(env, train, k)
        tests = {
            split: env.tasks(split, list(setting.names), limit=setting.evals)
            for split in ("test-id", "test-ood")
        }
        results: dict[str, dict[str, dict[str, list[float]]]] = {
            split: {m: {"success": [], "invalid": [], "score": []} for m in METHODS}
            for split in tests
        }
        for method in METHODS:
            for seed in range(seeds):
                start = time.perf_counter()
                policy = train_policy(steps, method, seed=seed, config=setting.config)
                log(f"  {method} seed {seed}: trained in {time.perf_counter() - start:.0f}s")
                for split, tasks in tests.items():
                    got = evaluate(policy, env, tasks, max_steps=setting.max_steps)
                    row = results[split][method]
                    row["success"].append(100 * got.success_rate)
                    row["invalid"].append(100 * got.invalid_rate)
                    row["score"].append(100 * got.mean_score)
    return {
        "demonstrations": len(train),
        "expert_states": len(steps),
        "k": k,
        "seeds": seeds,
        "updates": setting.config.updates,
        "task_types": list(setting.names),
        "collection_steps_per_s": rate,
        "collection_errors": errors,
        "test_tasks": {split: len(tasks) for split, tasks in tests.items()},
        "splits": {
            split: {m: {key: summary(v) for key, v in row.items()} for m, row in by_method.items()}
            for split, by_method in results.items()
        },
    }


def print_table(name: str, out: dict[str, Any]) -> None:
    print(
        f"\n{name}: {out['demonstrations']} demonstrations ({out['expert_states']} expert states), "
        f"K={out['k']}, {out['updates']} updates, {out['seeds']} seeds; "
        f"collection {out['collection_steps_per_s']:.0f} env steps/s"
    )
    print(f"{'split':<9} {'method':<7} {'success %':>14} {'gain vs IL':>11} {'invalid %':>14}")
    for split, by_method in out["splits"].items():
        base = by_method["il"]["success"]["mean"]
        for method, row in by_method.items():
            s, inv = row["success"], row["invalid"]
            gain = "" if method == "il" else f"{s['mean'] - base:+.1f}"
            print(
                f"{split:<9} {method:<7} {s['mean']:>7.1f} ± {s['spread']:<4.1f} {gain:>11} "
                f"{inv['mean']:>7.1f} ± {inv['spread']:<4.1f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", choices=sorted(SETTINGS), help="one environment (default: every one)")
    ap.add_argument("--demos", type=int, help="expert demonstrations (default: per environment)")
    ap.add_argument(
        "--k", type=int, help="alternatives per expert state (default: per environment)"
    )
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    torch.set_num_threads(1)  # the fastest on a shared 2-core machine, and deterministic
    names = [args.env] if args.env else list(SETTINGS)
    report = {name: run_environment(name, args.demos, args.k, args.seeds) for name in names}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, out in report.items():
        print_table(name, out)


if __name__ == "__main__":
    main()
