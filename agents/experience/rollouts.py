"""Rollouts: walk a task's expert trajectory and, at each state, try K alternatives of the
agent's own from a snapshot of that state, recording where each led.

This is the environment-facing core of collection; :mod:`lemmata.agents.experience.collection`
runs it over many tasks (checkpointed, in parallel) and writes the files.

Alternatives come from the admissible actions when the environment enumerates them (a seeded
draw, no model call), otherwise from ``propose`` (a model asked once for several distinct
candidates, see :func:`lemmata.agents.experience.llm.propose_alternatives`). K = 0 records the
expert trajectory alone.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lemmata.agents.experience.records import Branch, ExpertStep, Outcome
from lemmata.environments.text import Task, TextEnvironment
from lemmata.errors import LemmataError, UsageError

__all__ = ["Proposer", "TaskRollout", "canonical_action", "choose_alternatives", "roll_out"]

#: ``propose(instruction, observation, history, expert_action, k) -> candidate actions``.
Proposer = Callable[[str, str, Sequence[tuple[str, str]], str, int], list[str]]

_PUNCT = re.compile(r"[^\w\s]")


def canonical_action(action: str) -> str:
    """An action's canonical form for comparison: lower case, no punctuation, single spaces.

    >>> canonical_action("  Open  the Door! ")
    'open the door'
    """
    return " ".join(_PUNCT.sub(" ", action.lower()).split())


def choose_alternatives(
    admissible: Sequence[str], expert: str, k: int, rng: random.Random
) -> list[str]:
    """``k`` distinct admissible actions other than ``expert``, drawn with ``rng``.

    >>> choose_alternatives(["a", "b", "c"], "b", 5, random.Random(0))
    ['a', 'c']
    """
    if k < 0:
        raise UsageError(f"K (alternatives per state) must be 0 or more, not {k}")
    seen = {canonical_action(expert)}
    pool = []
    for action in admissible:
        key = canonical_action(action)
        if key not in seen:
            seen.add(key)
            pool.append(action)
    if len(pool) <= k:
        return pool
    return rng.sample(pool, k)


@dataclass
class TaskRollout:
    """One task's records, how many environment steps they took, and why it stopped early
    (``error`` is ``None`` when the whole expert trajectory was walked)."""

    task: Task
    steps: list[ExpertStep] = field(default_factory=list)
    env_steps: int = 0
    success: bool = False
    error: str | None = None


def roll_out(
    env: TextEnvironment,
    task: Task,
    k: int,
    rng: random.Random,
    *,
    propose: Proposer | None = None,
    max_steps: int | None = None,
) -> TaskRollout:
    """Walk ``task``'s expert trajectory in ``env``, trying ``k`` alternatives at each state.

    A failure of the environment (a snapshot that cannot be restored, a simulator error) ends
    this task with ``error`` set and keeps the records made so far; it never raises for one
    task's trouble. ``max_steps`` caps the trajectory's length.
    """
    if k < 0:
        raise UsageError(f"K (alternatives per state) must be 0 or more, not {k}")
    out = TaskRollout(task)
    try:
        obs = env.reset(task)
        gold = env.gold_actions()
    except LemmataError as exc:
        out.error = str(exc)
        return out
    if not gold:
        out.error = f"{env.name} gives no expert actions for {task.id}"
        return out
    history: list[tuple[str, str]] = []
    instruction = str(obs.payload.get("task", ""))
    for index, action in enumerate(gold):
        if obs.done or (max_steps is not None and index >= max_steps):
            break
        try:
            admissible = env.admissible_actions()
            if admissible is not None and k:
                chosen = choose_alternatives(admissible, action, k, rng)
                source = "admissible"
            elif propose is not None and k:
                chosen = _proposed(propose, instruction, obs.text, history, action, k)
                source = "model"
            else:
                chosen, source = [], "admissible"
            branches: list[Branch] = []
            if chosen:
                state = env.snapshot()
                for alt in chosen:
                    branches.append(Branch(alt, Outcome.of(env.step(alt)), source))  # type: ignore[arg-type]
                    out.env_steps += 1
                    env.restore(state)
            nxt = env.step(action)
            out.env_steps += 1
        except LemmataError as exc:
            out.error = f"step {index} ({action!r}): {exc}"
            return out
        except Exception as exc:  # a simulator's own failure ends this task only
            out.error = f"step {index} ({action!r}): {type(exc).__name__}: {exc}"
            return out
        out.steps.append(
            ExpertStep(
                task=task,
                index=index,
                instruction=instruction,
                observation=obs.text,
                history=tuple(history),
                admissible=None if admissible is None else tuple(admissible),
                action=action,
                expert=Outcome.of(nxt),
                alternatives=tuple(branches),
            )
        )
        history.append((action, nxt.text))
        obs = nxt
    out.success = bool(obs.payload.get("success", False))
    return out


def _proposed(
    propose: Proposer,
    instruction: str,
    observation: str,
    history: Sequence[tuple[str, str]],
    expert: str,
    k: int,
) -> list[str]:
    seen = {canonical_action(expert)}
    chosen: list[str] = []
    for action in propose(instruction, observation, history, expert, k):
        key = canonical_action(action)
        if key and key not in seen:
            seen.add(key)
            chosen.append(action)
    return chosen[:k]
