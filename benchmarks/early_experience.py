"""Early experience against imitation: IL, IL+IWM and IL+SR on the same demonstrations.

    python benchmarks/early_experience.py [--env NAME] [--demos N] [--k K] [--seeds 3] [--json]

For each environment (every configured one when ``--env`` is not given) it collects N expert
demonstrations from the train split with K alternatives at every expert state (environment steps
per second reported), trains the three policies of
:mod:`lemmata.agents.experience.policy` with the same number of updates for each seed, and
evaluates them on the in-distribution (``test-id``) and out-of-distribution (``test-ood``)
splits. It prints success and invalid-action rates as the mean and spread (standard deviation)
over seeds, each method's gain over imitation, and success by task type (``success:<type>`` in
the JSON); ``--json`` prints one object by environment, split and method instead. Progress goes
to stderr. For exploring settings on validation, ``--set FIELD=VALUE`` overrides a field of the
environment's :class:`~lemmata.agents.experience.policy.PolicyConfig` and ``--methods il,sr``
runs only some methods (training is deterministic, so IL's figures can be reused);
``--option KEY=JSON`` overrides an option of the environment's constructor (e.g. its game
parameters). Each method and seed logs its success per split to stderr when it ends.

The settings per environment (task types, episode limits, updates) are chosen with
``--validation``, which evaluates on validation splits carved from the train tasks (the last
tasks of each type, left out of the demonstrations; for TextWorldExpress also the same seeds
with the harder test-ood parameters), never on the test splits.

The second environment is ``coq-tactics`` with the generic tactic menu rather than ScienceWorld:
ScienceWorld's hundreds of admissible actions per state and replayed snapshots make one
training and its collection far slower than the budget, while the tactic environment is truly
another kind (proof states, 24 tactics, most of them failing with an error at any state), and
its gold tactics are often outside the menu, so what the alternatives' outcomes teach (which
menu tactic fails, which closes a goal) is exactly what imitation lacks.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
import time
from dataclasses import dataclass, field, fields, replace
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
    validation: int = 50  # validation tasks per task type, held out from the train split
    every_test: bool = False  # test on every task of the test splits, whatever its type


SETTINGS: dict[str, Setting] = {
    # Chosen on --validation (seeds 0-1; success % validation / validation-ood): IL at the
    # defaults 54.0 / 24.5 beat IL with lr 1e-3 (50.0 / 24.2) and weight decay 1e-2
    # (51.8 / 24.5); with 20 or 80 demonstrations (IL 46.0 / 21.2 and 57.2 / 26.0) IWM and SR
    # gained at most +2.0 on either split. K=8 with SR avoiding only `failure` outcomes was
    # SR's best (54.5 / 26.0, as its outcome loss alone with sr_weight 0; the default
    # stale+failure 50.0 / 26.5, a ranking loss 48.8 / 26.5, K=4 52.5 / 25.2, K=16 49.5 /
    # 26.0); IWM's best at K=8 was the joint loss at weight 0.3 (52.0 / 24.2; staged 49.2 /
    # 23.0; at K=4 weight 0.3 gave 55.5 / 22.5, weight 1 54.2 / 21.5, only the changed words
    # as targets 51.0 / 16.5). No variant reached the issue's +5 points on validation; the
    # test splits, run once with these settings and 3 seeds: IL 52.3 / 22.3, IWM -0.7 / -1.0,
    # SR -1.3 / +1.0 (test-id / test-ood).
    # Then the policy's state: a GRU over the 12 latest (action, observation) steps in place
    # of the bag of the 2 latest observations (PolicyConfig.history="gru"), seeds 0-1:
    # IL 56.0 / 23.0 and 51.5 / 25.0 (mean 53.8 / 24.0, bag-of-words IL this time 54.5 / 24.0
    # and 53.5 / 25.0); IWM weight 0.3 58.5 / 24.5 and 55.0 / 20.0 (+3.0 / -1.8), weight 1
    # 57.5 / 21.5 (seed 0); SR avoiding failure 54.5 / 25.0 and 55.0 / 28.5 (+1.0 / +2.8),
    # avoiding stale and failure 55.0 / 24.0 and 54.5 / 27.0. Kept for all three methods.
    # Test splits, run once (3 seeds, --jobs 3): IL 51.3 ± 0.6 / 23.7 ± 3.5, IWM +4.3 (55.7 ±
    # 4.7) / -3.7 (20.0 ± 3.5), SR +1.3 (52.7 ± 2.1) / +2.0 (25.7 ± 3.5): still short of +5.
    # Then more objectives, on the GRU policy (seeds 0-1 as "seed 0, seed 1", validation /
    # validation-ood; IL 56.0 / 23.0 and 51.5 / 25.0 as above): SR with the progress
    # alternatives sharing the imitation target at weight 0.5 (sr_accept="progress") 54.5 /
    # 24.0 and 53.0 / 27.5 (+0.0 / +1.8); SR with a pairwise contrast between the expert's
    # action and each worse-outcome alternative, margin 0.5 per outcome class
    # (sr_contrast_weight=1) 53.0 / 23.0 and 54.0 / 28.0 (-0.3 / +1.5); IWM at weight 1
    # decaying linearly to 0 with the transitions that change nothing visible capped at 0.2
    # like errors (iwm_decay, cap_unchanged) 52.5 / 20.5 and 48.5 / 15.0 (-3.3 / -6.2: coin
    # falls from 92-100 to 72-76); IWM as the paper stages it (next-state prediction alone for
    # the first 30% of the updates, on the words the action changed, unchanged transitions
    # capped) 50.0 / 19.0 and 47.5 / 24.0 (-5.0 / -2.5); IWM joint at weight 0.1 57.0 / 24.5
    # and 51.5 / 21.5 (+0.5 / -1.0); at 0.3 with only the unchanged transitions capped 54.0 /
    # 19.5 and 55.5 / 16.5 (+1.0 / -6.0: the transitions that change nothing visible are
    # what keeps OOD coin at 60-66, capped it falls to 46-52); at 0.3 with K=16 56.5 / 19.0
    # and 51.0 / 23.0 (+0.0 / -3.0). None beats the settings kept here
    # (SR avoiding failures +1.0 / +2.8, IWM joint at 0.3 +3.0 / -1.8), so the test figures
    # above stand (the same settings train the same policies: training is deterministic).
    # Then loop-breaking at decoding (training unchanged; PolicyConfig's decoding options),
    # the same for all three methods, seeds 0-1 as "seed 0, seed 1" (plain decoding as
    # above: IL 56.0 / 23.0 and 51.5 / 25.0, IWM 58.5 / 24.5 and 55.0 / 20.0, SR 54.5 / 25.0
    # and 55.0 / 28.5). Minus 1 per earlier take of the action from the same observation
    # (repeat_penalty=1): IL 62.0 / 28.0 and 59.0 / 29.0, IWM 64.0 / 32.0 and 62.5 / 29.0
    # (+2.8 / +2.0), SR 61.0 / 26.5 and 58.0 / 30.0 (-1.0 / -0.2). Minus 5 when the action's
    # last try from the same observation was stale (stale_penalty=5): IL 63.0 / 30.5 and
    # 62.5 / 32.0, IWM 64.0 / 34.0 and 65.5 / 32.5 (+2.0 / +2.0), SR 63.5 / 26.5 and 60.0 /
    # 31.0 (-1.0 / -2.5). IL and IWM gain 4-11 points of success from it, SR 5-7 on
    # validation but 1-2 on validation-ood (its outcome head already steers it off some
    # loops): IWM's gain on validation-ood turns positive, but SR's gains fall on both.
    # SR's own decoding, its head's predicted stale outcome avoided (sr_stale_weight=1,
    # beside sr_avoid failure): 55.5 / 24.0 and 53.5 / 26.5 (+0.8 / +1.2 over plain IL,
    # below plain SR); with stale_penalty=5 as well 62.0 / 27.0 and 62.0 / 28.5 (-0.8 / -3.5
    # over IL with stale_penalty=5). Milder: repeat_penalty=0.3 IL 61.0 / 26.5 and 54.5 /
    # 27.0, IWM 62.0 / 26.5 and 59.0 / 25.5 (+2.8 / -0.8), SR 56.5 / 25.5 and 57.5 / 29.0
    # (-0.8 / +0.5); stale_penalty=1 IL 61.5 / 26.5 and 52.0 / 27.0, IWM 60.5 / 26.5 and
    # 58.5 / 22.5 (+2.8 / -2.2), SR 57.5 / 25.5 and 57.0 / 29.5 (+0.5 / +0.8). None gives
    # both IWM and SR a larger gain over IL than the settings kept, so decoding stays plain
    # and the test figures above stand.
    # Then by task type (validation / validation-ood, mean of seeds 0-1; plain settings): IL
    # coin 96.0 / 72.0, cookingworld 6.0 / 1.0, mapreader 71.0 / 23.0, twc 42.0 / 0.0; IWM
    # 95.0 / 63.0, 4.0 / 1.0, 81.0 / 25.0, 47.0 / 0.0; SR 100.0 / 81.0, 2.0 / 0.0, 74.0 / 26.0,
    # 43.0 / 0.0. Cookingworld (about 15 actions with failures on the way, 10 demonstrations)
    # is near 0 for every method and twc-ood is 0 (its train worlds have one room), so half of
    # validation-ood cannot move; IWM's gain on validation is mapreader's and twc's, its loss
    # on validation-ood coin's; SR's gain on validation-ood is coin's. Two more variants:
    # SR with recovery examples (sr_recover="stale,new,invalid": after an alternative that
    # moved nothing away, the expert's action) 56.5 / 28.5 and 53.5 / 25.0 (+1.2 / +2.8;
    # mapreader 79.0 / 30.0, coin 95.0 / 75.0), with sr_avoid="stale,failure" and sr_weight=3
    # as well 49.5 / 27.5 and 50.0 / 28.0 (-4.0 / +3.8: mapreader 61.0); IWM with the outcome
    # classes balanced in its set (iwm_balance) 47.5 / 21.0 and 53.5 / 23.5 (-3.3 / -1.8).
    # None beats the settings kept, so the test figures above stand.
    # Then the navigation gap: twc's train worlds given 2 rooms instead of 1 (--option
    # 'params={"twc": "numLocations=2,numItemsToPutAway=2,includeDoors=0,limitInventorySize=0"}';
    # every one of the first 300 train and test-id gold paths then walks, and completes),
    # seeds 0-1, validation / validation-ood: IL 50.0 / 25.0 and 46.5 / 23.0, IWM 50.0 / 22.5
    # and 49.0 / 25.0 (+1.2 / -0.2), SR 47.5 / 22.0 and 48.0 / 22.5 (-0.5 / -1.8). twc
    # validation falls to IL 12.0, IWM 17.0, SR 13.0 (the 2-room worlds are harder) and
    # twc validation-ood stays 0 for every method: walking demonstrations alone do not open
    # the 3-room, 4-item worlds. Not kept (the 3-room variant was stopped unfinished).
    # What does fail there: an IL policy (seed 0) on 4 twc validation-ood tasks walks
    # between the rooms well but 45 of its 53 placements put an item where it does not go
    # (the score falls), so twc-ood is a gap in knowing each item's place (4 items to place
    # from 10 demonstrations of 2), not in navigation.
    # IWM as a first stage then imitation (iwm_schedule=stage, 30% of the updates, all
    # words as targets, nothing capped) on the GRU policy: 54.0 / 21.5 and 52.5 / 23.0
    # (-0.5 / -1.8; the joint loss kept: +3.0 / -1.8). SR leaning harder on its outcome head
    # at decoding (sr_weight=2, avoiding failure): 57.0 / 26.0 and 54.5 / 29.0 (+2.0 / +3.5
    # over IL 56.0 / 23.0 and 51.5 / 25.0, re-run with today's code: the same); sr_weight=3
    # 56.0 / 25.5 and 53.0 / 28.5 (+0.8 / +3.0). sr_weight=2 kept. Test splits, 3 seeds,
    # run once with it (test-id / test-ood): IL 52.3 ± 1.5 / 23.7 ± 3.5, SR 52.0 ± 3.6 /
    # 25.7 ± 2.5 (-0.3 / +2.0); with today's code the earlier SR setting (sr_weight=1)
    # gives 51.7 / 26.0 (-0.7 / +2.3; recorded above as 52.7 / 25.7, IL's test-id then
    # 51.3: later commits moved the figures by about a point), so the validation gain of
    # sr_weight=2 does not carry to test. IWM (unchanged) re-run on test with today's code:
    # 56.7 ± 3.8 / 21.7 ± 4.2 (+4.3 / -2.0). Collection, env steps/s, went from 137 to 613
    # across these runs with the machine's load (2 cores shared with up to 18 busy processes).
    # Then item placement: twc's test items are never seen in train (0 of 29 test-id and 0 of
    # 43 test-ood items; 16 of 19 and 17 of 19 containers are), so to the bag of words every
    # unseen item is one unknown word. PolicyConfig.phrases="minilm" gives each action frozen
    # MiniLM embeddings of its object and destination (all three methods), and the
    # environment's score_line option puts "Your score has just gone up/down." in the text of
    # the step that changed the score, so the next states IWM predicts and SR's outcomes say
    # when a placement was wrong (the rollouts hold about 130 wrong and 15 right placements
    # among the alternatives of 10 twc demonstrations). Validation, seeds 0-1 ("seed 0, seed
    # 1", validation / validation-ood): phrases alone: IL 59.0 / 23.0 and 54.0 / 26.5, IWM
    # 57.0 / 24.5 and 56.5 / 22.5 (+0.3 / -1.3), SR 52.0 / 22.0 and 52.0 / 22.0 (-4.5 /
    # -2.8); twc 49 / 0 for IL (42 / 0 without phrases), IWM 50 / 0, SR 45 / 0. Phrases and
    # the score line: IL 53.0 / 23.0 and 50.0 / 25.0, IWM 56.5 / 24.5 and 51.0 / 26.0 (+2.3 /
    # +1.2), SR 55.5 / 24.5 and 53.0 / 26.0 (+2.7 / +1.2): the first setting where both
    # methods gain on both validation splits, though IL itself falls 5 points with the score
    # line and twc validation-ood stays 0 for every method (twc 39 / 41 / 46 on validation).
    # Kept (chosen before any test figure was seen). Test splits, 3 seeds, run once (--jobs
    # 3; test-id / test-ood): IL 51.0 ± 1.0 / 25.7 ± 2.9, IWM 52.0 ± 2.6 / 23.7 ± 3.8 (+1.0 /
    # -2.0), SR 54.0 ± 1.0 / 24.0 ± 4.4 (+3.0 / -1.7): the validation gains do not carry and
    # the target is not met. By type (IL / IWM / SR): twc test-id 33.3 / 25.3 / 29.3, twc
    # test-ood 0 / 0 / 0; mapreader test-id 54.7 / 64.0 / 66.7; coin test-ood 80.0 / 74.7 /
    # 78.7. So the embeddings and the observed score drops did not teach where unseen items
    # go: on test-id twc the methods that learn from the wrong placements do worse than IL.
    # Then loop-breaking from the episode's own states (PolicyConfig.loop_penalty=100, the
    # same for all three methods: an action whose last try from the current view lowered the
    # score, or led back to this view with no score gained, at once or through undoing
    # actions such as open/close and take/put, is not taken again until the view changes).
    # Validation, seeds 0-1 ("seed 0, seed 1", validation / validation-ood): IL 69.0 / 32.0
    # and 67.5 / 34.5 (plain 53.0 / 23.0 and 50.0 / 25.0), IWM 66.0 / 34.0 and 63.5 / 36.5
    # (-3.5 / +2.0), SR 67.5 / 33.0 and 68.0 / 36.5 (-0.5 / +1.5). Every method gains
    # 12-17 points, IL the most, so the gains over IL do not widen (plain: +2.3 / +1.2 and
    # +2.7 / +1.2): not kept as the default. Test splits, 3 seeds, run once (started beside
    # the validation run for time; the choice above is validation's): IL 68.3 ± 3.5 / 32.3 ±
    # 0.6, IWM 69.0 ± 4.0 / 30.7 ± 2.5 (+0.7 / -1.7), SR 69.3 ± 1.5 / 32.7 ± 3.1 (+1.0 /
    # +0.3). By type (IL / IWM / SR): twc test-id 60.0 / 58.7 / 56.0 (plain 33.3 / 25.3 /
    # 29.3), twc test-ood 0 / 0 / 0, mapreader test-ood 29.3 / 24.0 / 32.0, cookingworld
    # test-id 20.0 / 21.3 / 24.0. twc-ood stays 0 (not traced yet: whether the search that
    # loop-breaking makes of the wrong placements runs out of its 50 steps, or never walks
    # to the other rooms, is open).
    "textworld-express": Setting(
        names=("coin", "mapreader", "twc", "cookingworld"),
        demos=40,
        k=8,
        evals=25,
        max_steps=50,
        config=PolicyConfig(
            updates=800,
            iwm_weight=0.3,
            sr_avoid="failure",
            sr_weight=2.0,
            history="gru",
            phrases="minilm",
        ),
        options={"verbose": True, "score_line": True},
    ),
    # coq-tactics keeps the settings it had (validation carves 2 theorems per family from
    # train, 10 in all, too few to choose by). Its test splits were enlarged so that one
    # theorem weighs at most 3 points (test-id 12 -> 46, test-ood 17 -> 34; see proof_env),
    # then run once, 3 seeds: IL 47.8 ± 16.4 / 50.0 ± 21.2 (seeds 63.0, 30.4, 50.0 /
    # 26.5, 67.6, 55.9), IWM +0.0 (47.8 ± 3.8) / +3.9 (53.9 ± 1.7), SR +21.0 (68.8 ± 3.3) /
    # +9.8 (59.8 ± 1.7) (test-id / test-ood). IL's spread is its own: the expert's tactics
    # are mostly outside the menu, so imitation learns the menu only as negatives and its
    # choice among menu tactics varies with the seed.
    "coq-tactics": Setting(
        names=("arith", "bool", "lists", "logic", "order"),
        demos=37,
        k=8,
        evals=100,
        max_steps=12,
        config=PolicyConfig(updates=800),
        options={"menu": True, "max_steps": 12},
        validation=2,
        every_test=True,
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


def validation_tasks(env: TextEnvironment, setting: Setting) -> dict[str, list[Task]]:
    """Validation splits carved from the train split: the last ``setting.validation`` train
    tasks of each type (the demonstrations leave them out). ``validation`` has the train
    split's parameters; ``validation-ood``, where the environment has a harder variant of its
    train tasks (TextWorldExpress's ``test-ood`` parameters), the same tasks made harder."""
    out: dict[str, list[Task]] = {"validation": [], "validation-ood": []}
    harder = getattr(env, "split_params", None)
    for name in setting.names:
        held = env.tasks("train", [name])[-setting.validation :]
        out["validation"] += held
        params = harder(name, "test-ood") if harder else None
        if params is not None:
            out["validation-ood"] += [
                Task(t.env, t.name, t.variation, "train", params) for t in held
            ]
    return {split: tasks for split, tasks in out.items() if tasks}


def demonstrations(
    env: TextEnvironment, setting: Setting, demos: int, unseen: set[Task]
) -> list[Task]:
    """The first ``demos`` train tasks taken in turn from each task type (so that types with
    fewer tasks are used up whole), leaving out the validation tasks."""
    per_type = [
        [t for t in env.tasks("train", [name], limit=demos + setting.validation) if t not in unseen]
        for name in setting.names
    ]
    taken: list[Task] = []
    for rank in range(max(len(p) for p in per_type)):
        taken += [p[rank] for p in per_type if rank < len(p)]
    return sorted(taken[:demos], key=lambda t: setting.names.index(t.name))


def summary(values: list[float]) -> dict[str, Any]:
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return {"mean": statistics.fmean(values), "spread": spread, "seeds": values}


Run = tuple[str, str, int, list[ExpertStep], dict[str, list[Task]], PolicyConfig, dict[str, Any]]


def _train_and_evaluate(
    run: Run, env: TextEnvironment | None = None
) -> dict[str, dict[str, float]]:
    """One method and seed: train on the steps, then success, invalid-action rate and mean
    score (percentages) on each split's tasks, overall and by task type; opens the environment
    when not given one."""
    name, method, seed, steps, tests, config, options = run
    setting = SETTINGS[name]
    start = time.perf_counter()
    policy = train_policy(steps, method, seed=seed, config=config)  # type: ignore[arg-type]
    log(f"  {method} seed {seed}: trained in {time.perf_counter() - start:.0f}s")
    if env is None:
        with open_environment(name, **options) as own:
            out = _evaluate_all(policy, own, setting, tests)
    else:
        out = _evaluate_all(policy, env, setting, tests)
    figures = ", ".join(f"{split} {row['success']:.1f}" for split, row in out.items())
    log(f"  {method} seed {seed}: success % {figures}")
    return out


def _evaluate_all(
    policy: Any, env: TextEnvironment, setting: Setting, tests: dict[str, list[Task]]
) -> dict[str, dict[str, float]]:
    out = {}
    for split, tasks in tests.items():
        got = evaluate(policy, env, tasks, max_steps=setting.max_steps)
        out[split] = {
            "success": 100 * got.success_rate,
            "invalid": 100 * got.invalid_rate,
            "score": 100 * got.mean_score,
        }
        for name in sorted({t.task.name for t in got.tasks}):
            mine = [t.success for t in got.tasks if t.task.name == name]
            out[split][f"success:{name}"] = 100 * sum(mine) / len(mine)
    return out


def run_environment(
    name: str,
    demos: int | None,
    k: int | None,
    seeds: int,
    validation: bool = False,
    jobs: int = 1,
    overrides: dict[str, Any] | None = None,
    methods: tuple[str, ...] | None = None,
    env_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    setting = SETTINGS[name]
    options = {**setting.options, **(env_options or {})}
    demos = setting.demos if demos is None else demos
    k = setting.k if k is None else k
    log(f"{name}: {demos} demonstrations, K={k}, {seeds} seeds")
    with open_environment(name, **options) as env:
        held = validation_tasks(env, setting) if validation else {}
        unseen = {t for tasks in held.values() for t in tasks}
        train = demonstrations(env, setting, demos, unseen)
        steps, rate, errors = collect(env, train, k)
        if validation:
            tests = held
        else:
            tests = {
                split: env.tasks(
                    split, None if setting.every_test else list(setting.names), limit=setting.evals
                )
                for split in ("test-id", "test-ood")
            }
        chosen = methods or METHODS
        results: dict[str, dict[str, dict[str, list[float]]]] = {
            split: {m: {} for m in chosen} for split in tests
        }
        config = replace(setting.config, **(overrides or {}))
        runs: list[Run] = [
            (name, method, seed, steps, tests, config, options)
            for method in chosen
            for seed in range(seeds)
        ]
        if jobs > 1:
            # each worker opens its own environment; spawned, so that no JVM or coqtop is forked
            context = multiprocessing.get_context("spawn")
            with context.Pool(jobs, initializer=torch.set_num_threads, initargs=(1,)) as pool:
                outcomes = pool.map(_train_and_evaluate, runs, chunksize=1)
        else:
            outcomes = [_train_and_evaluate(run, env) for run in runs]
        for (_, method, *_), by_split in zip(runs, outcomes, strict=True):
            for split, figures in by_split.items():
                for key, value in figures.items():
                    results[split][method].setdefault(key, []).append(value)
    return {
        "demonstrations": len(train),
        "expert_states": len(steps),
        "k": k,
        "seeds": seeds,
        "updates": config.updates,
        "overrides": overrides or {},
        "env_options": env_options or {},
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
    overrides = "".join(f", {k}={v}" for k, v in out.get("overrides", {}).items())
    print(
        f"\n{name}: {out['demonstrations']} demonstrations ({out['expert_states']} expert states), "
        f"K={out['k']}, {out['updates']} updates, {out['seeds']} seeds{overrides}; "
        f"collection {out['collection_steps_per_s']:.0f} env steps/s"
    )
    print(f"{'split':<14} {'method':<7} {'success %':>14} {'gain vs IL':>11} {'invalid %':>14}")
    for split, by_method in out["splits"].items():
        base = by_method["il"]["success"]["mean"] if "il" in by_method else None
        for method, row in by_method.items():
            s, inv = row["success"], row["invalid"]
            gain = "" if method == "il" or base is None else f"{s['mean'] - base:+.1f}"
            print(
                f"{split:<14} {method:<7} {s['mean']:>7.1f} ± {s['spread']:<4.1f} {gain:>11} "
                f"{inv['mean']:>7.1f} ± {inv['spread']:<4.1f}"
            )
    keys = {k for m in out["splits"].values() for row in m.values() for k in row if ":" in k}
    types = sorted(k.split(":", 1)[1] for k in keys)
    if not types:
        return
    print("success % by task type, mean over seeds:")
    print(f"{'split':<14} {'method':<7} " + " ".join(f"{t[:12]:>12}" for t in types))
    for split, by_method in out["splits"].items():
        for method, row in by_method.items():
            cells = [row.get(f"success:{t}") for t in types]
            print(
                f"{split:<14} {method:<7} "
                + " ".join("{:>12}".format("" if c is None else f"{c['mean']:.1f}") for c in cells)
            )


def _override(text: str) -> tuple[str, Any]:
    """``field=value`` for a :class:`PolicyConfig` field, the value read as the field's type."""
    key, sep, value = text.partition("=")
    kinds = {f.name: f.type for f in fields(PolicyConfig)}
    if not sep or key not in kinds:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give field=value, field one of {sorted(kinds)}"
        )
    kind = str(kinds[key])
    if kind == "bool":
        return key, value.lower() in {"1", "true", "yes"}
    if kind in {"int", "float"}:
        return key, int(value) if kind == "int" else float(value)
    return key, value


def _env_option(text: str) -> tuple[str, Any]:
    """``key=JSON`` for an option of the environment's constructor (e.g.
    ``params={"twc": "numLocations=2"}``); a value that is not JSON is taken as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"{text!r}: give key=value, the value as JSON")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", choices=sorted(SETTINGS), help="one environment (default: every one)")
    ap.add_argument("--demos", type=int, help="expert demonstrations (default: per environment)")
    ap.add_argument(
        "--k", type=int, help="alternatives per expert state (default: per environment)"
    )
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="train and evaluate the methods and seeds in this many processes (one torch "
        "thread each; the figures are the same as with one)",
    )
    ap.add_argument(
        "--validation",
        action="store_true",
        help="evaluate on validation splits carved from the train tasks instead of the test "
        "splits (for choosing settings)",
    )
    ap.add_argument(
        "--set",
        type=_override,
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a PolicyConfig field of the environment's settings (with --validation)",
    )
    ap.add_argument("--methods", help="comma-separated methods to run (default: all)")
    ap.add_argument(
        "--option",
        type=_env_option,
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="override an option of the environment's constructor (with --validation)",
    )
    args = ap.parse_args()
    torch.set_num_threads(1)  # the fastest on a shared 2-core machine, and deterministic
    names = [args.env] if args.env else list(SETTINGS)
    report = {
        name: run_environment(
            name,
            args.demos,
            args.k,
            args.seeds,
            args.validation,
            args.jobs,
            dict(args.set),
            tuple(args.methods.split(",")) if args.methods else None,
            dict(args.option),
        )
        for name in names
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, out in report.items():
        print_table(name, out)


if __name__ == "__main__":
    main()
