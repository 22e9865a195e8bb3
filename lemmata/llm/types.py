"""The values the LLM layer passes around: messages, tools, tool calls, replies and usage."""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, get_type_hints

from pydantic import BaseModel, create_model

__all__ = [
    "ChatResponse",
    "Message",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "UsageLog",
    "normalize_messages",
]

Role = Literal["system", "user", "assistant", "tool"]
_ROLES = {"system", "user", "assistant", "tool"}


class Message(TypedDict, total=False):
    """A chat message in the OpenAI format that litellm speaks."""

    role: Role
    content: str | None
    name: str
    tool_calls: list[dict[str, Any]]
    tool_call_id: str


def normalize_messages(messages: str | Iterable[Mapping[str, Any]]) -> list[Message]:
    """Check a conversation and return it as a list of plain dicts.

    A bare string is one user message. Raises ``ValueError`` naming the bad message.
    """
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out: list[Message] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise ValueError(f"message {i} is a {type(m).__name__}, expected a dict with 'role'")
        role = m.get("role")
        if role not in _ROLES:
            raise ValueError(f"message {i} has role {role!r}; expected one of {sorted(_ROLES)}")
        content = m.get("content")
        if content is not None and not isinstance(content, str | list):
            raise ValueError(f"message {i} content must be text, got {type(content).__name__}")
        if role == "tool" and not m.get("tool_call_id"):
            raise ValueError(f"message {i} is a tool result without 'tool_call_id'")
        out.append(dict(m))  # type: ignore[arg-type]
    if not out:
        raise ValueError("the conversation is empty")
    return out


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: a name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]

    @classmethod
    def from_function(cls, fn: Callable[..., Any], name: str | None = None) -> ToolSpec:
        """Describe a typed Python function as a tool; its docstring's first paragraph is
        the description.

        >>> def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> ToolSpec.from_function(add).parameters["required"]
        ['a', 'b']
        """
        hints = get_type_hints(fn)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(fn).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            annotation = hints.get(pname, Any)
            default = ... if param.default is param.empty else param.default
            fields[pname] = (annotation, default)
        args_model = create_model(f"{fn.__name__}_args", **fields)
        schema = args_model.model_json_schema()
        schema.pop("title", None)
        doc = inspect.getdoc(fn) or fn.__name__
        return cls(name or fn.__name__, doc.split("\n\n")[0].strip(), schema)

    @classmethod
    def from_model(cls, model: type[BaseModel], name: str | None = None) -> ToolSpec:
        """Describe a tool whose arguments are a pydantic model."""
        schema = model.model_json_schema()
        schema.pop("title", None)
        return cls(name or model.__name__, inspect.getdoc(model) or model.__name__, schema)

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for. ``arguments`` is the parsed JSON object."""

    id: str
    name: str
    arguments: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments)},
        }


@dataclass(frozen=True)
class Usage:
    """Tokens and cost of one call. ``cost_usd`` is ``None`` when the price is unknown
    (local servers, scripted models); ``estimated`` marks counts that are not the provider's."""

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    attempts: int = 1
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class UsageLog:
    """Every call's :class:`Usage`, with totals. Thread-safe."""

    records: list[Usage] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.records.append(usage)

    @property
    def calls(self) -> int:
        return len(self.records)

    @property
    def prompt_tokens(self) -> int:
        return sum(u.prompt_tokens for u in self.records)

    @property
    def completion_tokens(self) -> int:
        return sum(u.completion_tokens for u in self.records)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost_usd(self) -> float | None:
        """Total cost, or ``None`` when no call had a known price."""
        costs = [u.cost_usd for u in self.records if u.cost_usd is not None]
        return sum(costs) if costs else None

    def summary(self) -> str:
        cost = "n/a" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        return (
            f"{self.calls} calls, {self.prompt_tokens} prompt + {self.completion_tokens} "
            f"completion tokens, cost {cost}"
        )


@dataclass(frozen=True)
class ChatResponse:
    """A model's reply. ``scripted`` is true when no real model produced it."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    model: str = ""
    usage: Usage | None = None
    scripted: bool = False

    def to_message(self) -> Message:
        """The reply as an assistant message, to append to the conversation."""
        msg: Message = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_openai() for c in self.tool_calls]
        return msg
