"""The ``ChatModel`` protocol and the structured-output loop every model shares."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from lemmata.errors import ModelOutputError
from lemmata.llm.json_extract import JSONNotFound, extract_json
from lemmata.llm.types import ChatResponse, Message, ToolSpec, UsageLog, normalize_messages

__all__ = ["BaseChatModel", "ChatModel", "schema_instruction"]

T = TypeVar("T", bound=BaseModel)


@runtime_checkable
class ChatModel(Protocol):
    """What Lemmata needs of a language model.

    ``name`` identifies the model in output; ``is_scripted`` is true for models that do not
    think (:class:`~lemmata.llm.ScriptedModel`), so that callers can label their output;
    ``usage`` records every call.
    """

    name: str
    is_scripted: bool
    usage: UsageLog

    def chat(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_schema: type[BaseModel] | None = None,
    ) -> ChatResponse: ...

    async def achat(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_schema: type[BaseModel] | None = None,
    ) -> ChatResponse: ...

    def structured(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        schema: type[T],
        *,
        retries: int = 1,
        temperature: float | None = None,
    ) -> T: ...


def schema_instruction(schema: type[BaseModel], *, in_prompt: bool = True) -> str:
    """The system-prompt text that asks for a JSON object matching ``schema``.

    With ``in_prompt=False`` the schema itself is left out, for a provider that is handed it
    as the request's response format and shows it to the model itself: sending it twice costs
    the schema's tokens again on every call.
    """
    if not in_prompt:
        return (
            "Reply with a single JSON object, and nothing else, that validates against the "
            f"{schema.__name__} JSON schema of this request's response format."
        )
    return (
        "Reply with a single JSON object, and nothing else, that validates against this JSON "
        f"schema:\n{json.dumps(schema.model_json_schema(), separators=(',', ':'))}"
    )


class BaseChatModel:
    """Shared behaviour: structured output on top of :meth:`chat`.

    Subclasses implement ``chat`` and ``achat``.
    """

    name: str = "model"
    is_scripted: bool = False

    def __init__(self) -> None:
        self.usage = UsageLog()

    def chat(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_schema: type[BaseModel] | None = None,
    ) -> ChatResponse:
        raise NotImplementedError

    def schema_in_prompt(self, schema: type[BaseModel]) -> bool:
        """Whether :meth:`structured` writes ``schema`` into the system prompt.

        True here: a model that is not handed the schema some other way only learns it from
        the prompt. A model whose provider takes it as the response format says False.
        """
        return True

    def structured(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        schema: type[T],
        *,
        retries: int = 1,
        temperature: float | None = None,
    ) -> T:
        """Ask for a ``schema`` instance and return it validated.

        The reply is read with the tolerant :func:`extract_json`; if it does not validate,
        the validation error is fed back to the model ``retries`` times. After that a
        :class:`~lemmata.errors.ModelOutputError` is raised, holding the last reply.
        """
        convo: list[Message] = [
            {
                "role": "system",
                "content": schema_instruction(schema, in_prompt=self.schema_in_prompt(schema)),
            },
            *normalize_messages(messages),
        ]
        last = ""
        for attempt in range(retries + 1):
            reply = self.chat(convo, temperature=temperature, response_schema=schema)
            last = reply.content or ""
            try:
                return schema.model_validate(extract_json(last, want=dict))
            except (JSONNotFound, ValidationError) as exc:
                problem = _describe(exc)
            if attempt < retries:
                convo = [
                    *convo,
                    {"role": "assistant", "content": last},
                    {
                        "role": "user",
                        "content": "Your reply did not validate against the schema: "
                        f"{problem}\nReply again with the corrected JSON object only.",
                    },
                ]
        raise ModelOutputError(
            f"{self.name} did not return a valid {schema.__name__} after {retries + 1} "
            f"tries: {problem}",
            raw=last,
        )


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:5]:
            loc = ".".join(str(p) for p in err["loc"]) or "(root)"
            parts.append(f"{loc}: {err['msg']}")
        return "; ".join(parts)
    return str(exc)
