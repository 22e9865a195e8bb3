"""Text environments with tasks, expert (gold) actions and branching: what early experience
learns from.

A :class:`TextEnvironment` is an :class:`~lemmata.environments.base.Environment` whose
observations and actions are text, that knows its tasks (:class:`Task`, split into ``train``,
``test-id`` and ``test-ood`` as the environment defines them), gives the expert's action
sequence for a task when it has one, lists the admissible actions at a state when it can
enumerate them, and can branch: :meth:`~TextEnvironment.snapshot` returns a JSON-able state and
:meth:`~TextEnvironment.restore` returns to it (by the simulator's own serialisation where it has
one, else by replaying the actions from the task's start and checking that the observation
matches).

Every observation carries the same payload keys, so code reads any environment the same way:

============== ==================================================================
key            meaning
============== ==================================================================
``task``       the task's instruction (text)
``admissible`` the admissible actions here (a list), or ``None`` when not enumerable
``score``      the environment's progress score, 0..1
``success``    the task was completed (``done`` is then true as well)
``failure``    the task can no longer be completed (``done`` is then true as well)
``invalid``    the last action was not understood or not possible here
``steps``      actions taken since :meth:`~TextEnvironment.reset`
============== ==================================================================

An environment may add ``view``: what the agent sees of the world's state (text), without the
last action's answer (TextWorldExpress: the room's description and the inventory; the prover:
the goals), so that code can tell when two steps stand in the same state although their
observations differ (``You open the box.`` then ``You close the box.`` lead back to one view).
Code that compares states reads ``view`` and falls back to the observation's text.

Environments are opened by name with :func:`open_environment`; each hold a process (a JVM for
the Java simulators), so they are context managers and must be closed.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from lemmata.environments.base import Observation
from lemmata.errors import UnknownTask, UsageError

__all__ = [
    "SPLITS",
    "Split",
    "Task",
    "TextEnvironment",
    "environment_names",
    "iter_gold",
    "open_environment",
    "register_environment",
]

Split = Literal["train", "test-id", "test-ood"]
SPLITS: tuple[Split, ...] = ("train", "test-id", "test-ood")


@dataclass(frozen=True)
class Task:
    """One task variation: ``env`` (environment name), ``name`` (task or game type),
    ``variation`` (the environment's index or seed), ``split`` and environment-specific
    ``params`` (e.g. TextWorldExpress game parameters)."""

    env: str
    name: str
    variation: int
    split: Split
    params: str = ""

    @property
    def id(self) -> str:
        """``env/name/variation`` (plus ``?params`` when set): unique within a run."""
        base = f"{self.env}/{self.name}/{self.variation}"
        return f"{base}?{self.params}" if self.params else base

    def to_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "name": self.name,
            "variation": self.variation,
            "split": self.split,
            "params": self.params,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        try:
            split = data["split"]
            if split not in SPLITS:
                raise UnknownTask(f"task split {split!r} is not one of {', '.join(SPLITS)}")
            return cls(
                env=str(data["env"]),
                name=str(data["name"]),
                variation=int(data["variation"]),
                split=split,
                params=str(data.get("params", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UnknownTask(
                f"not a task record (needs env, name, variation, split): {data!r}"
            ) from exc


class TextEnvironment(abc.ABC):
    """The base of the text environments; see the module's documentation for the payload."""

    #: The name :func:`open_environment` knows it by.
    name: ClassVar[str]
    #: The command that installs what it needs (shown when something is missing).
    install: ClassVar[str]

    # -- tasks --------------------------------------------------------------------------------
    @abc.abstractmethod
    def task_names(self) -> list[str]:
        """The task (or game) types this environment offers."""

    @abc.abstractmethod
    def tasks(
        self, split: Split, names: list[str] | None = None, limit: int | None = None
    ) -> list[Task]:
        """Task variations of ``split`` (every type, or only ``names``), at most ``limit`` of
        each type, in a fixed order. Unknown names raise :class:`UnknownTask`."""

    # -- episodes -----------------------------------------------------------------------------
    @abc.abstractmethod
    def reset(self, task: Task | None = None) -> Observation:
        """Start ``task`` (the current one again when ``None``)."""

    @abc.abstractmethod
    def step(self, action: str | dict[str, Any]) -> Observation:
        """Take one action (text, or ``{"action": text}``)."""

    @abc.abstractmethod
    def admissible_actions(self) -> list[str] | None:
        """The actions possible at the current state, or ``None`` when not enumerable."""

    @abc.abstractmethod
    def gold_actions(self) -> list[str] | None:
        """The expert's action sequence for the current task from its start, or ``None``."""

    @abc.abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """A JSON-able description of the current state, for :meth:`restore`."""

    @abc.abstractmethod
    def restore(self, state: dict[str, Any]) -> Observation:
        """Return to a state from :meth:`snapshot`; raises :class:`SnapshotError` when it cannot
        (or when the replay reaches a different state)."""

    @property
    @abc.abstractmethod
    def task(self) -> Task | None:
        """The current task, ``None`` before the first :meth:`reset`."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Stop the simulator's process; the environment cannot be used afterwards."""

    def __enter__(self) -> TextEnvironment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def action_text(action: str | dict[str, Any]) -> str:
        """The action as text: a string, or a mapping's ``action`` entry."""
        if isinstance(action, dict):
            action = action.get("action", "")
        if not isinstance(action, str):
            raise UsageError(
                f"an action is text or {{'action': text}}, not {type(action).__name__}"
            )
        return " ".join(action.split())


_FACTORIES: dict[str, Callable[..., TextEnvironment]] = {}


def register_environment(name: str, factory: Callable[..., TextEnvironment]) -> None:
    """Make ``open_environment(name)`` build an environment with ``factory(**options)``."""
    _FACTORIES[name] = factory


def _builtin() -> None:
    if _FACTORIES:
        return
    from lemmata.environments import proof_env, scienceworld, textworld_express

    register_environment(
        textworld_express.TextWorldExpress.name, textworld_express.TextWorldExpress
    )
    register_environment(scienceworld.ScienceWorld.name, scienceworld.ScienceWorld)
    register_environment(proof_env.ProofEnvironment.name, proof_env.ProofEnvironment)


def environment_names() -> list[str]:
    """The names :func:`open_environment` accepts."""
    _builtin()
    return sorted(_FACTORIES)


def open_environment(name: str, **options: Any) -> TextEnvironment:
    """The environment called ``name`` (see :func:`environment_names`), built with ``options``.

    A missing package raises :class:`~lemmata.errors.MissingDependency` with the command that
    installs it; an option the environment does not take raises :class:`UsageError` naming the
    options it does take.
    """
    _builtin()
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise UnknownTask(
            f"no environment called {name!r}: choose one of {', '.join(sorted(_FACTORIES))}"
        ) from None
    _check_options(name, factory, options)
    return factory(**options)


def _check_options(name: str, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a factory without a readable signature takes its chances
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    takes = [
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise UsageError(
            f"{name} has no option {', '.join(map(repr, unknown))}: "
            f"it takes {', '.join(takes) or 'none'}"
        )


def iter_gold(env: TextEnvironment, task: Task) -> Iterator[tuple[Observation, str, Observation]]:
    """Walk ``task``'s expert trajectory: ``(observation, expert action, next observation)``."""
    obs = env.reset(task)
    gold = env.gold_actions()
    if gold is None:
        raise UnknownTask(f"{env.name} has no expert actions for {task.id}")
    for action in gold:
        if obs.done:
            break
        nxt = env.step(action)
        yield obs, action, nxt
        obs = nxt
