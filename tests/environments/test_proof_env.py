"""The coq-tactics environment against real Coq: expert proofs succeed, failed tactics leave the
goals alone, snapshots come back, splits are honest, bad input says what to do."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from lemmata.environments.proof_env import TACTIC_MENU, ProofEnvironment, load_theorems
from lemmata.environments.text import SPLITS, Task, iter_gold
from lemmata.errors import SnapshotError, ToolNotFound, UnknownTask

PAYLOAD_KEYS = {"task", "admissible", "score", "success", "failure", "invalid", "steps"}


@pytest.fixture(scope="module")
def env(coqtop_path: str) -> Iterator[ProofEnvironment]:
    environment = ProofEnvironment(coqtop=coqtop_path, tactic_timeout_s=5)
    yield environment
    environment.close()


def _task(env: ProofEnvironment, theorem: str) -> Task:
    for split in SPLITS:
        for task in env.tasks(split):
            if task.params == theorem:
                return task
    raise AssertionError(f"no task for {theorem}")


@pytest.mark.parametrize(
    "split,family",
    [("train", "arith"), ("train", "lists"), ("train", "logic"), ("test-ood", "mathd-algebra")],
)
def test_the_expert_proof_closes_the_theorem(env: ProofEnvironment, split, family) -> None:
    task = env.tasks(split, names=[family], limit=1)[0]
    steps = list(iter_gold(env, task))
    gold = env.gold_actions()
    assert gold and [a for _, a, _ in steps] == gold
    first, _, _ = steps[0]
    assert set(first.payload) >= PAYLOAD_KEYS
    assert first.text.split("\n")[0].endswith(("goal", "goals"))
    assert not first.done and first.payload["score"] == 0.0
    assert not any(nxt.payload["invalid"] for _, _, nxt in steps)
    last = steps[-1][2]
    assert last.text == "No more goals."
    assert last.done and last.payload["success"] and last.payload["score"] == 1.0
    assert last.payload["steps"] == len(gold) and last.payload["goals"] == []


def test_every_proof_written_for_the_environment_closes_its_theorem(
    env: ProofEnvironment,
) -> None:
    extra = [t for t in load_theorems() if t.source == "coq_extra"]
    assert extra and {t.split for t in extra} == {"test-id"}
    ood = [t for t in load_theorems() if t.source == "minif2f-rocq"]
    assert len(ood) >= 33  # one theorem weighs at most 3 points
    failed = []
    for theorem in extra + ood:
        steps = list(iter_gold(env, _task(env, theorem.id)))
        if not steps or not steps[-1][2].payload["success"]:
            failed.append(theorem.id)
    assert failed == []


def test_a_failed_tactic_is_invalid_and_the_episode_goes_on(env: ProofEnvironment) -> None:
    env.reset(_task(env, "add_0_r"))
    before = env.step("intros n.")
    assert before.payload["goals"] == ["n : nat\n⊢ n + 0 = n"]

    wrong = env.step("apply no_such_lemma.")
    assert wrong.payload["invalid"] and not wrong.done
    assert wrong.payload["error"]["kind"] == "unknown_identifier"
    assert "no_such_lemma" in wrong.payload["error"]["message"]
    assert wrong.text.startswith("Error (unknown_identifier): The reference no_such_lemma")
    assert wrong.payload["goals"] == before.payload["goals"]
    assert before.text in wrong.text
    # the view is the state without the error: a failed tactic leaves it as it was
    assert wrong.payload["view"] == before.payload["view"] == before.text

    # The failed tactic was never applied: the rest of the expert proof still closes it.
    for tactic in env.gold_actions()[1:]:
        last = env.step(tactic)
    assert last.payload["success"] and last.payload["steps"] == len(env.gold_actions()) + 1


def test_a_slow_tactic_times_out_as_invalid(coqtop_path: str) -> None:
    with ProofEnvironment(coqtop=coqtop_path, tactic_timeout_s=1) as env:
        start = env.reset(_task(env, "modus_ponens"))
        looped = env.step("do 1000000000 idtac.")
        assert looped.payload["invalid"] and looped.payload["error"]["kind"] == "timeout"
        assert looped.payload["goals"] == start.payload["goals"]
        assert not env.step("intros P Q HP HPQ.").payload["invalid"]


def test_a_dead_coqtop_is_replaced_and_the_state_rebuilt(coqtop_path: str) -> None:
    with ProofEnvironment(coqtop=coqtop_path) as env:
        env.reset(_task(env, "and_comm"))
        gold = env.gold_actions()
        here = env.step(gold[0])
        env._coq.process.kill()  # as the kernel's OOM killer would
        for tactic in gold[1:]:
            last = env.step(tactic)
            assert not last.payload["invalid"], last.text
        assert last.payload["success"]
        assert (
            env.restore(
                {
                    **env.snapshot(),
                    "tactics": [gold[0]],
                    "goals": here.payload["goals"],
                    "state": -1,
                }
            ).text
            == here.text
        )


def test_snapshot_and_restore_return_to_the_same_goals(env: ProofEnvironment, coqtop_path: str):
    env.reset(_task(env, "app_nil_r"))
    gold = env.gold_actions()
    env.step(gold[0])
    here = env.step(gold[1])  # induction: two goals
    snap = env.snapshot()
    assert len(here.payload["goals"]) == 2
    for tactic in gold[2:]:
        done = env.step(tactic)
    assert done.payload["success"]

    back = env.restore(json.loads(json.dumps(snap)))
    assert back.payload["goals"] == here.payload["goals"] and back.text == here.text
    assert not back.done and not back.payload["success"] and back.payload["steps"] == 2
    for tactic in gold[2:]:
        again = env.step(tactic)
    assert again.payload["success"]

    # Another environment (another coqtop) replays the tactics to the same goals.
    with ProofEnvironment(coqtop=coqtop_path) as other:
        assert other.restore(snap).payload["goals"] == here.payload["goals"]
        assert other.task == env.task
        with pytest.raises(SnapshotError, match="other goals"):
            other.restore({**snap, "goals": ["⊢ False"]})
        with pytest.raises(SnapshotError, match="now fails"):
            other.restore({**snap, "session": "", "tactics": ["intros A l.", "lia2."]})
        with pytest.raises(SnapshotError):
            other.restore({"env": "coq-tactics"})


def test_splits_are_disjoint_and_ood_is_another_source(env: ProofEnvironment) -> None:
    by_split = {s: {t.params for t in env.tasks(s)} for s in SPLITS}
    assert all(by_split.values())
    assert not by_split["train"] & by_split["test-id"]
    assert not (by_split["train"] | by_split["test-id"]) & by_split["test-ood"]
    assert set().union(*by_split.values()) == {t.id for t in load_theorems()}
    sources = {t.id: t.source for t in load_theorems()}
    assert {sources[i] for i in by_split["test-ood"]} == {"minif2f-rocq"}
    assert {sources[i] for i in by_split["train"]} == {"coq_basic"}
    # test-id: the suite's held-out quarter and every lemma written for this environment
    assert {sources[i] for i in by_split["test-id"]} == {"coq_basic", "coq_extra"}
    assert len(by_split["test-id"]) >= 33  # one theorem weighs at most 3 points
    # In-distribution test shares families with training; the held-out source shares none.
    families = {s: {t.name for t in env.tasks(s)} for s in SPLITS}
    assert families["test-id"] <= families["train"]
    assert not families["test-ood"] & families["train"]
    assert len(env.tasks("train", limit=1)) == len(families["train"])


def test_unknown_tasks_name_the_valid_ones(env: ProofEnvironment) -> None:
    with pytest.raises(UnknownTask, match="arith"):
        env.tasks("train", names=["geometry"])
    with pytest.raises(UnknownTask, match="variations 0.."):
        env.reset(Task("coq-tactics", "arith", 999, "train"))
    with pytest.raises(UnknownTask, match="add_0_r"):
        env.reset(Task("coq-tactics", "arith", 0, "train", "add_0_r_renamed"))
    with pytest.raises(UnknownTask, match="test-ood"):
        env.tasks("valid")  # type: ignore[arg-type]


def test_the_menu_is_optional(env: ProofEnvironment, coqtop_path: str) -> None:
    obs = env.reset(_task(env, "and_comm"))
    assert env.admissible_actions() is None and obs.payload["admissible"] is None
    with ProofEnvironment(coqtop=coqtop_path, menu=True, max_steps=3) as menu_env:
        obs = menu_env.reset(_task(menu_env, "and_comm"))
        assert obs.payload["admissible"] == list(TACTIC_MENU)
        assert not menu_env.step("intros.").payload["invalid"]
        assert menu_env.step("lra.").payload["invalid"]  # Reals are not loaded here
        ended = menu_env.step("reflexivity.")
        assert ended.done and ended.payload["failure"] and not ended.payload["success"]


def test_a_missing_coqtop_says_how_to_install_it() -> None:
    with pytest.raises(ToolNotFound, match="apt-get install coq"):
        ProofEnvironment(coqtop="/nonexistent/coqtop")


def test_open_environment_knows_coq_tactics(coqtop_path: str) -> None:
    text = pytest.importorskip("lemmata.environments.text")
    try:
        names = text.environment_names()
    except ImportError as exc:  # a sibling environment module is not there yet
        pytest.skip(f"the built-in environments do not all import: {exc}")
    assert "coq-tactics" in names
    with text.open_environment("coq-tactics", coqtop=coqtop_path) as env:
        assert isinstance(env, ProofEnvironment)
        assert env.reset(env.tasks("test-id", limit=1)[0]).payload["goals"]
