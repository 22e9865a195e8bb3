"""The TextWorldExpress environment, on the real simulator (one JVM for the module)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from lemmata.environments.text import Task, iter_gold, open_environment
from lemmata.environments.textworld_express import GAMES, OOD_PARAMS, TextWorldExpress
from lemmata.errors import MissingDependency, SnapshotError, ToolNotFound, UnknownTask, UsageError

pytest.importorskip("textworld_express")


@pytest.fixture(scope="module")
def env() -> Iterator[TextWorldExpress]:
    with TextWorldExpress() as environment:
        yield environment


def _play_gold(env: TextWorldExpress, task: Task) -> tuple[bool, int]:
    last = None
    for _obs, _action, nxt in iter_gold(env, task):
        last = nxt
    assert last is not None
    return bool(last.payload["success"]), int(last.payload["steps"])


def test_gold_paths_complete_on_every_game_and_split(env: TextWorldExpress) -> None:
    for split in ("train", "test-id", "test-ood"):
        for task in env.tasks(split, limit=3):
            success, steps = _play_gold(env, task)
            assert success, f"gold path of {task.id} did not complete"
            assert steps <= env.step_limit
    played = {t.name for t in env.tasks("train", limit=1)}
    assert played == set(GAMES)


def test_observation_carries_the_task_and_sorted_admissible_actions(env: TextWorldExpress) -> None:
    task = env.tasks("train", ["coin"], limit=1)[0]
    obs = env.reset(task)
    p = obs.payload
    assert "coin" in p["task"].lower()
    assert p["admissible"] == sorted(p["admissible"]) and "look around" in p["admissible"]
    assert env.admissible_actions() == p["admissible"]
    assert (p["steps"], p["score"], p["success"], p["failure"], p["invalid"]) == (
        0,
        0.0,
        False,
        False,
        False,
    )
    assert obs.text.startswith("You are in") and not obs.done
    gold = env.gold_actions()
    assert gold and gold[0] != "look around" and gold[0] in p["admissible"]


def test_an_action_that_is_not_admissible_is_flagged_invalid(env: TextWorldExpress) -> None:
    env.reset(env.tasks("train", ["coin"], limit=1)[0])
    bad = env.step("dance on the ceiling")
    assert bad.payload["invalid"] and "Unknown action" in bad.text
    assert bad.payload["steps"] == 1 and not bad.done
    good = env.step({"action": "Look  Around"})  # case and spacing are forgiven
    assert not good.payload["invalid"] and good.payload["steps"] == 2


def test_snapshot_and_restore_return_to_the_same_state(env: TextWorldExpress) -> None:
    task = env.tasks("train", ["cookingworld"], limit=1)[0]
    env.reset(task)
    gold = env.gold_actions()
    assert gold is not None
    for action in gold[:3]:
        env.step(action)
    snap = json.loads(json.dumps(env.snapshot()))  # JSON-able
    here = env.observation
    assert here is not None
    others = [a for a in here.payload["admissible"] if a != gold[3]]
    for alternative in others[:4]:
        branched = env.restore(snap)
        assert (
            branched.text == here.text
            and branched.payload["admissible"] == here.payload["admissible"]
        )
        moved = env.step(alternative)
        assert moved.payload["steps"] == 4
    env.reset(env.tasks("test-ood", ["coin"], limit=1)[0])  # elsewhere entirely
    back = env.restore(snap)
    assert back.text == here.text and env.task == task
    assert env.admissible_actions() == here.payload["admissible"]
    assert env.step(gold[3]).payload["steps"] == 4


def test_a_corrupted_snapshot_raises_snapshot_error(env: TextWorldExpress) -> None:
    env.reset(env.tasks("train", ["twc"], limit=1)[0])
    gold = env.gold_actions()
    assert gold is not None
    env.step(gold[0])
    env.step(gold[1])
    snap = env.snapshot()
    env.step("look around")
    with pytest.raises(SnapshotError, match="different state"):
        env.restore({**snap, "actions": snap["actions"][:1]})
    with pytest.raises(SnapshotError, match="different state"):
        env.restore({**snap, "fingerprint": "0" * 24})
    with pytest.raises(SnapshotError):
        env.restore({**snap, "env": "scienceworld"})
    with pytest.raises(SnapshotError):
        env.restore({**snap, "task": {"env": "textworld-express"}})
    with pytest.raises(SnapshotError):
        env.restore({**snap, "task": {**snap["task"], "variation": 123456}})
    assert env.restore(snap).payload["steps"] == 2


def test_unknown_games_seeds_and_parameters_name_the_valid_ones(env: TextWorldExpress) -> None:
    with pytest.raises(UnknownTask, match="cookingworld"):
        env.tasks("train", ["zork"])
    with pytest.raises(UnknownTask, match="cookingworld"):
        TextWorldExpress(games=["zork"])
    with pytest.raises(UnknownTask, match="seeds 0..999"):
        env.reset(Task("textworld-express", "coin", 20000, "train", env.params["coin"]))
    with pytest.raises(UnknownTask, match="numLocations"):
        env.reset(Task("textworld-express", "coin", 0, "train", "numRooms=3"))
    with pytest.raises(UnknownTask, match="scienceworld"):
        env.reset(Task("scienceworld", "boil", 0, "train"))


def test_an_option_the_environment_does_not_take_is_named_with_those_it_takes() -> None:
    with pytest.raises(UsageError, match=r"no option 'step_limt': it takes games, step_limit"):
        open_environment("textworld-express", step_limt=5)


def test_splits_are_disjoint_and_ood_worlds_are_larger(env: TextWorldExpress) -> None:
    ids = {
        split: {t.id for t in env.tasks(split, limit=50)}
        for split in ("train", "test-id", "test-ood")
    }
    assert not ids["train"] & ids["test-id"] and not ids["train"] & ids["test-ood"]
    assert not ids["test-id"] & ids["test-ood"]
    ood = env.tasks("test-ood", limit=1)
    assert {t.name for t in ood} == set(OOD_PARAMS)  # games without a harder setting have none
    coin = {split: env.tasks(split, ["coin"], limit=1)[0] for split in ("test-id", "test-ood")}
    assert coin["test-id"].variation == coin["test-ood"].variation  # same seed, another world
    assert (
        "numLocations=4" in coin["test-id"].params and "numLocations=8" in coin["test-ood"].params
    )
    first = {split: env.reset(task).text for split, task in coin.items()}
    assert first["test-id"] != first["test-ood"]


def test_the_step_limit_ends_an_episode_and_stepping_on_is_refused() -> None:
    with open_environment("textworld-express", games=["sorting"], step_limit=2) as env:
        assert env.task_names() == ["sorting"]
        env.reset(env.tasks("train", limit=1)[0])
        env.step("inventory")
        last = env.step("inventory")
        assert last.done and not last.payload["success"] and last.payload["steps"] == 2
        with pytest.raises(UsageError, match="over"):
            env.step("inventory")


def test_missing_package_and_missing_java_say_how_to_get_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "textworld_express", None)
    with pytest.raises(MissingDependency, match=r"pip install 'lemmata\[experience\]'"):
        TextWorldExpress()
    monkeypatch.undo()
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ToolNotFound, match="openjdk"):
        TextWorldExpress()


def test_verbose_observations_add_the_inventory_and_room() -> None:
    with TextWorldExpress(games=["coin"], verbose=True) as env:
        env.reset(env.tasks("train", limit=1)[0])
        gold = env.gold_actions()
        assert gold is not None
        obs = env.step(gold[0])
        assert obs.text.startswith(obs.payload["look"].strip()[:40])
        assert "Inventory" in obs.text and "Inventory" not in obs.payload["look"]


def test_restoring_a_child_from_its_parent_steps_only_the_missing_action(
    env: TextWorldExpress,
) -> None:
    env.reset(env.tasks("train", ["mapreader"], limit=1)[0])
    gold = env.gold_actions()
    assert gold is not None
    parent = env.snapshot()
    child = env.step(gold[0])
    child_snap = env.snapshot()
    env.restore(parent)
    replays, replayed = env.replays, env.replayed_actions
    assert env.restore(child_snap).text == child.text
    assert (env.replays, env.replayed_actions) == (replays, replayed + 1)


def test_the_score_line_says_when_a_placement_cost_or_earned_points() -> None:
    with TextWorldExpress(games=["twc"], verbose=True, score_line=True) as env:
        task = env.tasks("train", ["twc"], limit=1)[0]
        env.reset(task)
        gold = env.gold_actions()
        assert gold is not None
        put = next(a for a in gold if a.startswith("put "))
        item = put.removeprefix("put ").split(" in ")[0]
        taken = env.step(f"take {item}")
        assert "Your score has just gone up." in taken.text
        start = env.snapshot()
        wrong = next(
            a
            for a in env.admissible_actions() or []
            if a.startswith(f"put {item} in ") and a != put
        )
        dropped = env.step(wrong)
        assert "Your score has just gone down." in dropped.text
        assert dropped.payload["score"] < taken.payload["score"]
        looked = env.step("look around")
        assert "score" not in looked.text.lower()  # no change, no line
        env.restore(start)
        assert env.step(wrong).text == dropped.text  # a replayed branch reads the same
    with TextWorldExpress(games=["twc"], verbose=True) as plain:
        plain.reset(task)
        assert "score" not in plain.step(f"take {item}").text.lower()


def test_the_view_is_the_state_without_the_actions_answer() -> None:
    with TextWorldExpress(games=["twc"], verbose=True, score_line=True) as env:
        task = env.tasks("train", ["twc"], limit=1)[0]
        start = env.reset(task)
        gold = env.gold_actions()
        assert gold is not None
        item = next(a for a in gold if a.startswith("put ")).removeprefix("put ").split(" in ")[0]
        taken = env.step(f"take {item}")
        assert taken.payload["view"] != start.payload["view"]
        assert item in taken.payload["view"]  # the inventory holds it now
        wrong = next(
            a
            for a in env.admissible_actions() or []
            if a.startswith(f"put {item} in ") and a not in gold
        )
        put = env.step(wrong)
        back = env.step(f"take {item}")
        # the take undid the put: the view is the one before it, while the put's answer
        # ("You put ...", the score line) is in the text and not in the view
        assert back.payload["view"] == taken.payload["view"]
        assert "You put" in put.text and "You put" not in put.payload["view"]
        assert put.payload["view"] != taken.payload["view"]
