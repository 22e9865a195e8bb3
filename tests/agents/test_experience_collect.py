"""Collection on the real TextWorldExpress simulator: alternatives from the expert's states,
the checkpointed graph (resume after an interruption, settings that must match), parallel
workers, an environment that fails mid-task, and Ray actors."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("textworld_express")

from lemmata.agents.experience.collection import CollectProgress, collect
from lemmata.agents.experience.data import read_rollouts
from lemmata.agents.experience.rollouts import canonical_action, choose_alternatives, roll_out
from lemmata.environments.text import open_environment
from lemmata.environments.textworld_express import TextWorldExpress
from lemmata.errors import SnapshotError, UnknownTask, UsageError


@pytest.fixture(scope="module")
def twx() -> Any:
    with open_environment("textworld-express", games=["coin", "mapreader"]) as env:
        yield env


def test_each_expert_state_gets_k_admissible_alternatives_tried_from_that_state(twx) -> None:
    task = twx.tasks("train", names=["mapreader"], limit=1)[0]
    out = roll_out(twx, task, 3, random.Random(0))
    assert out.error is None and out.success
    assert len(out.steps) == len(twx.gold_actions())
    for step in out.steps:
        assert step.admissible is not None and step.action in step.admissible
        actions = [b.action for b in step.alternatives]
        assert len(actions) == min(3, len(step.admissible) - 1)
        assert step.action not in actions and len(set(actions)) == len(actions)
        assert set(actions) <= set(step.admissible)
    # the alternatives were tried from the expert's state: re-running one reproduces it
    step = out.steps[1]
    twx.reset(task)
    twx.step(out.steps[0].action)
    branch = step.alternatives[0]
    assert twx.step(branch.action).text == branch.outcome.observation
    # and the expert's own history is intact: each record's history is the trajectory so far
    assert [a for a, _ in out.steps[-1].history] == [s.action for s in out.steps[:-1]]


def test_k_zero_records_the_expert_trajectory_alone_and_negative_k_is_refused(twx) -> None:
    task = twx.tasks("train", names=["coin"], limit=1)[0]
    out = roll_out(twx, task, 0, random.Random(0))
    assert out.steps and all(not s.alternatives for s in out.steps)
    assert out.env_steps == len(out.steps)
    with pytest.raises(UsageError, match="must be 0 or more"):
        roll_out(twx, task, -1, random.Random(0))
    with pytest.raises(UsageError, match="must be 0 or more"):
        choose_alternatives(["a"], "b", -2, random.Random(0))


def test_alternatives_skip_the_expert_action_in_any_spelling() -> None:
    rng = random.Random(1)
    got = choose_alternatives(
        ["Take coin", "take  coin!", "move west", "look"], "take coin", 5, rng
    )
    assert sorted(got) == ["look", "move west"]
    assert canonical_action("Take  Coin!") == canonical_action("take coin")


def test_collect_writes_rollouts_and_the_run_resumes_after_an_interruption(tmp_path: Path) -> None:
    full = collect("textworld-express", tmp_path / "full", names=["coin"], demos=6, k=2, batch=2)
    assert full.tasks == 6 and not full.failed
    reference = (tmp_path / "full" / "rollouts.jsonl").read_text()
    assert len(reference.splitlines()) == full.records > 6
    assert json.loads((tmp_path / "full" / "run.json").read_text())["k"] == 2

    seen: list[CollectProgress] = []

    def stop_after_first_batch(p: CollectProgress) -> None:
        seen.append(p)
        if p.done == 2:
            raise KeyboardInterrupt

    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        collect(
            "textworld-express",
            out,
            names=["coin"],
            demos=6,
            k=2,
            batch=2,
            progress=stop_after_first_batch,
        )
    assert seen[-1].done == 2 and seen[-1].total == 6
    # a half-written line from the crash is cut back to the checkpoint on resume
    with (out / "rollouts.jsonl").open("a") as fh:
        fh.write('{"task": {"env": "textworld-express"')
    resumed = collect("textworld-express", out, names=["coin"], demos=6, k=2, batch=2, resume=True)
    assert resumed.resumed and resumed.tasks == 6 and resumed.records == full.records
    assert (out / "rollouts.jsonl").read_text() == reference
    assert len(read_rollouts(out / "rollouts.jsonl")) == full.records


def test_a_run_folder_is_not_overwritten_or_resumed_with_other_settings(tmp_path: Path) -> None:
    collect("textworld-express", tmp_path, names=["coin"], demos=1, k=1)
    before = (tmp_path / "rollouts.jsonl").read_text()
    with pytest.raises(UsageError, match="already holds a collection run"):
        collect("textworld-express", tmp_path, names=["coin"], demos=1, k=1)
    with pytest.raises(UsageError, match=r"k \(was 1, now 3\)"):
        collect("textworld-express", tmp_path, names=["coin"], demos=1, k=3, resume=True)
    assert (tmp_path / "rollouts.jsonl").read_text() == before
    again = collect("textworld-express", tmp_path, names=["coin"], demos=1, k=2, overwrite=True)
    assert again.records and (tmp_path / "rollouts.jsonl").read_text() != before


def test_bad_arguments_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="must be 0 or more"):
        collect("textworld-express", tmp_path / "a", k=-1)
    with pytest.raises(UsageError, match="workers"):
        collect("textworld-express", tmp_path / "b", workers=0)
    with pytest.raises(UnknownTask, match="textworld-express"):
        collect("no-such-env", tmp_path / "c", demos=1)
    with pytest.raises(UnknownTask, match="coin"):
        collect("textworld-express", tmp_path / "d", names=["chess"], demos=1)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_two_workers_write_the_same_file_as_one(tmp_path: Path) -> None:
    one = collect("textworld-express", tmp_path / "one", names=["coin", "mapreader"], demos=3, k=2)
    two = collect(
        "textworld-express", tmp_path / "two", names=["coin", "mapreader"], demos=3, k=2, workers=2
    )
    assert one.records == two.records
    assert (tmp_path / "one" / "rollouts.jsonl").read_text() == (
        tmp_path / "two" / "rollouts.jsonl"
    ).read_text()


class _FlakyRestore(TextWorldExpress):
    """The real simulator, except that restoring fails on the tasks named: an environment
    whose snapshot cannot be restored."""

    broken = {"coin"}

    def restore(self, state: dict[str, Any]) -> Any:
        task = self.task
        if task is not None and task.name in self.broken:
            raise SnapshotError("the replay reached a different state")
        return super().restore(state)


def test_a_task_whose_snapshot_cannot_be_restored_stops_alone(tmp_path: Path) -> None:
    result = collect(
        "textworld-express",
        tmp_path,
        names=["coin", "mapreader"],
        demos=2,
        k=2,
        make_env=lambda: _FlakyRestore(games=["coin", "mapreader"]),
    )
    assert len(result.failed) == 2
    assert all("coin" in t and "different state" in r for t, r in result.failed.items())
    steps = read_rollouts(tmp_path / "rollouts.jsonl")
    assert {s.task.name for s in steps} == {"mapreader"}
    lines = (tmp_path / "failures.jsonl").read_text().splitlines()
    assert {json.loads(line)["task"] for line in lines} == set(result.failed)


def test_ray_actors_collect_the_same_records_as_threads(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    local = collect("textworld-express", tmp_path / "t", names=["coin"], demos=2, k=2)
    remote = collect("textworld-express", tmp_path / "r", names=["coin"], demos=2, k=2, ray="local")
    assert remote.records == local.records
    assert (tmp_path / "t" / "rollouts.jsonl").read_text() == (
        tmp_path / "r" / "rollouts.jsonl"
    ).read_text()


def test_the_package_function_survives_an_import_of_its_module() -> None:
    # `ee.collect(...)` is the SDK's entry point; importing the module that defines it (as the
    # CLI and these tests do) must not replace the function with the module.
    import importlib

    from lemmata.agents import experience as ee

    importlib.import_module("lemmata.agents.experience.collection")
    assert callable(ee.collect)
    assert ee.collect is collect
