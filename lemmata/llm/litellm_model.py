"""``LiteLLMModel``: any model litellm can call, hosted or on an OpenAI-compatible server.

>>> model = LiteLLMModel("openai/gpt-4o-mini")                              # doctest: +SKIP
>>> model = LiteLLMModel("openai/qwen2.5-7b", api_base="http://127.0.0.1:8000/v1")  # +SKIP

Retries: rate limits, timeouts, 5xx answers and dropped connections are retried with
exponential backoff and jitter (``Retry-After`` is honoured), classified by litellm's exception
types; other failures are raised at once as the matching :mod:`lemmata.errors` class. litellm's
and the OpenAI SDK's own retries are switched off so that this is the one retry policy.

The API key is kept as a ``SecretStr``; it is redacted from every error message and from
litellm's log records, and never appears in ``repr``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, SecretStr

from lemmata.errors import (
    AuthenticationFailed,
    LemmataError,
    MissingApiKey,
    ModelCallFailed,
    ModelOutputError,
    ModelUnreachable,
    RateLimited,
    UnknownModel,
)
from lemmata.llm._redact import RedactingFilter, redact
from lemmata.llm.base import BaseChatModel
from lemmata.llm.json_extract import JSONNotFound, extract_json
from lemmata.llm.types import ChatResponse, ToolCall, ToolSpec, Usage, normalize_messages

if TYPE_CHECKING:
    from lemmata.settings import Settings

__all__ = ["LiteLLMModel", "import_litellm"]

log = logging.getLogger("lemmata.llm")

# A local OpenAI-compatible server usually ignores the key, but the OpenAI client insists on one.
_PLACEHOLDER_KEY = "EMPTY"
_MAX_BACKOFF_S = 60.0
_CONNECTION_RETRIES = 1  # an API base that refuses a connection twice is not coming back soon


def import_litellm() -> Any:
    """Import litellm with the settings that keep it offline and quiet.

    ``LITELLM_LOCAL_MODEL_COST_MAP`` makes it read its bundled price list instead of fetching
    one from the network at import time.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


