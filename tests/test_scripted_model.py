from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from lemmata.errors import ModelCallFailed, ModelOutputError
from lemmata.llm import ChatModel, ScriptedModel, ToolSpec


class Plan(BaseModel):
    goal: str
    steps: list[str]


def test_list_script_answers_in_order_and_is_labelled() -> None:
    m = ScriptedModel(["one", "two"], label="demo")
    assert isinstance(m, ChatModel)
    first = m.chat("a")
    assert (first.content, first.scripted, m.name) == ("one", True, "scripted:demo")
    assert m.chat("b").content == "two"
    assert "scripted" in repr(m)
    with pytest.raises(ModelCallFailed, match="ran out of replies"):
        m.chat("c")


def test_mapping_script_matches_last_user_message() -> None:
    m = ScriptedModel({"hello": "hi!", "prime": "2 is prime", "*": "fallback"})
    assert m.chat("hello").content == "hi!"
    assert m.chat("is 2 a prime number?").content == "2 is prime"
    assert m.chat("something else").content == "fallback"
    strict = ScriptedModel({"hello": "hi"})
    with pytest.raises(ModelCallFailed, match="no reply"):
        strict.chat("bye")


def test_function_script_sees_messages_and_tools() -> None:
    seen = {}

    def reply(messages, tools):
        seen["n"] = len(messages)
        seen["tools"] = [t.name for t in tools]
        return {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    m = ScriptedModel(reply)
    r = m.chat(
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        tools=[ToolSpec.from_function(add)],
    )
    assert seen == {"n": 2, "tools": ["add"]}
    assert r.tool_calls[0].arguments == {"a": 1, "b": 2}
    assert r.finish_reason == "tool_calls"
    msg = r.to_message()
    assert msg["tool_calls"][0]["function"]["name"] == "add"


def test_scripted_exception_is_raised() -> None:
    m = ScriptedModel([RuntimeError("boom")])
    with pytest.raises(RuntimeError, match="boom"):
        m.chat("x")


def test_structured_retries_once_with_the_validation_error() -> None:
    m = ScriptedModel(
        ['{"goal": "prove it"}', '```json\n{"goal": "prove it", "steps": ["a", "b"]}\n```']
    )
    plan = m.structured("make a plan", Plan)
    assert plan == Plan(goal="prove it", steps=["a", "b"])
    retry_prompt = m.requests[1][-1]["content"]
    assert "steps" in retry_prompt and "did not validate" in retry_prompt
    assert m.requests[0][0]["role"] == "system" and "schema" in m.requests[0][0]["content"]


def test_structured_failure_is_a_typed_error_with_the_raw_reply() -> None:
    m = ScriptedModel(["not json at all", "still not json"])
    with pytest.raises(ModelOutputError) as info:
        m.structured("plan", Plan)
    assert info.value.raw == "still not json"
    assert info.value.code == "model_output"


def test_usage_is_recorded_and_marked_estimated() -> None:
    m = ScriptedModel(["three word reply"])
    m.chat("count these four words")
    assert m.usage.calls == 1
    rec = m.usage.records[0]
    assert rec.estimated and rec.completion_tokens == 3 and rec.cost_usd is None
    assert m.usage.cost_usd is None


def test_async_twin() -> None:
    m = ScriptedModel(["async reply"])
    assert asyncio.run(m.achat("x")).content == "async reply"


def test_bad_messages_are_rejected_with_the_index() -> None:
    m = ScriptedModel(["x"])
    with pytest.raises(ValueError, match="message 1 has role 'robot'"):
        m.chat([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}])
    with pytest.raises(ValueError, match="empty"):
        m.chat([])


def test_tool_spec_from_function_builds_schema() -> None:
    def search(query: str, limit: int = 5) -> list[str]:
        """Search the memory.

        Longer text that is not part of the description.
        """
        return []

    spec = ToolSpec.from_function(search)
    assert spec.description == "Search the memory."
    assert spec.parameters["required"] == ["query"]
    assert spec.parameters["properties"]["limit"]["default"] == 5
    assert spec.to_openai()["function"]["name"] == "search"
