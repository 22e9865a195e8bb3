"""``ScriptedModel``: a model that answers from a script, for tests, demos and notebooks.

It never thinks: every reply it gives is marked ``scripted=True``, its name is
``scripted:<label>``, and the shell and CLI print that label beside its output. Use it where a
real model is not the point (an agent loop's control flow, a notebook on the offline path),
never in place of one without saying so.

The script is one of:

- a list: replies in order (running out raises :class:`~lemmata.errors.ModelCallFailed`);
- a mapping: the reply whose key is the last user message, or, failing that, the first key
  that occurs in it; ``"*"`` is the fallback;
- a function ``(messages, tools) -> reply``.

A reply is a string (the content), a dict with ``content`` and/or ``tool_calls``
(``[{"name": ..., "arguments": {...}}]``), a :class:`ChatResponse`, or an exception instance,
which is raised, to script failures.

>>> m = ScriptedModel([{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "3"])
>>> m.chat("what is 1 + 2?").tool_calls[0].name
'add'
>>> m.chat("...").content
'3'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from lemmata.errors import ModelCallFailed
from lemmata.llm.base import BaseChatModel
from lemmata.llm.types import ChatResponse, Message, ToolCall, ToolSpec, Usage, normalize_messages

__all__ = ["ScriptedModel"]

Reply = str | Mapping[str, Any] | ChatResponse | BaseException
Script = (
    Sequence[Reply] | Mapping[str, Reply] | Callable[[list[Message], Sequence[ToolSpec]], Reply]
)


class ScriptedModel(BaseChatModel):
    """A deterministic model that replies from ``script``; see the module docstring."""

    is_scripted = True

    def __init__(self, script: Script, *, label: str = "script") -> None:
        super().__init__()
        self.name = f"scripted:{label}"
        self._lock = threading.Lock()
        self._calls = 0
        self.requests: list[list[Message]] = []
        if callable(script):
            self._fn: Callable[[list[Message], Sequence[ToolSpec]], Reply] | None = script
            self._list: list[Reply] | None = None
            self._map: Mapping[str, Reply] | None = None
        elif isinstance(script, Mapping):
            self._fn, self._list, self._map = None, None, dict(script)
        elif isinstance(script, Sequence) and not isinstance(script, str):
            self._fn, self._list, self._map = None, list(script), None
        else:
            raise TypeError("script must be a list of replies, a mapping or a function")

    @property
    def remaining(self) -> int | None:
        """Replies left in a list script; ``None`` for mappings and functions."""
        return None if self._list is None else len(self._list) - self._calls

    def __repr__(self) -> str:
        left = "" if self.remaining is None else f", {self.remaining} replies left"
        return f"ScriptedModel({self.name!r}{left})"

    def chat(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_schema: type[BaseModel] | None = None,
    ) -> ChatResponse:
        convo = normalize_messages(messages)
        with self._lock:
            self.requests.append(convo)
            reply = self._next(convo, list(tools or ()))
            self._calls += 1
        if isinstance(reply, BaseException):
            raise reply
        response = _to_response(reply, self.name, self._calls)
        prompt_words = sum(len(str(m.get("content") or "").split()) for m in convo)
        usage = Usage(
            model=self.name,
            prompt_tokens=prompt_words,
            completion_tokens=len((response.content or "").split()),
            estimated=True,
        )
        self.usage.add(usage)
        return ChatResponse(
            content=response.content,
            tool_calls=response.tool_calls,
            finish_reason=response.finish_reason
            or ("tool_calls" if response.tool_calls else "stop"),
            model=self.name,
            usage=usage,
            scripted=True,
        )

    async def achat(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_schema: type[BaseModel] | None = None,
    ) -> ChatResponse:
        return self.chat(messages, tools=tools, temperature=temperature, max_tokens=max_tokens)

    def _next(self, convo: list[Message], tools: list[ToolSpec]) -> Reply:
        if self._fn is not None:
            return self._fn(convo, tools)
        if self._list is not None:
            if self._calls >= len(self._list):
                return ModelCallFailed(
                    f"{self.name} ran out of replies after {len(self._list)}: add more to its script"
                )
            return self._list[self._calls]
        assert self._map is not None
        last_user = next(
            (str(m.get("content") or "") for m in reversed(convo) if m["role"] == "user"), ""
        )
        if last_user in self._map:
            return self._map[last_user]
        for key, reply in self._map.items():
            if key != "*" and key in last_user:
                return reply
        if "*" in self._map:
            return self._map["*"]
        return ModelCallFailed(f"{self.name} has no reply for {last_user[:60]!r}")


def _to_response(reply: Reply, name: str, call_no: int) -> ChatResponse:
    if isinstance(reply, ChatResponse):
        return reply
    if isinstance(reply, str):
        return ChatResponse(content=reply, model=name)
    if isinstance(reply, Mapping):
        calls = tuple(
            ToolCall(
                id=str(c.get("id") or f"call_{call_no}_{i}"),
                name=str(c["name"]),
                arguments=dict(c.get("arguments") or {}),
            )
            for i, c in enumerate(reply.get("tool_calls") or ())
        )
        return ChatResponse(content=reply.get("content"), tool_calls=calls, model=name)
    raise TypeError(
        f"a scripted reply must be a str, dict, ChatResponse or exception, not {reply!r}"
    )
