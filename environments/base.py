"""The environment protocol: ``reset() / step(action) / snapshot() / restore(state)``.

Observations and actions are text plus a structured payload, so an LLM can read them and code
can act on them. Environments that hold a process or a browser are context managers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Environment", "Observation"]


@dataclass
class Observation:
    """What the agent sees: ``text`` for a model, ``payload`` for code (a screenshot, rows...)."""

    text: str
    payload: dict[str, Any] = field(default_factory=dict)
    done: bool = False


@runtime_checkable
class Environment(Protocol):
    def reset(self) -> Observation: ...

    def step(self, action: dict[str, Any]) -> Observation: ...

    def snapshot(self) -> Any: ...

    def restore(self, state: Any) -> Observation: ...
