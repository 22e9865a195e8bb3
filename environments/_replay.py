"""Branching by replay, shared by the Java text environments (TextWorldExpress, ScienceWorld).

Neither simulator can copy its state, so a snapshot is the task plus the actions taken since its
start, and a fingerprint of the state they led to. Restoring is cheap when it can be: nothing
to do when the environment is already there, only the missing actions when it stands on the
way to the snapshot (the parent of a branch), else a fresh start of the task and a replay of
every action. The fingerprint is then compared, so a replay that drifted (or a snapshot that was
edited) raises :class:`~lemmata.errors.SnapshotError` instead of going on from a wrong state.
"""

from __future__ import annotations

import abc
import hashlib
import shutil
from typing import Any

from lemmata.environments.base import Observation
from lemmata.environments.text import Task, TextEnvironment
from lemmata.errors import LemmataError, SnapshotError, ToolNotFound, UnknownTask, UsageError

__all__ = ["ReplayEnvironment", "fingerprint", "require_java"]

JAVA_INSTALL = "apt-get install openjdk-17-jre-headless (any Java 11+ runtime works)"


def require_java() -> str:
    """The path of ``java``, or :class:`ToolNotFound` saying how to install it."""
    path = shutil.which("java")
    if path is None:
        raise ToolNotFound("java", JAVA_INSTALL)
    return path


def fingerprint(*parts: object) -> str:
    """A short digest of the texts that describe a state."""
    digest = hashlib.blake2b(digest_size=12)
    for part in parts:
        digest.update(str(part).encode())
        digest.update(b"\x00")
    return digest.hexdigest()


class ReplayEnvironment(TextEnvironment):
    """A :class:`TextEnvironment` over a simulator that can only start a task and step.

    Subclasses implement :meth:`_begin` (start a task, optionally computing its gold path),
    :meth:`_act` (one action) and :meth:`_fingerprint`; this class keeps the episode (task,
    actions, last observation) and implements ``reset``, ``step``, ``snapshot`` and ``restore``.
    """

    def __init__(self) -> None:
        self._task: Task | None = None
        self._actions: list[str] = []
        self._obs: Observation | None = None
        self._closed = False
        #: Replays done by :meth:`restore` (full restarts, and actions stepped to get there).
        self.replays = 0
        self.replayed_actions = 0

    # -- what a simulator provides ----------------------------------------------------------
    @abc.abstractmethod
    def _begin(self, task: Task, gold: bool) -> Observation:
        """Start ``task`` from its beginning (validating it), computing its gold path if
        ``gold``; return the first observation (``steps`` 0)."""

    @abc.abstractmethod
    def _act(self, action: str, steps: int) -> Observation:
        """Take ``action`` (already normalised); ``steps`` counts it."""

    @abc.abstractmethod
    def _fingerprint(self) -> str:
        """A digest of the current state, compared by :meth:`restore`."""

    # -- the episode ------------------------------------------------------------------------
    @property
    def task(self) -> Task | None:
        return self._task

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError(f"this {self.name} environment is closed: open a new one")

    def reset(self, task: Task | None = None) -> Observation:
        self._check_open()
        if task is None:
            if self._task is None:
                raise UsageError("reset() needs a task the first time: pass one from tasks()")
            task = self._task
        if task.env != self.name:
            raise UnknownTask(f"task {task.id} belongs to {task.env!r}, not {self.name!r}")
        obs = self._begin(task, gold=True)
        self._task, self._actions, self._obs = task, [], obs
        return obs

    def step(self, action: str | dict[str, Any]) -> Observation:
        self._check_open()
        text = self.action_text(action)
        if self._obs is None:
            raise UsageError("call reset(task) before step()")
        if self._obs.done:
            raise UsageError("the episode is over: reset() or restore() before stepping again")
        obs = self._act(text, len(self._actions) + 1)
        self._actions.append(text)
        self._obs = obs
        return obs

    @property
    def observation(self) -> Observation | None:
        """The last observation (``None`` before the first :meth:`reset`)."""
        return self._obs

    # -- branching --------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        self._check_open()
        if self._task is None or self._obs is None:
            raise UsageError("nothing to snapshot: call reset(task) first")
        return {
            "env": self.name,
            "task": self._task.to_dict(),
            "actions": list(self._actions),
            "observation": self._obs.text,
            "fingerprint": self._fingerprint(),
        }

    def restore(self, state: dict[str, Any]) -> Observation:
        self._check_open()
        task, actions, expected = self._read_snapshot(state)
        here = self._obs if task == self._task else None
        if here is not None and actions == self._actions:
            return here
        # On the way to the snapshot (its parent, say): step only the missing actions.
        on_the_way = (
            here is not None and not here.done and actions[: len(self._actions)] == self._actions
        )
        try:
            if on_the_way:
                todo = actions[len(self._actions) :]
            else:
                self._obs = self._begin(task, gold=False)
                self._task, self._actions = task, []
                self.replays += 1
                todo = actions
            for action in todo:
                self.step(action)
                self.replayed_actions += 1
        except SnapshotError:
            raise
        except LemmataError as exc:
            raise SnapshotError(
                f"cannot restore {task.id} after {len(actions)} actions: {exc}"
            ) from exc
        if self._fingerprint() != expected:
            raise SnapshotError(
                f"replaying {len(actions)} actions of {task.id} reached a different state than the "
                "snapshot recorded (the snapshot was altered, or the simulator is not deterministic)"
            )
        assert self._obs is not None
        return self._obs

    def _read_snapshot(self, state: Any) -> tuple[Task, list[str], str]:
        if not isinstance(state, dict):
            raise SnapshotError(
                f"a {self.name} snapshot is a mapping from snapshot(), not {type(state).__name__}"
            )
        if state.get("env") != self.name:
            raise SnapshotError(f"this snapshot is from {state.get('env')!r}, not {self.name!r}")
        actions = state.get("actions")
        expected = state.get("fingerprint")
        if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
            raise SnapshotError("the snapshot's 'actions' is not a list of texts")
        if not isinstance(expected, str):
            raise SnapshotError("the snapshot has no 'fingerprint' to check the replay against")
        try:
            task = Task.from_dict(state.get("task") or {})
        except UnknownTask as exc:
            raise SnapshotError(f"the snapshot's task is unreadable: {exc}") from exc
        return task, actions, expected

    def close(self) -> None:
        self._closed = True
