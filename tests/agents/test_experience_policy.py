"""The experience policy on real TextWorldExpress games, with tiny budgets."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("textworld_express")

from lemmata.agents.experience.policy import (  # noqa: E402
    METHODS,
    OUTCOMES,
    Policy,
    PolicyConfig,
    action_parts,
    evaluate,
    looped,
    outcome_class,
    train_policy,
)
from lemmata.agents.experience.records import ExpertStep, Outcome  # noqa: E402
from lemmata.agents.experience.rollouts import roll_out  # noqa: E402
from lemmata.environments.text import Task  # noqa: E402
from lemmata.environments.textworld_express import TextWorldExpress  # noqa: E402
from lemmata.errors import DataSourceError, UsageError  # noqa: E402

SMALL = PolicyConfig(dim=32, hidden=64, updates=150)


@pytest.fixture(scope="module")
def env() -> Iterator[TextWorldExpress]:
    torch.set_num_threads(1)
    e = TextWorldExpress(games=["coin"], step_limit=20, verbose=True)
    with e:
        yield e


@pytest.fixture(scope="module")
def train_tasks(env: TextWorldExpress) -> list[Task]:
    return env.tasks("train", ["coin"], limit=12)


@pytest.fixture(scope="module")
def steps(env: TextWorldExpress, train_tasks: list[Task]) -> list[ExpertStep]:
    out: list[ExpertStep] = []
    for task in train_tasks:
        out += roll_out(env, task, 3, random.Random(task.variation)).steps
    assert out and all(s.alternatives for s in out)
    return out


@pytest.fixture(scope="module")
def policies(steps: list[ExpertStep]) -> dict[str, Policy]:
    return {m: train_policy(steps, m, seed=0, config=SMALL) for m in METHODS}


@pytest.mark.parametrize("method", METHODS)
def test_each_variant_acts_with_admissible_actions_only(
    method: str, policies: dict[str, Policy], env: TextWorldExpress
) -> None:
    policy = policies[method]
    chosen: list[tuple[str, Sequence[str]]] = []

    def act(
        instruction: str,
        observation: str,
        history: Sequence[tuple[str, str]],
        admissible: Sequence[str],
    ) -> str:
        action = policy.act(instruction, observation, history, admissible)
        chosen.append((action, list(admissible)))
        return action

    result = evaluate(act, env, env.tasks("test-id", ["coin"], limit=3), max_steps=15)
    assert chosen and all(action in admissible for action, admissible in chosen)
    assert result.invalid_rate == 0.0
    assert len(result.tasks) == 3 and all(t.steps >= 1 for t in result.tasks)


def test_save_and_load_give_the_same_choices(
    policies: dict[str, Policy], steps: list[ExpertStep], tmp_path: Path
) -> None:
    for method, policy in policies.items():
        path = tmp_path / f"{method}.pt"
        policy.save(path)
        loaded = Policy.load(path)
        assert loaded.method == method
        for s in steps[:20]:
            assert s.admissible
            args = (s.instruction, s.observation, s.history, s.admissible)
            assert loaded.scores(*args) == pytest.approx(policy.scores(*args))
            assert loaded.act(*args) == policy.act(*args)


def test_a_corrupt_or_foreign_file_is_refused_with_a_clear_message(
    policies: dict[str, Policy], tmp_path: Path
) -> None:
    good = tmp_path / "policy.pt"
    policies["il"].save(good)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(DataSourceError, match="not a readable policy file"):
        Policy.load(truncated)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": [1, 2, 3]}, foreign)
    with pytest.raises(DataSourceError, match="not a policy written by Policy.save"):
        Policy.load(foreign)
    with pytest.raises(DataSourceError, match="no policy file"):
        Policy.load(tmp_path / "missing.pt")


def test_imitation_beats_a_random_policy_on_train_tasks() -> None:
    # simonsays: the observation names the one right action among about eight
    with TextWorldExpress(games=["simonsays"], step_limit=20) as env:
        tasks = env.tasks("train", ["simonsays"], limit=8)
        demos = [s for t in tasks for s in roll_out(env, t, 0, random.Random(0)).steps]
        policy = train_policy(demos, "il", seed=0, config=SMALL)
        rng = random.Random(0)

        def random_policy(
            _i: str, _o: str, _h: Sequence[tuple[str, str]], admissible: Sequence[str]
        ) -> str:
            return rng.choice(list(admissible))

        trained = evaluate(policy, env, tasks, max_steps=10)
        chance = evaluate(random_policy, env, tasks, max_steps=10)
    assert trained.success_rate >= chance.success_rate + 0.5, (
        trained.success_rate,
        chance.success_rate,
    )


def test_training_is_deterministic_for_a_seed(steps: list[ExpertStep]) -> None:
    config = PolicyConfig(dim=16, hidden=32, updates=40)
    probe = steps[3]
    assert probe.admissible
    args = (probe.instruction, probe.observation, probe.history, probe.admissible)
    first = train_policy(steps, "iwm", seed=7, config=config).scores(*args)
    again = train_policy(steps, "iwm", seed=7, config=config).scores(*args)
    other = train_policy(steps, "iwm", seed=8, config=config).scores(*args)
    assert first == again
    assert first != other


def test_subsampled_negatives_keep_the_expert_and_the_tried_actions(
    steps: list[ExpertStep],
) -> None:
    from lemmata.agents.experience.policy import _candidates, _Encoder, _examples, _texts

    enc = _Encoder.build([t for s in steps for t in _texts(s)], 2)
    rng = random.Random(0)
    for example in _examples(steps, enc):
        kept = _candidates(example, 5, rng)
        tried = [i for i, c in enumerate(example.classes) if c >= 0]
        assert example.target in kept and set(tried) <= set(kept)
        assert len(kept) <= max(6, len(tried))
        assert len(set(kept)) == len(kept) and kept == sorted(kept)
        assert _candidates(example, 0, rng) == list(range(len(example.actions)))
    policy = train_policy(
        steps, "sr", seed=0, config=PolicyConfig(dim=16, hidden=32, updates=30, negatives=5)
    )
    probe = steps[0]
    assert probe.admissible
    assert (
        policy.act(probe.instruction, probe.observation, probe.history, probe.admissible)
        in probe.admissible
    )


def test_outcome_classes_tell_new_from_stale_and_bad() -> None:
    seen = {"you", "are", "in", "the", "kitchen"}
    assert OUTCOMES[outcome_class(Outcome("You are in the kitchen."), 0.0, seen)] == "stale"
    assert OUTCOMES[outcome_class(Outcome("You are in the pantry."), 0.0, seen)] == "new"
    assert OUTCOMES[outcome_class(Outcome("You take it.", score=0.5), 0.0, seen)] == "progress"
    assert OUTCOMES[outcome_class(Outcome("Unknown action", invalid=True), 0.0, seen)] == "invalid"
    assert OUTCOMES[outcome_class(Outcome("You burn it.", failure=True), 0.0, seen)] == "failure"
    assert OUTCOMES[outcome_class(Outcome("You drop it.", score=0.2), 0.5, seen)] == "failure"


def test_an_unknown_outcome_class_to_avoid_is_refused(steps: list[ExpertStep]) -> None:
    with pytest.raises(UsageError, match="sr_avoid"):
        train_policy(steps, "sr", seed=0, config=PolicyConfig(updates=5, sr_avoid="boring"))


def test_a_recurrent_history_policy_round_trips_and_reads_the_history(
    steps: list[ExpertStep], tmp_path: Path
) -> None:
    config = PolicyConfig(dim=16, hidden=32, updates=40, history="gru", history_len=6)
    policy = train_policy(steps, "iwm", seed=0, config=config)
    path = tmp_path / "gru.pt"
    policy.save(path)
    loaded = Policy.load(path)
    assert loaded.config.history == "gru"
    probe = next(s for s in steps if 1 <= len(s.history) <= 2)
    admissible = probe.admissible
    assert admissible

    def scores(first: str) -> list[float]:
        # three earlier steps; the first is older than the two latest observations
        early = [("look around", first), ("inventory", "Nothing."), ("inventory", "Nothing.")]
        history = [*early, *probe.history]
        return loaded.scores(probe.instruction, probe.observation, history, admissible)

    args = (probe.instruction, probe.observation, probe.history, admissible)
    assert loaded.scores(*args) == pytest.approx(policy.scores(*args))
    assert scores("You see a coin in the kitchen.") != pytest.approx(scores("Nothing."))


def test_a_policy_file_from_before_the_recurrent_history_still_loads(
    policies: dict[str, Policy], tmp_path: Path
) -> None:
    path = tmp_path / "old.pt"
    policies["il"].save(path)
    data = torch.load(path, weights_only=True)
    for key in ("history", "history_len"):
        del data["config"][key]
    torch.save(data, path)
    loaded = Policy.load(path)
    assert loaded.config.history == "bag"
    probe = policies["il"]
    assert loaded.method == probe.method and loaded.config == probe.config


def test_an_unknown_outcome_class_to_accept_is_refused(steps: list[ExpertStep]) -> None:
    with pytest.raises(UsageError, match="sr_accept"):
        train_policy(steps, "sr", seed=0, config=PolicyConfig(updates=5, sr_accept="good"))


def test_the_contrast_and_accepting_losses_follow_the_observed_outcomes() -> None:
    from lemmata.agents.experience.policy import _accepting_loss, _contrast_loss

    progress, new, failure = (OUTCOMES.index(c) for c in ("progress", "new", "failure"))
    classes = torch.tensor([[new, progress, failure, -1]])
    # the expert's action (index 0) far above the alternative that failed: no contrast left
    apart = torch.tensor([[5.0, 0.0, -5.0, 0.0]])
    close = torch.tensor([[0.0, 0.0, 0.0, 0.0]])
    assert float(_contrast_loss(apart, classes, [0], 0.5)) < 0.01
    assert float(_contrast_loss(close, classes, [0], 0.5)) > 1.0
    # only the failed alternative is worse than the expert's outcome
    assert float(_contrast_loss(torch.tensor([[0.0, 9.0, -9.0, 0.0]]), classes, [0], 0.5)) < 0.01
    # the alternative that made progress shares the target: preferring it costs less than
    # preferring the one that failed, and nothing without it
    logits = torch.tensor([[0.0, 3.0, 0.0, -float("inf")]])
    swapped = torch.tensor([[0.0, 0.0, 3.0, -float("inf")]])
    accepted = _accepting_loss(logits, classes, [0], [progress], 0.5)
    assert float(accepted) < float(_accepting_loss(swapped, classes, [0], [progress], 0.5))
    assert torch.isfinite(accepted)


def test_unchanged_transitions_are_capped_like_errors(steps: list[ExpertStep]) -> None:
    from lemmata.agents.experience.policy import _Encoder, _examples, _texts, _transitions

    enc = _Encoder.build([t for s in steps for t in _texts(s)], 2)
    examples = _examples(steps, enc)
    unchanged = sum(same for e in examples for *_, same in e.nexts)
    assert unchanged  # coin's 'look around' and 'inventory' show nothing new
    every = _transitions(examples, 0.2, random.Random(0))
    capped = _transitions(examples, 0.2, random.Random(0), unchanged=True)
    assert len(capped) < len(every)
    kept = {(i, a) for i, a, _ in capped}
    dropped = [(i, a) for i, a, _ in every if (i, a) not in kept]
    assert dropped and all(
        set(enc.ids(o)) <= set(examples[i].state.observation)
        for i, a, o in every
        if (i, a) in set(dropped)
    )
    policy = train_policy(
        steps,
        "iwm",
        seed=0,
        config=PolicyConfig(dim=16, hidden=32, updates=20, cap_unchanged=True, iwm_decay=True),
    )
    probe = steps[0]
    assert probe.admissible
    assert (
        policy.act(probe.instruction, probe.observation, probe.history, probe.admissible)
        in probe.admissible
    )


def test_loop_breaking_lowers_an_action_repeated_from_the_same_observation(
    policies: dict[str, Policy], steps: list[ExpertStep], tmp_path: Path
) -> None:
    path = tmp_path / "il.pt"
    policies["il"].save(path)
    policy = Policy.load(path)
    probe = next(s for s in steps if s.admissible and len(s.admissible) > 2)
    admissible = probe.admissible
    assert admissible
    here = probe.observation
    top = policy.act(probe.instruction, here, [], admissible)
    # `top` was already taken from this very observation and changed nothing; `other` was
    # taken too, but from another observation
    other = next(a for a in admissible if a != top)
    history = [("wait", "Elsewhere."), (other, "A new room."), ("wait", here), (top, here)]
    args = (probe.instruction, here, history, admissible)
    plain = policy.scores(*args)
    policy.config = replace(policy.config, repeat_penalty=0.5, stale_penalty=2.0)
    broken = policy.scores(*args)
    for action, before, after in zip(admissible, plain, broken, strict=True):
        assert after == pytest.approx(before - 2.5 if action == top else before), action
    policy.config = replace(policy.config, stale_penalty=1000.0)
    assert policy.act(*args) != top
    assert policy.act(probe.instruction, here, [], admissible) == top


def test_only_the_sr_policy_avoids_actions_its_outcome_head_calls_stale(
    policies: dict[str, Policy], steps: list[ExpertStep], tmp_path: Path
) -> None:
    probe = next(s for s in steps if s.admissible and len(s.admissible) > 2)
    assert probe.admissible
    args = (probe.instruction, probe.observation, probe.history, probe.admissible)
    for method in ("il", "sr"):
        path = tmp_path / f"{method}.pt"
        policies[method].save(path)
        policy = Policy.load(path)
        plain = policy.scores(*args)
        policy.config = replace(policy.config, sr_stale_weight=1.0)
        lowered = policy.scores(*args)
        if method == "il":
            assert lowered == pytest.approx(plain)
        else:
            drops = [p - q for p, q in zip(plain, lowered, strict=True)]
            assert all(d >= 0 for d in drops) and max(drops) > 1e-4


def test_recovery_examples_stand_after_a_detour_that_moved_nothing(
    steps: list[ExpertStep],
) -> None:
    from lemmata.agents.experience.policy import OUTCOMES, _Encoder, _recovery, _texts

    enc = _Encoder.build([t for s in steps for t in _texts(s)], 2)
    every = [OUTCOMES.index(c) for c in ("new", "stale", "invalid")]
    detours = _recovery(steps, enc, every)
    # coin's 'look around' and 'inventory' leave the room as it was: the expert's move follows
    assert detours
    for example in detours:
        detour, expert = example.state.history_actions[-1], example.actions[example.target]
        assert expert != detour and not expert.startswith(("look", "inventory"))
        assert all(c == -1 for c in example.classes)
    # a move to another room is no detour: none of them has a move as its last action
    assert not any(e.state.history_actions[-1].startswith("move ") for e in detours)
    assert len(_recovery(steps, enc, [OUTCOMES.index("invalid")])) < len(detours)
    with pytest.raises(UsageError, match="sr_recover"):
        train_policy(steps, "sr", config=replace(SMALL, sr_recover="detour"))
    probe = steps[0]
    assert probe.admissible
    for method, change in (("sr", {"sr_recover": "stale,new"}), ("iwm", {"iwm_balance": True})):
        policy = train_policy(steps, method, config=replace(SMALL, updates=10, **change))
        args = (probe.instruction, probe.observation, probe.history, probe.admissible)
        assert policy.act(*args) in probe.admissible


def test_balanced_world_model_transitions_weigh_each_outcome_class_alike(
    steps: list[ExpertStep],
) -> None:
    from lemmata.agents.experience.policy import _Encoder, _examples, _texts, _transitions

    enc = _Encoder.build([t for s in steps for t in _texts(s)], 2)
    examples = _examples(steps, enc)
    balanced = _transitions(examples, 0.2, random.Random(0), balance=True)

    def cls(i: int, a: str) -> int:
        return examples[i].classes[examples[i].actions.index(a)]

    counts: dict[int, int] = {}
    for i, a, _ in balanced:
        counts[cls(i, a)] = counts.get(cls(i, a), 0) + 1
    assert len(counts) >= 2 and len(set(counts.values())) == 1
    plain = _transitions(examples, 0.2, random.Random(0))
    progress = sum(cls(i, a) == OUTCOMES.index("progress") for i, a, _ in plain)
    assert progress and counts[OUTCOMES.index("progress")] > progress


def test_action_parts_split_an_action_into_object_and_destination() -> None:
    assert action_parts("put box of Q-tips in bathroom cabinet") == (
        "box of Q-tips",
        "bathroom cabinet",
    )
    assert action_parts("move west") == ("west", "")
    assert action_parts("inventory") == ("inventory", "")


def _placement(item: str, place: str, others: tuple[str, ...]) -> ExpertStep:
    """An expert state holding ``item``, where the demonstration puts it in ``place``."""
    room = "You are in the house. You see " + ", ".join((place, *others)) + "."
    return ExpertStep(
        task=Task("textworld-express", "twc", 0, "train"),
        index=0,
        instruction="Put each object in its usual place.",
        observation=room,
        history=(),
        admissible=tuple(sorted(f"put {item} in {p}" for p in (place, *others))),
        action=f"put {item} in {place}",
        expert=Outcome(f"You put the {item} in the {place}.", score=1.0),
        alternatives=(),
    )


def test_phrase_embeddings_carry_placements_to_items_no_demonstration_named() -> None:
    places = ("fridge", "wardrobe", "bookcase")
    seen = {
        "fridge": ("milk", "cheddar", "raw chicken", "butter"),
        "wardrobe": ("wool sweater", "denim jacket", "silk blouse", "cotton trousers"),
        "bookcase": ("novel", "atlas", "dictionary", "poetry book"),
    }
    steps = [
        _placement(item, place, tuple(p for p in places if p != place))
        for place, items in seen.items()
        for item in items
    ]
    config = PolicyConfig(dim=16, hidden=32, updates=200, phrases="minilm")
    policy = train_policy(steps, "il", seed=0, config=config)
    unseen = {"fridge": "yogurt", "wardrobe": "leather coat", "bookcase": "encyclopedia"}
    for place, item in unseen.items():
        admissible = [f"put {item} in {p}" for p in places]
        room = "You are in the house. You see " + ", ".join(places) + "."
        chosen = policy.act("Put each object in its usual place.", room, [], admissible)
        assert chosen == f"put {item} in {place}", (item, chosen)


def test_the_episode_avoids_what_lowered_its_score_or_led_it_back() -> None:
    box = [("a closed box", 0.0), ("an open box", 0.0), ("a closed box", 0.0)]
    assert looped(["open box", "close box"], box) == {"open box"}
    # in the open-box state nothing was tried yet: nothing to avoid there
    assert looped(["open box"], box[:2]) == set()
    # a wrong placement lowered the score; taking the mug back restores the state: the
    # placement is avoided there, and the take is not (it was tried from another state)
    mug = [("mug on floor", 0.0), ("mug held", 0.1), ("mug in sink", 0.0), ("mug held", 0.1)]
    assert looped(["take mug", "put mug in sink", "take mug"], mug) == {"put mug in sink"}
    # a cycle that gained score since is no loop: the state's actions are open again
    gained = [("hall", 0.0), ("kitchen", 0.0), ("hall", 0.5)]
    assert looped(["go east", "go west"], gained) == set()
    # an action that changed nothing is avoided at once, and a look that did is not
    same = [("s", 0.0), ("s", 0.0), ("s", 0.0)]
    assert looped(["inventory", "look"], same) == {"inventory", "look"}
    with pytest.raises(UsageError, match="one \\(view, score\\) more than the actions"):
        looped(["look"], [("s", 0.0)])


def test_the_loop_penalty_keeps_every_method_out_of_an_undo_cycle(
    policies: dict[str, Policy], steps: list[ExpertStep], tmp_path: Path
) -> None:
    probe = next(s for s in steps if s.admissible and len(s.admissible) > 2)
    admissible = probe.admissible
    assert admissible
    here = probe.observation
    for method in METHODS:
        path = tmp_path / f"{method}.pt"
        policies[method].save(path)
        policy = Policy.load(path)
        # `away` led away and another action led back here, with no score gained
        away = admissible[0]
        history = [(away, "Elsewhere."), ("undo", here)]
        trace = [(here, 0.0), ("elsewhere", 0.0), (here, 0.0)]
        args = (probe.instruction, here, history, admissible)
        plain = policy.scores(*args, trace)
        policy.config = replace(policy.config, loop_penalty=1000.0)
        lowered = policy.scores(*args, trace)
        for action, before, after in zip(admissible, plain, lowered, strict=True):
            assert after == pytest.approx(before - 1000.0 if action == away else before), action
        assert policy.act(*args, trace) != away
        # the same cycle with score gained on the way is not a loop
        gained = [(here, 0.0), ("elsewhere", 0.5), (here, 0.5)]
        assert policy.scores(*args, gained) == pytest.approx(plain)
        # without a trace the observations stand for the states, and `here` recurs
        again = [("look", here), (away, "Elsewhere."), ("undo", here)]
        assert policy.act(probe.instruction, here, again, admissible) != away
        with pytest.raises(UsageError, match="trace holds 2"):
            policy.act(*args, trace[:2])


class _Recorder:
    """An environment that records each episode's (view, score, admissible, action) steps."""

    def __init__(self, env: TextWorldExpress) -> None:
        self.env = env
        self.episodes: list[list[tuple[str, float, list[str], str]]] = []
        self._here: tuple[str, float] = ("", 0.0)

    def reset(self, task: Task):  # type: ignore[no-untyped-def]
        obs = self.env.reset(task)
        self.episodes.append([])
        self._here = (obs.payload["view"], obs.payload["score"])
        return obs

    def admissible_actions(self) -> list[str] | None:
        return self.env.admissible_actions()

    def step(self, action: str):  # type: ignore[no-untyped-def]
        self.episodes[-1].append((*self._here, self.env.admissible_actions() or [], action))
        obs = self.env.step(action)
        self._here = (obs.payload["view"], obs.payload["score"])
        return obs


def test_evaluation_with_the_loop_penalty_repeats_no_looping_action(
    policies: dict[str, Policy], env: TextWorldExpress, tmp_path: Path
) -> None:
    path = tmp_path / "il.pt"
    policies["il"].save(path)
    policy = Policy.load(path)
    policy.config = replace(policy.config, loop_penalty=1000.0)
    recorder = _Recorder(env)
    tasks = env.tasks("test-ood", ["coin"], limit=4)
    got = evaluate(policy, recorder, tasks, max_steps=20)  # type: ignore[arg-type]
    assert len(got.tasks) == 4 and sum(len(e) for e in recorder.episodes) > 0
    for episode in recorder.episodes:
        views = [(v, s) for v, s, _, _ in episode]
        for t, (_, _, admissible, action) in enumerate(episode):
            trace = views[: t + 1]
            avoid = looped([a for _, _, _, a in episode[:t]], trace)
            # a looping action is taken again only when every admissible one loops
            assert action not in avoid or set(admissible) <= avoid, (t, action)
