"""The ScienceWorld environment, on the real simulator (one JVM for the module, short tasks)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from lemmata.environments.scienceworld import ScienceWorld
from lemmata.environments.text import Task, iter_gold, open_environment
from lemmata.errors import MissingDependency, SnapshotError, UnknownTask

pytest.importorskip("scienceworld")

SHORT = ["find-non-living-thing", "lifespan-longest-lived"]


@pytest.fixture(scope="module")
def env() -> Iterator[ScienceWorld]:
    with ScienceWorld(names=SHORT) as environment:
        yield environment


def _words(text: str) -> list[str]:
    return sorted(text.split())


def test_thirty_tasks_and_gold_paths_that_complete(env: ScienceWorld) -> None:
    assert len(env._all_names) == 30 and "boil" in env._all_names
    assert env.task_names() == SHORT
    for split in ("train", "test-ood"):
        for task in env.tasks(split, limit=1):
            last = None
            for _obs, _action, nxt in iter_gold(env, task):
                last = nxt
            assert last is not None and last.payload["success"], (
                f"gold path of {task.id} did not complete"
            )
            assert last.done and last.payload["score"] == 1.0


def test_admissible_actions_on_request_and_invalid_actions_flagged(env: ScienceWorld) -> None:
    obs = env.reset(env.tasks("train", ["lifespan-longest-lived"], limit=1)[0])
    assert obs.payload["admissible"] is None  # lazy: computed on request
    assert "longest" in obs.payload["task"] and obs.payload["steps"] == 0
    admissible = env.admissible_actions()
    assert admissible is not None and len(admissible) > 50 and admissible == sorted(admissible)
    assert "look around" in admissible
    bad = env.step("fly to the moon")
    assert bad.payload["invalid"] and not bad.done and bad.payload["steps"] == 1
    good = env.step("look around")
    assert not good.payload["invalid"]


def test_a_wrong_focus_fails_the_task(env: ScienceWorld) -> None:
    env.reset(env.tasks("train", ["find-living-thing"], limit=1)[0])
    obs = env.step("focus on agent")
    assert obs.payload["failure"] and obs.done and not obs.payload["success"]


def test_restore_replays_to_the_same_state(env: ScienceWorld) -> None:
    task = env.tasks("test-id", ["find-non-living-thing"], limit=1)[0]
    env.reset(task)
    gold = env.gold_actions()
    assert gold is not None and len(gold) >= 3
    env.step(gold[0])
    here = env.step(gold[1])
    snap = env.snapshot()
    admissible = env.admissible_actions()
    env.step("look around")
    env.step("inventory")
    back = env.restore(snap)
    assert _words(back.text) == _words(here.text) and back.payload["steps"] == 2
    assert back.payload["score"] == here.payload["score"] > 0
    assert env.admissible_actions() == admissible
    assert env.replays >= 1
    assert env.step(gold[2]).payload["steps"] == 3
    with pytest.raises(SnapshotError, match="different state"):
        env.restore({**snap, "actions": snap["actions"][:1]})
    with pytest.raises(SnapshotError):
        env.restore({**snap, "env": "textworld-express"})


def test_unknown_tasks_and_variations_name_the_valid_ones(env: ScienceWorld) -> None:
    with pytest.raises(UnknownTask, match="find-animal"):
        env.tasks("train", ["boil-the-ocean"])
    with pytest.raises(UnknownTask, match="test-ood variations"):
        env.reset(Task("scienceworld", "lifespan-longest-lived", 0, "test-ood"))


def test_splits_are_train_dev_and_test_variations_and_disjoint(env: ScienceWorld) -> None:
    variations = env.variations("lifespan-longest-lived")
    train, dev, test = (set(variations[s]) for s in ("train", "test-id", "test-ood"))
    assert train and dev and test
    assert not train & dev and not train & test and not dev & test
    assert {t.variation for t in env.tasks("test-id", ["lifespan-longest-lived"])} == dev


def test_open_environment_and_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    with open_environment("scienceworld", names=["lifespan-shortest-lived"], step_limit=1) as env:
        env.reset(env.tasks("train", limit=1)[0])
        assert env.step("look around").done  # the step limit
    monkeypatch.setitem(sys.modules, "scienceworld", None)
    with pytest.raises(MissingDependency, match=r"pip install 'lemmata\[experience\]'"):
        ScienceWorld()


def test_listing_another_tasks_variations_keeps_the_episode(env: ScienceWorld) -> None:
    env.reset(env.tasks("train", ["lifespan-longest-lived"], limit=1)[0])
    before = env.step("look around")
    assert env.variations("find-plant")["test-ood"]  # loads find-plant in the simulator
    assert _words(env.step("look around").text) == _words(before.text)
    assert env.observation is not None and env.observation.payload["steps"] == 2
