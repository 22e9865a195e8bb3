"""ScienceWorld (PyPI ``scienceworld``): 30 elementary-science tasks (boil water, find a living
thing, test conductivity...) in a simulated house with hundreds of objects, in a JVM; one of the
eight environments of the early-experience paper.

>>> with ScienceWorld(names=["find-living-thing"]) as env:  # doctest: +SKIP
...     task = env.tasks("train", limit=1)[0]
...     obs = env.reset(task)
...     env.gold_actions()[:2]
['open door to greenhouse', 'go to greenhouse']

**Tasks.** ``name`` is one of ScienceWorld's 30 task names (:meth:`~ScienceWorld.task_names`),
``variation`` its variation index, ``params`` the simplifications it runs with (ScienceWorld's
comma-separated string: ``teleportAction``, ``openDoors``... or ``easy`` for all of them; none by
default; ETO ran with ``easy``).

**Splits.** ScienceWorld divides every task's variations into train, dev and test sets. As in
ETO (Song et al., "Trial and Error: Exploration-Based Trajectory Optimization for LLM Agents",
ACL 2024; its ``eval_agent/data/sciworld/{train,dev,test}_indices.json``) and the works that
follow it (AgentGym, the early-experience paper): ``train`` is the train variations,
``test-id`` the dev variations ("seen": in-distribution) and ``test-ood`` the test variations
("unseen": e.g. other substances, animals and rooms than training saw).

**Expert.** :meth:`~ScienceWorld.gold_actions` is the simulator's gold path, computed on first
request for a task (0.1 s to 10 s, then cached), and it contains the ``0`` answers to
ScienceWorld's "Ambiguous request" questions. Replaying it completes the task: checked on one
variation of every split for all 30 tasks. Some are long (inclined-plane and Mendelian genetics
tasks: 100 to 190 actions; some test variations of boil, freeze, grow-fruit: 60 to 90), so raise
``step_limit`` (100 by default) for them.

**Actions.** The admissible actions are ScienceWorld's valid action-object combinations, sorted
(hundreds, up to a few thousand with ``easy``). Enumerating them costs 10 to 250 ms, more than a
step, so :meth:`~ScienceWorld.admissible_actions` computes them on request and keeps them until
the state changes; ``payload["admissible"]`` is ``None`` unless ``eager_admissible=True``. The
list is not exhaustive: ScienceWorld also accepts other phrasings of the same actions (the gold
paths use some, like ``focus on thermometer in inventory``), so ``invalid`` is what the
simulator says: "No known action matches that input" or "Unknown action". A wrong ``focus on``
fails the task (score below zero): ``failure`` and ``done``. During an "Ambiguous request" the
admissible actions are the numbers offered.

**Branching.** ScienceWorld cannot copy its state: :meth:`~ScienceWorld.snapshot` records the
actions and a fingerprint (the words of the observation, room and inventory, and the score: a
reload can list a room's objects in another order); :meth:`~ScienceWorld.restore`
reloads the task without a gold path (20 to 200 ms) and replays the actions (3 to 30 ms each),
or only the missing ones when the environment stands on the way, then checks the fingerprint.

One environment holds one JVM (started in under a second; ``startup_seconds`` says how long):
reuse it across tasks, use one per thread, and close it (or use ``with``).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from lemmata.environments._replay import ReplayEnvironment, fingerprint, require_java
from lemmata.environments.base import Observation
from lemmata.environments.text import SPLITS, Split, Task
from lemmata.errors import MissingDependency, UnknownTask, UsageError

__all__ = ["ScienceWorld"]

_NOT_UNDERSTOOD = ("No known action matches that input", "Unknown action")


class ScienceWorld(ReplayEnvironment):
    """The ScienceWorld tasks as a :class:`~lemmata.environments.text.TextEnvironment`.

    ``names`` limits :meth:`tasks` to some task names (all 30 by default); ``step_limit`` ends
    an episode after that many actions; ``simplifications`` is ScienceWorld's simplification
    string (``""``, ``"easy"``, ``"openDoors,teleportAction"``...); ``eager_admissible`` puts
    the admissible actions in every observation's payload (slow; see the module's notes). The
    payload also carries ``look`` (only with ``eager_admissible``: it costs a call) and
    ``moves`` (ScienceWorld's own move counter).
    """

    name: ClassVar[str] = "scienceworld"
    install: ClassVar[str] = "pip install 'lemmata[experience]'"

    def __init__(
        self,
        names: list[str] | None = None,
        step_limit: int = 100,
        simplifications: str = "",
        eager_admissible: bool = False,
    ) -> None:
        super().__init__()
        if step_limit < 1:
            raise UsageError(f"step_limit must be at least 1, not {step_limit}")
        self.step_limit = step_limit
        self.eager_admissible = eager_admissible
        try:
            from scienceworld import ScienceWorldEnv
        except ImportError as exc:
            raise MissingDependency("the ScienceWorld environment", self.install) from exc
        require_java()
        started = time.perf_counter()
        self._env = ScienceWorldEnv("", envStepLimit=step_limit)
        #: Seconds the JVM took to start.
        self.startup_seconds = time.perf_counter() - started
        self._server = self._env.server
        self._all_names = sorted(str(n) for n in self._server.getTaskNames())
        try:
            self.names = self._check_names(list(names) if names is not None else self._all_names)
            self.simplifications = self._check_simplifications(simplifications)
        except Exception:
            self._env.close()
            raise
        self._variations: dict[str, dict[Split, list[int]]] = {}
        self._gold: dict[str, list[str]] = {}
        self._descriptions: dict[str, str] = {}
        self._admissible: list[str] | None = None
        self._score = 0.0

    def _check_names(self, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in self._all_names]
        if unknown:
            raise UnknownTask(
                f"scienceworld has no task {', '.join(map(repr, unknown))}: choose from {', '.join(self._all_names)}"
            )
        return names

    def _check_simplifications(self, text: str) -> str:
        known = ["easy", *str(self._server.getPossibleSimplifications()).split(", ")]
        unknown = [s for s in text.split(",") if s and s not in known]
        if unknown:
            raise UsageError(
                f"unknown ScienceWorld simplification {unknown[0]!r}: choose from {', '.join(known)}"
            )
        return text

    # -- tasks --------------------------------------------------------------------------------
    def task_names(self) -> list[str]:
        return list(self.names)

    def variations(self, name: str) -> dict[Split, list[int]]:
        """``name``'s variation indices by split (ScienceWorld tells them once the task is
        loaded: the first call per task costs a load, and the current episode is replayed)."""
        self._check_names([name])
        if name in self._variations:
            return self._variations[name]
        here = self.snapshot() if self._obs is not None else None
        found = self._split_variations(name)
        if here is not None:
            self.restore(here)
        return found

    def _split_variations(self, name: str) -> dict[Split, list[int]]:
        if name not in self._variations:
            self._server.load(name, 0, self.simplifications, False)
            self._obs = None  # the simulator no longer holds the current episode
            self._variations[name] = {
                "train": [int(v) for v in self._server.getVariationsTrain()],
                "test-id": [int(v) for v in self._server.getVariationsDev()],
                "test-ood": [int(v) for v in self._server.getVariationsTest()],
            }
        return self._variations[name]

    def tasks(
        self, split: Split, names: list[str] | None = None, limit: int | None = None
    ) -> list[Task]:
        self._check_open()
        if split not in SPLITS:
            raise UnknownTask(f"no split {split!r}: choose one of {', '.join(SPLITS)}")
        chosen = self._check_names(list(names) if names is not None else self.names)
        out: list[Task] = []
        for name in chosen:
            indices = self.variations(name)[split]
            if limit is not None:
                indices = indices[: max(limit, 0)]
            out.extend(Task(self.name, name, v, split, self.simplifications) for v in indices)
        return out

    # -- the simulator ------------------------------------------------------------------------
    def _load(self, task: Task, gold: bool) -> None:
        self._check_names([task.name])
        self._check_simplifications(task.params)
        allowed = self._split_variations(task.name)[task.split]
        if task.variation not in allowed:
            raise UnknownTask(
                f"scienceworld task {task.name!r} has no variation {task.variation} in {task.split} "
                f"(its {task.split} variations: {', '.join(map(str, allowed))})"
            )
        self._server.load(task.name, task.variation, task.params, gold)

    def _begin(self, task: Task, gold: bool) -> Observation:
        # The gold path is computed on request (it can take seconds): gold_actions().
        self._load(task, gold=False)
        self._task = task
        if task.id not in self._descriptions:
            self._descriptions[task.id] = str(self._server.getTaskDescription())
        # "look around" takes no time in ScienceWorld: the first observation, not a step.
        return self._observe(str(self._server.step("look around")), steps=0)

    def _observe(self, text: str, steps: int) -> Observation:
        assert self._task is not None
        self._admissible = None
        raw_score = float(self._server.getScore())
        self._score = raw_score
        failure = raw_score < 0
        success = bool(self._server.getCompleted()) and not failure
        invalid = text.strip().startswith(_NOT_UNDERSTOOD)
        payload: dict[str, Any] = {
            "task": self._descriptions[self._task.id],
            "admissible": None,
            "score": min(max(raw_score, 0.0), 1.0),
            "success": success,
            "failure": failure,
            "invalid": invalid,
            "steps": steps,
            "moves": int(self._server.getNumMoves()),
        }
        if self.eager_admissible:
            payload["admissible"] = self._enumerate()
            payload["look"] = str(self._server.freeActionLook())
        return Observation(text, payload, done=success or failure or steps >= self.step_limit)

    def _act(self, action: str, steps: int) -> Observation:
        return self._observe(str(self._server.step(action)), steps)

    def _enumerate(self) -> list[str]:
        if self._admissible is None:
            self._admissible = sorted(
                {str(a) for a in self._server.getValidActionObjectCombinations()}
            )
        return self._admissible

    def _fingerprint(self) -> str:
        assert self._obs is not None
        # ScienceWorld lists a room's objects in an order that changes from one load to the
        # next (the same state, another text): compare the words, not their order.
        texts = (self._obs.text, self._server.freeActionLook(), self._server.freeActionInventory())
        return fingerprint(*(sorted(str(t).split()) for t in texts), self._score)

    # -- the episode --------------------------------------------------------------------------
    def admissible_actions(self) -> list[str] | None:
        """The valid actions here, sorted; computed once per state (10 to 250 ms)."""
        self._check_open()
        if self._obs is None:
            return None
        return list(self._enumerate())

    def gold_actions(self) -> list[str] | None:
        self._check_open()
        task = self._task
        if task is None:
            return None
        if task.id not in self._gold:
            here = self.snapshot()
            self._load(task, gold=True)
            self._gold[task.id] = [str(a) for a in self._server.getGoldActionSequence()]
            self._obs = None  # the simulator now stands at the task's start: replay to come back
            self.restore(here)
        return list(self._gold[task.id])

    def close(self) -> None:
        if not self._closed:
            self._env.close()
        super().close()