class LiteLLMModel(BaseChatModel):
    """A chat model reached through litellm.

    ``model`` is a litellm model string (``"openai/gpt-4o-mini"``, ``"anthropic/..."``,
    ``"ollama/llama3"``, ``"openai/NAME"`` with ``api_base`` for vLLM, llama.cpp, LM Studio...).
    ``json_mode``: ``"auto"`` asks for a JSON schema response format where litellm says the
    model supports one, ``"schema"`` always, ``"object"`` asks for ``json_object``, ``"off"``
    relies on the prompt alone (the tolerant parser reads the reply either way).

    ``schema_in_prompt``: whether structured calls also write the JSON schema into the system
    prompt. ``None`` (the default) leaves it out only where the provider is handed it as the
    response format and litellm knows the provider to support schemas (``json_mode="auto"``
    on a hosted model that supports them), which then shows it to the model: sending it in
    the prompt too would pay its tokens twice per call (about 480 for a memory extraction). A
    local server asked for ``"schema"`` may only constrain decoding without the model ever
    reading the schema's field descriptions, so there it stays in the prompt unless
    ``schema_in_prompt=False``.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | SecretStr | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        json_mode: str = "auto",
        schema_in_prompt: bool | None = None,
        extra_params: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__()
        if not model or any(c.isspace() for c in model):
            raise UnknownModel(f"model name {model!r} is not valid: set LEMMATA_MODEL")
        if json_mode not in {"auto", "schema", "object", "off"}:
            raise ValueError("json_mode must be 'auto', 'schema', 'object' or 'off'")
        self.name = model
        self.api_base = api_base
        self._api_key = (
            api_key if isinstance(api_key, SecretStr) or api_key is None else SecretStr(api_key)
        )
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.json_mode = json_mode
        self._schema_in_prompt = schema_in_prompt
        self.extra_params = dict(extra_params or {})
        self._sleep = sleep
        self._litellm: Any = None
        self._checked = False

    @classmethod
    def from_settings(cls, settings: Settings, model: str | None = None) -> LiteLLMModel:
        name = model or settings.model
        if not name:
            from lemmata.errors import ModelNotConfigured

            raise ModelNotConfigured()
        return cls(
            name,
            api_base=settings.api_base,
            api_key=settings.api_key,
            timeout_s=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
            backoff_s=settings.llm_backoff_s,
        )

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"LiteLLMModel({self.name!r}, api_base={self.api_base!r}, api_key={key})"

    # -- set-up ---------------------------------------------------------------------------

    @property
    def _secret(self) -> str | None:
        return self._api_key.get_secret_value() if self._api_key else None

    def _lib(self) -> Any:
        if self._litellm is None:
            self._litellm = import_litellm()
            logging.getLogger("LiteLLM").addFilter(RedactingFilter([self._secret]))
        return self._litellm

    def check(self) -> None:
        """Fail fast, before any request, on a model litellm cannot route or a missing key.

        Raises :class:`UnknownModel` or :class:`MissingApiKey`.
        """
        if self._checked:
            return
        litellm = self._lib()
        try:
            litellm.get_llm_provider(self.name, api_base=self.api_base)
        except Exception as exc:  # litellm raises BadRequestError for names it cannot route
            raise UnknownModel(
                f"litellm does not know which provider serves {self.name!r}: set LEMMATA_MODEL "
                "to 'provider/model' (e.g. 'openai/gpt-4o-mini', or 'openai/NAME' with "
                "LEMMATA_API_BASE for an OpenAI-compatible server)"
            ) from exc
        if self._api_key is None and self.api_base is None:
            env = litellm.validate_environment(self.name)
            if not env.get("keys_in_environment", True):
                missing = ", ".join(env.get("missing_keys") or ["the provider's key"])
                raise MissingApiKey(
                    f"{self.name!r} needs an API key: set LEMMATA_API_KEY or {missing}"
                )
        self._checked = True

    # -- calls ----------------------------------------------------------------------------

    def _request(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        tools: Sequence[ToolSpec] | None,
        temperature: float | None,
        max_tokens: int | None,
        response_schema: type[BaseModel] | None,
    ) -> dict[str, Any]:
        self.check()
        kwargs: dict[str, Any] = {
            "model": self.name,
            "messages": normalize_messages(messages),
            "timeout": self.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
            **self.extra_params,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        key = self._secret or (_PLACEHOLDER_KEY if self.api_base else None)
        if key:
            kwargs["api_key"] = key
        if tools:
            kwargs["tools"] = [t.to_openai() for t in tools]
        if temperature is not None:
            kwargs["temperature"] = temperature
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if response_schema is not None:
            fmt = self._response_format(response_schema)
            if fmt is not None:
                kwargs["response_format"] = fmt
        return kwargs

    def schema_in_prompt(self, schema: type[BaseModel]) -> bool:
        """See the class docstring: False only where the provider shows the model the schema."""
        if self._schema_in_prompt is not None:
            return self._schema_in_prompt
        return not (self.json_mode == "auto" and self._provider_takes_schema())

    def _provider_takes_schema(self) -> bool:
        """Whether litellm's model map says this model takes a JSON schema response format."""
        try:
            return bool(self._lib().supports_response_schema(model=self.name))
        except Exception:  # unknown to litellm's model map: a local server
            return False

    def _response_format(self, schema: type[BaseModel]) -> dict[str, Any] | None:
        mode = self.json_mode
        if mode == "auto":
            mode = "schema" if self._provider_takes_schema() else "off"
        if mode == "schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
            }
        if mode == "object":
            return {"type": "json_object"}
        return None

    def chat(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_schema: type[BaseModel] | None = None,
    ) -> ChatResponse:
        """One completion, retried on transient failures. See the module docstring."""
        kwargs = self._request(messages, tools, temperature, max_tokens, response_schema)
        started = time.perf_counter()
        attempt = 0
        with self._span(kwargs) as span:
            while True:
                attempt += 1
                try:
                    raw = self._lib().completion(**kwargs)
                except Exception as exc:
                    delay = self._retry_delay(exc, attempt)
                    log.info(
                        "%s: attempt %d failed (%s); retrying in %.2fs",
                        self.name,
                        attempt,
                        type(exc).__name__,
                        delay,
                    )
                    self._sleep(delay)
                    continue
                return _traced(span, self._finish(raw, attempt, started))

    async def achat(
        self,
        messages: str | Iterable[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_schema: type[BaseModel] | None = None,
    ) -> ChatResponse:
        """The async twin of :meth:`chat`, for many calls in flight at once."""
        kwargs = self._request(messages, tools, temperature, max_tokens, response_schema)
        started = time.perf_counter()
        attempt = 0
        with self._span(kwargs) as span:
            while True:
                attempt += 1
                try:
                    raw = await self._lib().acompletion(**kwargs)
                except Exception as exc:
                    await asyncio.sleep(self._retry_delay(exc, attempt))
                    continue
                return _traced(span, self._finish(raw, attempt, started))

    def _span(self, kwargs: Mapping[str, Any]) -> Any:
        """The ``llm.chat`` span of one completion (see :mod:`lemmata.tracing`)."""
        from lemmata import tracing

        span = tracing.span(
            "llm.chat",
            {
                "gen_ai.system": "litellm",
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": self.name,
            },
        )
        if tracing.content_enabled():
            return _with_prompt(span, kwargs.get("messages"))
        return span

    # -- failures -------------------------------------------------------------------------

    def _retry_delay(self, exc: Exception, attempt: int) -> float:
        """The seconds to wait before retrying ``exc``, or raise the error it stands for."""
        litellm = self._lib()
        e = litellm.exceptions
        where = self.api_base or f"the provider of {self.name!r}"
        detail = self._detail(exc)
        retries_used = attempt - 1
        if isinstance(exc, LemmataError):
            raise exc
        if isinstance(exc, e.AuthenticationError | e.PermissionDeniedError):
            raise AuthenticationFailed(
                f"{where} rejected the API key for {self.name!r}: check LEMMATA_API_KEY ({detail})"
            ) from None
        if isinstance(exc, e.NotFoundError):
            raise UnknownModel(
                f"{where} does not serve model {self.name!r}: set LEMMATA_MODEL to one it "
                f"serves ({detail})"
            ) from None
        cause = _transport_failure(exc)
        if isinstance(exc, e.Timeout) or cause == "timeout":
            transient, limit = True, self.max_retries
        elif isinstance(exc, e.APIConnectionError) or cause == "connect":
            transient, limit = True, min(self.max_retries, _CONNECTION_RETRIES)
        elif isinstance(
            exc,
            e.RateLimitError
            | e.ServiceUnavailableError
            | e.InternalServerError
            | e.BadGatewayError,
        ):
            transient, limit = True, self.max_retries
        else:
            transient, limit = False, 0
        if not transient:
            raise ModelCallFailed(
                f"{self.name} call failed: {type(exc).__name__}: {detail}"
            ) from None
        if retries_used >= limit:
            if isinstance(exc, e.RateLimitError):
                raise RateLimited(
                    f"{self.name} is still rate limited after {retries_used} retries: wait, or "
                    "raise LEMMATA_LLM_MAX_RETRIES"
                ) from None
            if cause == "connect" or (
                isinstance(exc, e.APIConnectionError) and not isinstance(exc, e.Timeout)
            ):
                raise ModelUnreachable(
                    f"cannot reach {where}: check LEMMATA_API_BASE and that the server is "
                    f"running ({detail})"
                ) from None
            raise ModelCallFailed(
                f"{self.name} failed after {retries_used} retries: {type(exc).__name__}: {detail}"
            ) from None
        delay = self.backoff_s * (2**retries_used) * (0.5 + random.random() / 2)
        retry_after = _retry_after(exc)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, _MAX_BACKOFF_S)

    def _detail(self, exc: Exception) -> str:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        text = redact(text, [self._secret])
        return text if len(text) <= 200 else text[:197] + "..."

    # -- replies --------------------------------------------------------------------------

    def _finish(self, raw: Any, attempts: int, started: float) -> ChatResponse:
        try:
            choice = raw.choices[0]
            message = choice.message
        except (AttributeError, IndexError, TypeError):
            raise ModelOutputError(f"{self.name} returned a reply with no choices") from None
        calls = tuple(self._tool_call(c) for c in (getattr(message, "tool_calls", None) or ()))
        usage = self._usage(raw, attempts, time.perf_counter() - started)
        self.usage.add(usage)
        return ChatResponse(
            content=getattr(message, "content", None),
            tool_calls=calls,
            finish_reason=getattr(choice, "finish_reason", None),
            model=str(getattr(raw, "model", None) or self.name),
            usage=usage,
        )

    def _tool_call(self, call: Any) -> ToolCall:
        fn = call.function
        text = fn.arguments or "{}"
        try:
            args = json.loads(text)
        except json.JSONDecodeError:
            try:
                args = extract_json(text, want=dict)
            except JSONNotFound:
                raise ModelOutputError(
                    f"{self.name} called tool {fn.name!r} with arguments that are not JSON",
                    raw=text,
                ) from None
        if not isinstance(args, dict):
            raise ModelOutputError(f"tool {fn.name!r} arguments must be a JSON object", raw=text)
        return ToolCall(id=str(call.id or fn.name), name=str(fn.name), arguments=args)

    def _usage(self, raw: Any, attempts: int, latency: float) -> Usage:
        u = getattr(raw, "usage", None)
        prompt = int(getattr(u, "prompt_tokens", 0) or 0)
        completion = int(getattr(u, "completion_tokens", 0) or 0)
        cost: float | None
        try:
            cost = float(self._lib().completion_cost(completion_response=raw))
        except Exception:  # no price known for this model (local servers): unknown, not zero
            cost = None
        return Usage(
            model=self.name,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost_usd=cost,
            latency_s=latency,
            attempts=attempts,
        )


