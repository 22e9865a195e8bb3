"""The litellm path, against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest
from pydantic import BaseModel
from scripted_server import ScriptedOpenAIServer

from lemmata.errors import (
    AuthenticationFailed,
    MissingApiKey,
    ModelOutputError,
    ModelUnreachable,
    RateLimited,
    UnknownModel,
)
from lemmata.llm import LiteLLMModel, ToolSpec

SECRET = "sk-test-0123456789abcdefSECRET"


class Verdict(BaseModel):
    identity: str
    holds: bool


def make(server: ScriptedOpenAIServer, **kw) -> LiteLLMModel:
    kw.setdefault("backoff_s", 0.01)
    return LiteLLMModel("openai/scripted-model", api_base=server.base_url, **kw)


def test_chat_reply_usage_and_unknown_price() -> None:
    with ScriptedOpenAIServer(
        [{"content": "Hello there", "usage": {"prompt_tokens": 20, "completion_tokens": 3}}]
    ) as srv:
        model = make(srv)
        reply = model.chat("Say hello")
    assert reply.content == "Hello there"
    assert not reply.scripted
    assert srv.chat_requests()[0]["messages"] == [{"role": "user", "content": "Say hello"}]
    u = reply.usage
    assert (u.prompt_tokens, u.completion_tokens, u.attempts) == (20, 3, 1)
    assert u.cost_usd is None  # a local server has no known price: unknown, not zero
    assert model.usage.calls == 1 and model.usage.total_tokens == 23


def test_tool_calls_are_sent_and_parsed() -> None:
    def lookup(entity: str) -> str:
        """Look an entity up."""
        return entity

    steps = [
        {"tool_calls": [{"name": "lookup", "arguments": {"entity": "patient 42"}}]},
        # a sloppy server: trailing comma in the arguments
        {"tool_calls": [{"name": "lookup", "arguments": '{"entity": "x",}'}]},
    ]
    with ScriptedOpenAIServer(steps) as srv:
        model = make(srv)
        first = model.chat("find patient 42", tools=[ToolSpec.from_function(lookup)])
        second = model.chat("again", tools=[ToolSpec.from_function(lookup)])
    sent = srv.chat_requests()[0]["tools"][0]
    assert sent["function"]["name"] == "lookup"
    assert sent["function"]["parameters"]["required"] == ["entity"]
    assert first.tool_calls[0].name == "lookup"
    assert first.tool_calls[0].arguments == {"entity": "patient 42"}
    assert second.tool_calls[0].arguments == {"entity": "x"}


def test_unparseable_tool_arguments_are_a_typed_error() -> None:
    with (
        ScriptedOpenAIServer([{"tool_calls": [{"name": "f", "arguments": "not json"}]}]) as srv,
        pytest.raises(ModelOutputError, match="not JSON"),
    ):
        make(srv).chat("x", tools=[ToolSpec("f", "f", {"type": "object", "properties": {}})])


def test_malformed_json_is_repaired_by_the_retry() -> None:
    steps = [
        {"content": 'Sure: {"identity": "sum C(n,k) = 2^n", "holds": "maybe"}'},
        {"content": '{"identity": "sum C(n,k) = 2^n", "holds": true}'},
    ]
    with ScriptedOpenAIServer(steps) as srv:
        verdict = make(srv).structured("Does the binomial identity hold?", Verdict)
    assert verdict == Verdict(identity="sum C(n,k) = 2^n", holds=True)
    reqs = srv.chat_requests()
    assert len(reqs) == 2
    feedback = reqs[1]["messages"][-1]["content"]
    assert "holds" in feedback and "did not validate" in feedback
    assert reqs[1]["messages"][-2]["role"] == "assistant"


def _sent_schema(request: dict) -> tuple[bool, bool]:
    """(the schema is in the system prompt, the schema is the response format) of a request."""
    system = request["messages"][0]
    assert system["role"] == "system"
    fmt = request.get("response_format") or {}
    in_prompt = '"properties"' in system["content"] and "holds" in system["content"]
    as_format = fmt.get("type") == "json_schema" and "holds" in str(fmt.get("json_schema"))
    return in_prompt, as_format


@pytest.mark.parametrize(
    ("name", "kw", "expected"),
    [
        # a hosted model litellm knows to take schemas: sent once, as the response format
        ("openai/gpt-4o-mini", {}, (False, True)),
        # a local server's model: the prompt is its only way to learn the schema
        ("openai/scripted-model", {}, (True, False)),
        # asked for schema decoding on a local server: kept in the prompt as well
        ("openai/scripted-model", {"json_mode": "schema"}, (True, True)),
        (
            "openai/scripted-model",
            {"json_mode": "schema", "schema_in_prompt": False},
            (False, True),
        ),
        ("openai/gpt-4o-mini", {"schema_in_prompt": True}, (True, True)),
        ("openai/gpt-4o-mini", {"json_mode": "off"}, (True, False)),
    ],
)
def test_the_schema_is_sent_once_where_the_provider_takes_it(
    name: str, kw: dict, expected: tuple[bool, bool]
) -> None:
    reply = {"content": '{"identity": "x", "holds": true}'}
    with ScriptedOpenAIServer([reply], models=("scripted-model", "gpt-4o-mini")) as srv:
        model = LiteLLMModel(name, api_base=srv.base_url, backoff_s=0.01, **kw)
        assert model.structured("Does it hold?", Verdict) == Verdict(identity="x", holds=True)
    request = srv.chat_requests()[0]
    assert _sent_schema(request) == expected
    if not expected[0]:  # the short instruction still names the schema and asks for JSON only
        assert "Verdict" in request["messages"][0]["content"]


def test_structured_gives_up_after_the_retry() -> None:
    with (
        ScriptedOpenAIServer([{"content": "no"}, {"content": "still no"}]) as srv,
        pytest.raises(ModelOutputError) as info,
    ):
        make(srv).structured("?", Verdict)
    assert info.value.raw == "still no"
    assert len(srv.chat_requests()) == 2


def test_rate_limit_is_retried_with_backoff() -> None:
    steps = [
        {
            "status": 429,
            "headers": {"Retry-After": "0"},
            "body": {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
        },
        {"content": "after the wait"},
    ]
    sleeps: list[float] = []
    with ScriptedOpenAIServer(steps) as srv:
        model = make(srv, sleep=sleeps.append)
        reply = model.chat("x")
    assert reply.content == "after the wait"
    assert reply.usage.attempts == 2
    assert len(srv.chat_requests()) == 2
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 0.01


def test_persistent_rate_limit_ends_in_a_typed_error() -> None:
    limited = {
        "status": 429,
        "body": {"error": {"message": "Rate limit", "type": "rate_limit_error"}},
    }
    sleeps: list[float] = []
    with (
        ScriptedOpenAIServer([limited] * 4) as srv,
        pytest.raises(RateLimited, match="LEMMATA_LLM_MAX_RETRIES"),
    ):
        make(srv, max_retries=2, sleep=sleeps.append).chat("x")
    assert len(srv.chat_requests()) == 3
    assert len(sleeps) == 2 and sleeps[1] > sleeps[0] * 0.9  # backoff grows


def test_server_error_is_retried() -> None:
    with ScriptedOpenAIServer(
        [{"status": 503, "body": {"error": {"message": "overloaded"}}}, {"content": "ok"}]
    ) as srv:
        assert make(srv, sleep=lambda s: None).chat("x").content == "ok"


def test_rejected_key_never_leaks(caplog: pytest.LogCaptureFixture) -> None:
    body = {
        "error": {
            "message": f"Incorrect API key provided: {SECRET}",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    caplog.set_level(logging.DEBUG)
    with ScriptedOpenAIServer([{"status": 401, "body": body}]) as srv:
        model = make(srv, api_key=SECRET)
        with pytest.raises(AuthenticationFailed) as info:
            model.chat("x")
    assert srv.headers[0]["authorization"] == f"Bearer {SECRET}"  # the key was used...
    assert "LEMMATA_API_KEY" in str(info.value)
    for text in (str(info.value), repr(info.value), repr(model), caplog.text):
        assert SECRET not in text and SECRET[:12] not in text  # ...and shown nowhere


def test_model_the_server_does_not_serve() -> None:
    with (
        ScriptedOpenAIServer([], models=("other",)) as srv,
        pytest.raises(UnknownModel, match="LEMMATA_MODEL"),
    ):
        make(srv).chat("x")


def test_unreachable_api_base_fails_fast_and_names_the_setting() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = LiteLLMModel("openai/m", api_base=f"http://127.0.0.1:{port}/v1", backoff_s=0.01)
    with pytest.raises(ModelUnreachable, match="LEMMATA_API_BASE"):
        model.chat("x")


def test_unroutable_model_name_fails_before_any_request() -> None:
    with pytest.raises(UnknownModel, match="provider/model"):
        LiteLLMModel("no-such-model-xyz").chat("x")


def test_missing_provider_key_is_named() -> None:
    with pytest.raises(MissingApiKey, match="OPENAI_API_KEY"):
        LiteLLMModel("openai/gpt-4o-mini").chat("x")


def test_async_chat() -> None:
    with ScriptedOpenAIServer([{"content": "a1"}, {"content": "a2"}]) as srv:
        model = make(srv)

        async def both():
            return await asyncio.gather(model.achat("1"), model.achat("2"))

        replies = asyncio.run(both())
    assert sorted(r.content for r in replies) == ["a1", "a2"]
    assert model.usage.calls == 2


def test_from_settings_uses_the_settings(settings) -> None:
    with ScriptedOpenAIServer([{"content": "configured"}]) as srv:
        s = settings.with_overrides(
            model="openai/scripted-model", api_base=srv.base_url, api_key=SECRET
        )
        from lemmata.llm import get_model

        model = get_model(s)
        assert model is not None and model.chat("x").content == "configured"
        assert srv.headers[0]["authorization"] == f"Bearer {SECRET}"
