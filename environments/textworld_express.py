"""TextWorldExpress (PyPI ``textworld-express``): eight text-game types with generated worlds,
gold action sequences and the valid actions at every step, simulated in a JVM at about a tenth of
a millisecond a step.

>>> with TextWorldExpress(games=["coin"]) as env:           # doctest: +SKIP
...     task = env.tasks("train", limit=1)[0]
...     obs = env.reset(task)
...     obs.payload["admissible"][:2]
['inventory', 'look around']

**Tasks.** A :class:`~lemmata.environments.text.Task` is a game type (``name``), a seed
(``variation``) and the game's parameters (``params``, TextWorldExpress's own
``key=value,...`` string), so a task is self-describing and ``reset(task)`` rebuilds exactly that
world.

**Splits.** TextWorldExpress generates each game from a seed and a fold (train, dev, test: seeds
0-999, 10000-10999 and 20000-20999, with fold-specific object sets in some games).

- ``train``: the train fold's seeds, with the in-distribution parameters (:data:`ID_PARAMS`);
- ``test-id``: the test fold's seeds, with the same parameters;
- ``test-ood``: the test fold's seeds, with harder parameters (:data:`OOD_PARAMS`).
  TextWorldExpress defines no out-of-distribution split; ours makes the worlds larger and adds
  distractors, per game type:

  ============  ===========================================  ==========================================
  game          in distribution (train, test-id)             out of distribution (test-ood)
  ============  ===========================================  ==========================================
  coin          4 rooms, no distractor items                 8 rooms, 4 distractor items
  cookingworld  3 rooms, 2 ingredients, 2 distractor items   5 rooms, 3 ingredients, 5 distractor items
  twc           1 room, 2 items to put away                  3 rooms, 4 items to put away
  mapreader     8 rooms, goal at most 3 apart, no distractor 15 rooms, up to 6 apart, 2 distractors
  simonsays     5 commands, 3 distractor actions             10 commands, 5 distractor actions
  ============  ===========================================  ==========================================

  Doors are off and inventories unlimited in every one. ``arithmetic``, ``sorting`` and
  ``peckingorder`` have no parameter to make harder, so they have no ``test-ood`` tasks.
  Both dictionaries can be overridden per game with the ``params`` and ``ood_params`` options.

**Expert.** :meth:`~TextWorldExpress.gold_actions` is the simulator's gold path without its
leading ``look around`` (most games start their gold path with it; the first observation already
is the room's description). Replaying it completes the task for every game type: checked over
the first 300 seeds of each split and game with the parameters above, and 1000 test seeds of
the OOD coin, cookingworld, simonsays and twc. The longest, 50 actions (an OOD cookingworld),
fits the default ``step_limit`` of 50. In twc the task can complete before the gold path ends.
In coin and twc the simulator's own path is a random walk to the goal, a different one at each
reset (coin's wanders back and forth for up to 35 moves where 3 suffice): there each run of moves
is replaced by the shortest walk to the room it ended in (breadth-first over the simulator, about
30 ms a task), so the expert is the same every time and goes straight. twc's item order can still
differ between resets when several rooms hold items (its test-ood worlds).

**Actions.** ``payload["admissible"]`` is the simulator's valid-action list, sorted. An action
that is not in it (TextWorldExpress matches actions exactly, after lower-casing here) is
``invalid``: the simulator answers "Unknown action" and the step still counts. An episode ends on
success, on failure (e.g. a wrong ingredient cooked, an object sorted out of order) or after
``step_limit`` actions.

**Branching.** :meth:`~TextWorldExpress.snapshot` records the task, the actions and a fingerprint
(observation, room, inventory, valid actions, score); :meth:`~TextWorldExpress.restore` starts
the game again (about 1 ms) and replays the actions (about 0.1 ms each), or only the missing
ones when the environment stands on the way, then checks the fingerprint.

One environment holds one JVM (started in about half a second): use one per thread, and close
it (or use ``with``).
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from lemmata.environments._replay import ReplayEnvironment, fingerprint, require_java
from lemmata.environments.base import Observation
from lemmata.environments.text import SPLITS, Split, Task
from lemmata.errors import MissingDependency, UnknownTask, UsageError

__all__ = ["GAMES", "ID_PARAMS", "OOD_PARAMS", "TextWorldExpress"]

#: The game types TextWorldExpress 1.1 offers.
GAMES: tuple[str, ...] = (
    "arithmetic",
    "coin",
    "cookingworld",
    "mapreader",
    "peckingorder",
    "simonsays",
    "sorting",
    "twc",
)

_NO_EXTRAS = "includeDoors=0,limitInventorySize=0"

#: Game parameters of the ``train`` and ``test-id`` splits.
ID_PARAMS: dict[str, str] = {
    "arithmetic": "",
    "coin": f"numLocations=4,numDistractorItems=0,{_NO_EXTRAS}",
    "cookingworld": f"numLocations=3,numIngredients=2,numDistractorItems=2,{_NO_EXTRAS}",
    "mapreader": f"numLocations=8,maxDistanceApart=3,maxDistractorItemsPerLocation=0,{_NO_EXTRAS}",
    "peckingorder": "",
    "simonsays": "gameLength=5,numDistractors=3,memorization=0",
    "sorting": "",
    "twc": f"numLocations=1,numItemsToPutAway=2,{_NO_EXTRAS}",
}

#: Game parameters of the ``test-ood`` split (larger worlds, more distractors).
OOD_PARAMS: dict[str, str] = {
    "coin": f"numLocations=8,numDistractorItems=4,{_NO_EXTRAS}",
    "cookingworld": f"numLocations=5,numIngredients=3,numDistractorItems=5,{_NO_EXTRAS}",
    "mapreader": f"numLocations=15,maxDistanceApart=6,maxDistractorItemsPerLocation=2,{_NO_EXTRAS}",
    "simonsays": "gameLength=10,numDistractors=5,memorization=0",
    "twc": f"numLocations=3,numItemsToPutAway=4,{_NO_EXTRAS}",
}

_FOLD: dict[Split, str] = {"train": "train", "test-id": "test", "test-ood": "test"}
# Games whose own gold path is a random walk to the goal (a different one at each reset): the
# expert takes the shortest walk instead, the same every time.
_WANDERING_GOLD = frozenset({"coin", "twc"})
_ROOM = re.compile(r"You are in the ([^.]+)\.")


def _room(raw: dict[str, Any]) -> str | None:
    m = _ROOM.search(str(raw.get("look") or "")) or _ROOM.search(str(raw.get("observation") or ""))
    return m[1] if m else None


_UNKNOWN_ACTION = "Unknown action"


class TextWorldExpress(ReplayEnvironment):
    """The TextWorldExpress games as a :class:`~lemmata.environments.text.TextEnvironment`.

    ``games`` limits :meth:`tasks` to some game types (all eight by default); ``step_limit``
    ends an episode after that many actions; ``params`` and ``ood_params`` override the game
    parameters of :data:`ID_PARAMS` and :data:`OOD_PARAMS` per game (a game given ``ood_params``
    gains a ``test-ood`` split); ``verbose`` adds the room's description and the inventory to
    each observation's text when the observation itself does not show them; ``score_line``
    adds the game's score change to the text of the step that changed it ("Your score has just
    gone up." or "... down.", as text games that show a score report it), so that the
    observation itself says when an action (an item put in the wrong place, say) cost points.
    The payload also carries ``look``, ``inventory``, ``game`` and ``view`` (the room's
    description and the inventory: the state as the agent sees it, without the action's answer).
    """

    name: ClassVar[str] = "textworld-express"
    install: ClassVar[str] = "pip install 'lemmata[experience]'"

    def __init__(
        self,
        games: list[str] | None = None,
        step_limit: int = 50,
        params: Mapping[str, str] | None = None,
        ood_params: Mapping[str, str] | None = None,
        verbose: bool = False,
        score_line: bool = False,
    ) -> None:
        super().__init__()
        self.games = list(games) if games is not None else list(GAMES)
        self._check_games(self.games)
        self._check_games(list(params or {}))
        self._check_games(list(ood_params or {}))
        if step_limit < 1:
            raise UsageError(f"step_limit must be at least 1, not {step_limit}")
        self.step_limit = step_limit
        self.verbose = verbose
        self.score_line = score_line
        self.params = {**ID_PARAMS, **(params or {})}
        self.ood_params = {**OOD_PARAMS, **(ood_params or {})}
        try:
            from textworld_express import TextWorldExpressEnv
        except ImportError as exc:
            raise MissingDependency("the TextWorldExpress environment", self.install) from exc
        require_java()
        started = time.perf_counter()
        self._env = TextWorldExpressEnv(envStepLimit=step_limit)
        #: Seconds the JVM took to start.
        self.startup_seconds = time.perf_counter() - started
        self._server = self._env.server
        self._loaded: tuple[str, str] | None = None
        self._seeds: dict[str, list[int]] = {}
        self._gold: dict[str, list[str]] = {}
        self._descriptions: dict[str, str] = {}
        self._raw: dict[str, Any] = {}
        self._admissible: list[str] = []

    @staticmethod
    def _check_games(names: list[str]) -> None:
        unknown = [n for n in names if n not in GAMES]
        if unknown:
            raise UnknownTask(
                f"textworld-express has no game {', '.join(map(repr, unknown))}: choose from {', '.join(GAMES)}"
            )

    # -- tasks --------------------------------------------------------------------------------
    def task_names(self) -> list[str]:
        return list(self.games)

    def split_params(self, game: str, split: Split) -> str | None:
        """The parameters of ``game`` in ``split``, or ``None`` when it has no such split."""
        if split == "test-ood":
            return self.ood_params.get(game)
        return self.params.get(game, "")

    def _fold_seeds(self, fold: str) -> list[int]:
        if fold not in self._seeds:
            getter = {"train": self._server.getSeedsTrain, "test": self._server.getSeedsTest}[fold]
            self._seeds[fold] = sorted(int(s) for s in getter())
        return self._seeds[fold]

    def tasks(
        self, split: Split, names: list[str] | None = None, limit: int | None = None
    ) -> list[Task]:
        self._check_open()
        if split not in SPLITS:
            raise UnknownTask(f"no split {split!r}: choose one of {', '.join(SPLITS)}")
        chosen = list(names) if names is not None else self.games
        self._check_games(chosen)
        seeds = self._fold_seeds(_FOLD[split])
        if limit is not None:
            seeds = seeds[: max(limit, 0)]
        out: list[Task] = []
        for game in chosen:
            params = self.split_params(game, split)
            if params is None:
                continue
            out.extend(Task(self.name, game, seed, split, params) for seed in seeds)
        return out

    # -- the simulator ------------------------------------------------------------------------
    def _load(self, game: str, params: str) -> None:
        if self._loaded == (game, params):
            return
        self._loaded = None
        message = self._server.load(game, params)
        if message:
            raise UnknownTask(
                f"textworld-express game {game!r} rejects the parameters {params!r}: {message.strip()}"
            )
        self._loaded = (game, params)

    def _begin(self, task: Task, gold: bool) -> Observation:
        self._check_games([task.name])
        fold = _FOLD[task.split]
        seeds = self._fold_seeds(fold)
        if task.variation not in seeds:
            raise UnknownTask(
                f"textworld-express has no seed {task.variation} in its {fold} fold "
                f"(the {task.split} split): seeds {seeds[0]}..{seeds[-1]}"
            )
        self._load(task.name, task.params)
        want_gold = gold and task.id not in self._gold
        raw = json.loads(self._server.generateNewGameJSON(task.variation, fold, want_gold))
        if want_gold:
            path = [str(a) for a in self._server.getGoldActionSequence()]
            if path and path[0] == "look around":
                path = path[1:]
            if task.name in _WANDERING_GOLD and any(a.startswith("move ") for a in path):
                path = self._direct(fold, task.variation, path)
                raw = json.loads(self._server.generateNewGameJSON(task.variation, fold, False))
            self._gold[task.id] = path
        if task.id not in self._descriptions:
            self._descriptions[task.id] = str(self._server.getTaskDescription())
        self._task = task
        return self._observe(raw, steps=0, invalid=False)

    def _play(self, fold: str, seed: int, actions: list[str]) -> dict[str, Any]:
        raw: dict[str, Any] = json.loads(self._server.generateNewGameJSON(seed, fold, False))
        for action in actions:
            raw = json.loads(self._server.stepJSON(action))
        return raw

    def _direct(self, fold: str, seed: int, path: list[str]) -> list[str]:
        """``path`` with each run of moves replaced by the shortest walk to the room the run
        ended in (breadth-first over the simulator, moves in sorted order), so the expert goes
        straight where the game's own path wanders; the original path if the result fails."""
        rooms: list[str | None] = []
        raw = self._play(fold, seed, [])
        for action in path:
            raw = json.loads(self._server.stepJSON(action))
            rooms.append(_room(raw))
        direct: list[str] = []
        i = 0
        while i < len(path):
            if not path[i].startswith("move "):
                direct.append(path[i])
                i += 1
                continue
            j = i
            while j < len(path) and path[j].startswith("move "):
                j += 1
            walk = self._walk(fold, seed, direct, rooms[j - 1])
            if walk is None:
                return path
            direct.extend(walk)
            i = j
        end = self._play(fold, seed, direct)
        return direct if end.get("tasksuccess") else path

    def _walk(
        self, fold: str, seed: int, prefix: list[str], target: str | None
    ) -> list[str] | None:
        if target is None:
            return None
        start = _room(self._play(fold, seed, prefix))
        if start == target:
            return []
        seen = {start}
        frontier: list[list[str]] = [[]]
        while frontier and len(seen) < 64:
            nxt: list[list[str]] = []
            for moves in frontier:
                raw = self._play(fold, seed, prefix + moves)
                for action in sorted(a for a in raw["validActions"] if a.startswith("move ")):
                    room = _room(self._play(fold, seed, [*prefix, *moves, action]))
                    if room == target:
                        return [*moves, action]
                    if room not in seen:
                        seen.add(room)
                        nxt.append([*moves, action])
            frontier = nxt
        return None

    def _observe(
        self, raw: dict[str, Any], steps: int, invalid: bool, before: float | None = None
    ) -> Observation:
        assert self._task is not None
        self._raw = raw
        self._admissible = sorted(set(raw["validActions"]))
        success = bool(raw["tasksuccess"])
        failure = bool(raw["taskfailure"]) and not success
        text = str(raw["observation"])
        if self.score_line and before is not None and float(raw["score"]) != before:
            way = "up" if float(raw["score"]) > before else "down"
            text = f"{text.rstrip()}\n\nYour score has just gone {way}."
        look, inventory = str(raw.get("look", "")), str(raw.get("inventory", ""))
        if self.verbose:
            extra = [
                part.strip()
                for part in (look, inventory)
                if part.strip() and part.strip() not in text
            ]
            text = "\n\n".join([text.strip(), *extra])
        payload = {
            "task": self._descriptions[self._task.id],
            "admissible": list(self._admissible),
            "score": min(max(float(raw["score"]), 0.0), 1.0),
            "success": success,
            "failure": failure,
            "invalid": invalid,
            "steps": steps,
            "look": look,
            "inventory": inventory,
            "view": f"{look.strip()}\n\n{inventory.strip()}",
            "game": self._task.name,
        }
        return Observation(text, payload, done=success or failure or steps >= self.step_limit)

    def _act(self, action: str, steps: int) -> Observation:
        allowed = set(self._admissible)
        if action not in allowed and action.lower() in allowed:
            action = action.lower()
        before = float(self._raw.get("score", 0.0))
        raw = json.loads(self._server.stepJSON(action))
        invalid = action not in allowed or str(raw["observation"]).startswith(_UNKNOWN_ACTION)
        return self._observe(raw, steps, invalid, before)

    def _fingerprint(self) -> str:
        raw = self._raw
        return fingerprint(
            raw.get("observation"),
            raw.get("look"),
            raw.get("inventory"),
            self._admissible,
            raw.get("scoreRaw"),
        )

    # -- the episode --------------------------------------------------------------------------
    def admissible_actions(self) -> list[str] | None:
        if self._obs is None:
            return None
        return list(self._admissible)

    def gold_actions(self) -> list[str] | None:
        self._check_open()
        task = self._task
        if task is None:
            return None
        if task.id not in self._gold:
            # The episode was entered by restore(): compute the path, then come back.
            here = self.snapshot()
            self._begin(task, gold=True)
            self._actions, self._obs = [], None
            self.restore(here)
        return list(self._gold[task.id])

    def close(self) -> None:
        if not self._closed:
            with contextlib.suppress(Exception):
                self._env.close()
            # the simulator's own __del__ closes again, into a closed pipe: once is enough
            self._env.close = lambda: None
        super().close()