def _transport_failure(exc: BaseException) -> str | None:
    """``"connect"`` or ``"timeout"`` when the exception chain holds a transport failure.

    litellm reports a refused connection to an OpenAI-compatible server as an
    ``InternalServerError``; the chain below it keeps the typed cause (httpx, OSError).
    """
    import httpx

    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 12:
        if isinstance(current, httpx.TimeoutException | TimeoutError):
            return "timeout"
        if isinstance(current, httpx.ConnectError | ConnectionError | socket.gaierror):
            return "connect"
        current = current.__cause__ or current.__context__
        seen += 1
    return None


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


@contextlib.contextmanager
def _with_prompt(span: Any, messages: Any) -> Iterator[Any]:
    with span as s:
        s.content("gen_ai.prompt", messages)
        yield s


def _traced(span: Any, response: ChatResponse) -> ChatResponse:
    """Record the reply's model, token counts and finish reason (and text, with content on)."""
    span.set("gen_ai.response.model", response.model)
    span.set("gen_ai.response.finish_reasons", response.finish_reason)
    if response.usage is not None:
        span.set("gen_ai.usage.input_tokens", response.usage.prompt_tokens)
        span.set("gen_ai.usage.output_tokens", response.usage.completion_tokens)
        span.set("lemmata.attempts", response.usage.attempts)
    span.content("gen_ai.completion", response.content)
    if response.tool_calls:
        span.set("lemmata.tool_calls", ",".join(c.name for c in response.tool_calls))
    return response
