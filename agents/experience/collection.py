"""Collection: the rollout loop over many tasks as a LangGraph graph, checkpointed so that an
interrupted run resumes where it stopped, parallel over tasks (threads here, Ray actors with
``ray=``), with progress.

A run lives in one folder::

    OUT/run.json           what was asked (environment, tasks, K, seed); a resume must match it
    OUT/checkpoint.sqlite  the graph's checkpoints (LangGraph's SQLite saver)
    OUT/rollouts.jsonl     one ExpertStep per line (records.py), appended task by task
    OUT/failures.jsonl     tasks that stopped early, with the reason

The graph is ``plan -> collect (a batch of tasks, repeated while tasks remain) -> END``. Each
``collect`` step appends its batch's records and then checkpoints the file's length with the
state, so a resume first cuts ``rollouts.jsonl`` back to the last checkpoint: a crash between
the two never leaves a record twice or half a line. Records are written in task order and
each task draws its alternatives from its own seeded generator, so the file does not depend
on the number of workers.

>>> import tempfile
>>> out = tempfile.mkdtemp()
>>> result = collect("textworld-express", out, names=["coin"], demos=2, k=2)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from lemmata.agents.experience.records import ExpertStep
from lemmata.agents.experience.rollouts import Proposer, TaskRollout, roll_out
from lemmata.environments.text import Split, Task, TextEnvironment, open_environment
from lemmata.errors import UsageError

__all__ = ["CollectProgress", "CollectResult", "collect"]

_RUN_KEYS = ("env", "env_options", "split", "names", "demos", "k", "seed", "max_steps")


@dataclass(frozen=True)
class CollectProgress:
    """Where a run stands: tasks finished of the total, records and environment steps so far."""

    done: int
    total: int
    records: int
    env_steps: int
    failed: int
    last: str | None = None


@dataclass
class CollectResult:
    """What a run produced: its folder and files, the counts, and the speed."""

    out_dir: Path
    rollouts: Path
    tasks: int
    records: int
    env_steps: int
    failed: dict[str, str]
    elapsed_s: float
    resumed: bool = False
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def steps_per_s(self) -> float:
        return self.env_steps / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def summary(self) -> str:
        failed = f", {len(self.failed)} stopped early" if self.failed else ""
        return (
            f"{self.records} expert states from {self.tasks} tasks{failed}; "
            f"{self.env_steps} environment steps in {self.elapsed_s:.1f} s "
            f"({self.steps_per_s:.0f}/s)"
        )


class _State(TypedDict):
    pending: list[dict[str, Any]]
    total: int
    done: int
    records: int
    env_steps: int
    failed: dict[str, str]
    offset: int
    elapsed_s: float


# -- runners: where a task's rollout runs ---------------------------------------------------------
class _ThreadRunner:
    """One environment per worker thread, opened on first use and closed at the end."""

    def __init__(
        self,
        env: str,
        options: dict[str, Any],
        workers: int,
        propose: Proposer | None,
        make_env: Callable[[], TextEnvironment] | None = None,
    ) -> None:
        self._make = make_env or (lambda: open_environment(env, **options))
        self._local = threading.local()
        self._envs: list[TextEnvironment] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="rollout")
        self._propose = propose

    def _env(self) -> TextEnvironment:
        env = getattr(self._local, "env", None)
        if env is None:
            env = self._make()
            self._local.env = env
            with self._lock:
                self._envs.append(env)
        return env

    def _one(self, task: Task, k: int, seed: int, max_steps: int | None) -> TaskRollout:
        rng = random.Random(f"{seed}:{task.id}")
        return roll_out(self._env(), task, k, rng, propose=self._propose, max_steps=max_steps)

    def run(
        self, tasks: Sequence[Task], k: int, seed: int, max_steps: int | None
    ) -> list[TaskRollout]:
        return list(self._pool.map(lambda t: self._one(t, k, seed, max_steps), tasks))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        for env in self._envs:
            with contextlib.suppress(Exception):
                env.close()


class _RolloutActor:
    """The body of a Ray actor: one environment on the node that runs it."""

    def __init__(self, env: str, options: dict[str, Any]) -> None:
        self.env = open_environment(env, **options)

    def run(self, task: dict[str, Any], k: int, seed: int, max_steps: int | None) -> dict[str, Any]:
        t = Task.from_dict(task)
        r = roll_out(self.env, t, k, random.Random(f"{seed}:{t.id}"), max_steps=max_steps)
        return {
            "steps": [s.to_dict() for s in r.steps],
            "env_steps": r.env_steps,
            "success": r.success,
            "error": r.error,
        }

    def close(self) -> None:
        self.env.close()


class _RayRunner:
    """Ray actors, one environment each (``ray`` is ``local``, ``auto`` or a cluster address)."""

    def __init__(self, env: str, options: dict[str, Any], workers: int, address: str) -> None:
        from lemmata.deps import require_extra

        require_extra("ray", "ray")
        import ray

        from lemmata.ray_session import RaySession

        extra = {"num_cpus": max(1, workers)} if address == "local" else {}
        self._session = RaySession(address, **extra).open()
        actor: Any = ray.remote(num_cpus=1)(_RolloutActor)
        self._actors: list[Any] = [actor.remote(env, options) for _ in range(max(1, workers))]

    def run(
        self, tasks: Sequence[Task], k: int, seed: int, max_steps: int | None
    ) -> list[TaskRollout]:
        import ray

        refs = [
            self._actors[i % len(self._actors)].run.remote(t.to_dict(), k, seed, max_steps)
            for i, t in enumerate(tasks)
        ]
        out = []
        for task, data in zip(tasks, ray.get(refs), strict=True):
            out.append(
                TaskRollout(
                    task,
                    [ExpertStep.from_dict(s) for s in data["steps"]],
                    int(data["env_steps"]),
                    bool(data["success"]),
                    data["error"],
                )
            )
        return out

    def close(self) -> None:
        import ray

        for a in self._actors:
            with contextlib.suppress(Exception):
                ray.get(a.close.remote(), timeout=30)
        self._session.close()


# -- the run ------------------------------------------------------------------------------------
def _plan_tasks(
    env: str,
    options: dict[str, Any],
    split: Split,
    names: list[str] | None,
    demos: int | None,
    make_env: Callable[[], TextEnvironment] | None,
) -> list[Task]:
    with make_env() if make_env else open_environment(env, **options) as probe:
        return probe.tasks(split, names=names, limit=demos)


def _check_run(out: Path, config: dict[str, Any]) -> None:
    path = out / "run.json"
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot resume: {path} is missing or unreadable ({exc})") from None
    diff = [k for k in _RUN_KEYS if stored.get(k) != config.get(k)]
    if diff:
        names = ", ".join(f"{k} (was {stored.get(k)!r}, now {config.get(k)!r})" for k in diff)
        raise UsageError(f"cannot resume {out}: the run was started with other settings: {names}")


def collect(
    env: str,
    out_dir: str | Path,
    *,
    split: Split = "train",
    names: list[str] | None = None,
    demos: int | None = None,
    k: int = 4,
    seed: int = 0,
    workers: int = 1,
    ray: str | None = None,
    max_steps: int | None = None,
    env_options: dict[str, Any] | None = None,
    propose: Proposer | None = None,
    resume: bool = False,
    overwrite: bool = False,
    batch: int | None = None,
    progress: Callable[[CollectProgress], None] | None = None,
    make_env: Callable[[], TextEnvironment] | None = None,
) -> CollectResult:
    """Roll out the expert trajectories of ``env``'s ``split`` tasks (``demos`` of each task type
    in ``names``, or of every type) with ``k`` alternatives per state, into ``out_dir``.

    ``propose`` supplies alternatives where the environment does not enumerate its actions (a
    model, see :func:`lemmata.agents.experience.llm.propose_alternatives`); without it such
    states get none. ``resume`` continues the run checkpointed in ``out_dir`` (its settings must
    match); a folder that already holds a run needs ``resume`` or ``overwrite``.
    """
    if k < 0:
        raise UsageError(f"K (alternatives per state) must be 0 or more, not {k}")
    if workers < 1:
        raise UsageError(f"workers must be 1 or more, not {workers}")
    if demos is not None and demos < 1:
        raise UsageError(f"demos (tasks per type) must be 1 or more, not {demos}")
    if ray is not None and propose is not None:
        raise UsageError(
            "model-proposed alternatives run in this process: drop --ray, or the model"
        )
    options = dict(env_options or {})
    out = Path(out_dir)
    config = {
        "env": env,
        "env_options": options,
        "split": split,
        "names": names,
        "demos": demos,
        "k": k,
        "seed": seed,
        "max_steps": max_steps,
    }
    ckpt = out / "checkpoint.sqlite"
    rollouts = out / "rollouts.jsonl"
    failures = out / "failures.jsonl"
    if resume:
        _check_run(out, config)
    elif ckpt.exists() or rollouts.exists():
        if not overwrite:
            raise UsageError(f"{out} already holds a collection run: pass resume or overwrite")
        for p in (ckpt, rollouts, failures, out / "run.json"):
            p.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    if not resume:
        (out / "run.json").write_text(json.dumps(config, indent=2) + "\n")

    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    runner: _ThreadRunner | _RayRunner | None = None
    size = batch or max(1, workers) * 4
    started = time.monotonic()

    def runner_() -> _ThreadRunner | _RayRunner:
        nonlocal runner
        if runner is None:
            if ray is not None:
                runner = _RayRunner(env, options, workers, ray)
            else:
                runner = _ThreadRunner(env, options, workers, propose, make_env)
        return runner

    def plan(state: _State) -> dict[str, Any]:
        tasks = _plan_tasks(env, options, split, names, demos, make_env)
        return {
            "pending": [t.to_dict() for t in tasks],
            "total": len(tasks),
            "done": 0,
            "records": 0,
            "env_steps": 0,
            "failed": {},
            "offset": 0,
            "elapsed_s": 0.0,
        }

    def collect_batch(state: _State) -> dict[str, Any]:
        t0 = time.monotonic()
        tasks = [Task.from_dict(d) for d in state["pending"][:size]]
        results = runner_().run(tasks, k, seed, max_steps)
        records, steps, failed = state["records"], state["env_steps"], dict(state["failed"])
        lines: list[str] = []
        for r in results:
            lines.extend(json.dumps(s.to_dict(), ensure_ascii=False) for s in r.steps)
            records += len(r.steps)
            steps += r.env_steps
            if r.error:
                failed[r.task.id] = r.error
        with rollouts.open("ab") as fh:
            fh.truncate(state["offset"])
            fh.seek(state["offset"])
            if lines:
                fh.write(("\n".join(lines) + "\n").encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
            offset = fh.tell()
        done = state["done"] + len(tasks)
        if progress is not None:
            progress(
                CollectProgress(
                    done,
                    state["total"],
                    records,
                    steps,
                    len(failed),
                    tasks[-1].id if tasks else None,
                )
            )
        return {
            "pending": state["pending"][len(tasks) :],
            "done": done,
            "records": records,
            "env_steps": steps,
            "failed": failed,
            "offset": offset,
            "elapsed_s": state["elapsed_s"] + time.monotonic() - t0,
        }

    def more(state: _State) -> str:
        return "collect" if state["pending"] else END

    graph = StateGraph(_State)
    graph.add_node("plan", plan)
    graph.add_node("collect", collect_batch)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", more, ["collect", END])
    graph.add_conditional_edges("collect", more, ["collect", END])

    con = sqlite3.connect(ckpt, check_same_thread=False)
    saver = SqliteSaver(con)
    app = graph.compile(checkpointer=saver)
    cfg: Any = {"configurable": {"thread_id": "collect"}, "recursion_limit": 1_000_000}
    resumed = False
    try:
        snapshot = app.get_state(cfg)
        if resume and snapshot.values:
            resumed = True
            with rollouts.open("ab") as fh:  # cut back to what the checkpoint covers
                fh.truncate(int(snapshot.values.get("offset", 0)))
            final = app.invoke(None, cfg) if snapshot.next else snapshot.values
        else:
            final = app.invoke(cast(Any, {}), cfg)
    finally:
        if runner is not None:
            runner.close()
        con.close()
    rollouts.touch()
    failed = dict(final.get("failed", {}))
    tmp = failures.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps({"task": t, "reason": r}) + "\n" for t, r in failed.items()))
    tmp.replace(failures)
    elapsed = float(final.get("elapsed_s", time.monotonic() - started))
    return CollectResult(
        out_dir=out,
        rollouts=rollouts,
        tasks=int(final.get("total", 0)),
        records=int(final.get("records", 0)),
        env_steps=int(final.get("env_steps", 0)),
        failed=failed,
        elapsed_s=elapsed,
        resumed=resumed,
        files={"rollouts": rollouts, "failures": failures, "run": out / "run.json"},
    )
