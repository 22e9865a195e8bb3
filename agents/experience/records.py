"""What collection records: one :class:`ExpertStep` per state along an expert trajectory, with
the expert's next state and the K alternatives' next states (:class:`Branch`).

``rollouts.jsonl`` holds one :meth:`ExpertStep.to_dict` per line; the training files (expert,
IWM, reflection) are built from it by :mod:`lemmata.agents.experience.data`.

>>> from lemmata.environments.text import Task
>>> step = ExpertStep(
...     task=Task("textworld-express", "coin", 3, "train"), index=0, instruction="Find the coin.",
...     observation="You are in the kitchen.", history=(),
...     admissible=("take coin", "move west"), action="take coin",
...     expert=Outcome("You take the coin.", score=1.0, success=True, done=True),
...     alternatives=(Branch("move west", Outcome("You are in the corridor."), "admissible"),),
... )
>>> ExpertStep.from_dict(step.to_dict()) == step
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lemmata.environments.base import Observation
from lemmata.environments.text import Task
from lemmata.errors import UsageError

__all__ = ["Branch", "ExpertStep", "Outcome"]

Source = Literal["admissible", "model"]


@dataclass(frozen=True)
class Outcome:
    """The state an action led to: its observation text and the environment's verdict."""

    observation: str
    score: float = 0.0
    success: bool = False
    failure: bool = False
    invalid: bool = False
    done: bool = False

    @classmethod
    def of(cls, obs: Observation) -> Outcome:
        p = obs.payload
        return cls(
            observation=obs.text,
            score=float(p.get("score", 0.0) or 0.0),
            success=bool(p.get("success", False)),
            failure=bool(p.get("failure", False)),
            invalid=bool(p.get("invalid", False)),
            done=bool(obs.done),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "observation": self.observation,
            "score": self.score,
            "success": self.success,
            "failure": self.failure,
            "invalid": self.invalid,
            "done": self.done,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        return cls(
            observation=str(data["observation"]),
            score=float(data.get("score", 0.0)),
            success=bool(data.get("success", False)),
            failure=bool(data.get("failure", False)),
            invalid=bool(data.get("invalid", False)),
            done=bool(data.get("done", False)),
        )


@dataclass(frozen=True)
class Branch:
    """One alternative action taken from an expert state, and where it led."""

    action: str
    outcome: Outcome
    source: Source = "admissible"

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "outcome": self.outcome.to_dict(), "source": self.source}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Branch:
        source = data.get("source", "admissible")
        if source not in ("admissible", "model"):
            raise UsageError(f"a branch's source is 'admissible' or 'model', not {source!r}")
        return cls(str(data["action"]), Outcome.from_dict(data["outcome"]), source)


@dataclass(frozen=True)
class ExpertStep:
    """State ``index`` of an expert trajectory on ``task``.

    ``history`` holds the earlier ``(action, observation)`` pairs of the trajectory (oldest
    first), ``observation`` the current one, ``admissible`` the actions possible here (``None``
    when the environment does not enumerate them), ``action`` the expert's, ``expert`` where it
    led, and ``alternatives`` the K other actions tried from this same state.
    """

    task: Task
    index: int
    instruction: str
    observation: str
    history: tuple[tuple[str, str], ...]
    admissible: tuple[str, ...] | None
    action: str
    expert: Outcome
    alternatives: tuple[Branch, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task.to_dict(),
            "index": self.index,
            "instruction": self.instruction,
            "observation": self.observation,
            "history": [list(pair) for pair in self.history],
            "admissible": None if self.admissible is None else list(self.admissible),
            "action": self.action,
            "expert": self.expert.to_dict(),
            "alternatives": [b.to_dict() for b in self.alternatives],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExpertStep:
        """Read a record back; a malformed one raises :class:`UsageError` naming the field."""
        try:
            admissible = data.get("admissible")
            return cls(
                task=Task.from_dict(data["task"]),
                index=int(data["index"]),
                instruction=str(data["instruction"]),
                observation=str(data["observation"]),
                history=tuple((str(a), str(o)) for a, o in data.get("history", [])),
                admissible=None if admissible is None else tuple(str(a) for a in admissible),
                action=str(data["action"]),
                expert=Outcome.from_dict(data["expert"]),
                alternatives=tuple(Branch.from_dict(b) for b in data.get("alternatives", [])),
            )
        except KeyError as exc:
            raise UsageError(f"rollout record lacks the field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise UsageError(f"rollout record is malformed: {exc}") from None
