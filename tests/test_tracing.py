"""OpenTelemetry spans: off by default; when on, operations, verifier calls (real Coq) and model
calls (the scripted server) become nested spans whose attributes hold no prompt text unless
``trace_content`` is on; with no exporter set up they land in a JSON-lines file."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ScriptedOpenAIServer

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from lemmata import tracing
from lemmata.errors import MissingDependency
from lemmata.llm import LiteLLMModel
from lemmata.operations import OperationContext, load_registry

STATEMENT = "Theorem t : forall n : nat, n + 0 = n."


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield InMemorySpanExporter()
    tracing.configure(False)


def _check(settings: Any) -> Any:
    op = load_registry().get("provers_check")
    args = {
        "statement": STATEMENT,
        "proof": "intros n. induction n; simpl; auto.",
        "backend": "coq",
    }
    return op.invoke(args, OperationContext(settings=settings))


def _provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def test_no_spans_unless_switched_on(spans, settings, coqtop_path) -> None:
    tracing.configure(False)
    assert _check(settings).ok
    assert spans.get_finished_spans() == ()
    assert not tracing.enabled()


def test_an_operation_and_its_verifier_call_are_nested_spans_without_content(
    spans, settings, coqtop_path
) -> None:
    tracing.configure(True, provider=_provider(spans))
    assert _check(settings).ok
    by_name = {s.name: s for s in spans.get_finished_spans()}
    op, verify = by_name["operation provers_check"], by_name["verify coq"]
    assert verify.parent is not None and verify.parent.span_id == op.context.span_id
    assert op.attributes["lemmata.status"] == "ok"
    assert op.attributes["lemmata.capability"] == "provers"
    assert verify.attributes["lemmata.verify.status"] == "pass"
    every_value = json.dumps([dict(s.attributes) for s in spans.get_finished_spans()])
    assert "n + 0 = n" not in every_value  # no statement, no proof, no arguments


def test_content_is_recorded_only_when_allowed(spans, settings, coqtop_path) -> None:
    tracing.configure(True, content=True, provider=_provider(spans))
    _check(settings)
    by_name = {s.name: s for s in spans.get_finished_spans()}
    assert by_name["verify coq"].attributes["lemmata.statement"] == STATEMENT
    assert "induction" in by_name["operation provers_check"].attributes["lemmata.arguments"]


def test_a_model_call_is_a_span_with_tokens_and_no_prompt_by_default(spans) -> None:
    reply = {"content": "4", "usage": {"prompt_tokens": 11, "completion_tokens": 1}}
    tracing.configure(True, provider=_provider(spans))
    with ScriptedOpenAIServer([reply, reply]) as server:
        model = LiteLLMModel("openai/scripted-model", api_base=server.base_url)
        model.chat("What is 2 + 2? (secret prompt)")
        (chat,) = spans.get_finished_spans()
        assert chat.name == "llm.chat"
        assert chat.attributes["gen_ai.request.model"] == "openai/scripted-model"
        assert chat.attributes["gen_ai.usage.input_tokens"] == 11
        assert "secret prompt" not in json.dumps(dict(chat.attributes))
        spans.clear()
        tracing.configure(True, content=True, provider=_provider(spans))
        model.chat("What is 2 + 2? (secret prompt)")
        (chat,) = spans.get_finished_spans()
        assert "secret prompt" in chat.attributes["gen_ai.prompt"]
        assert chat.attributes["gen_ai.completion"] == "4"


def test_without_an_exporter_spans_go_to_a_json_lines_file(tmp_path: Path) -> None:
    file = tmp_path / "traces.jsonl"
    tracing.configure(True, file=file)
    try:
        with tracing.span("operation demo", {"lemmata.capability": "demo"}) as s:
            s.set("lemmata.status", "ok")
    finally:
        tracing.configure(False)
    (line,) = file.read_text().splitlines()
    record = json.loads(line)
    assert record["name"] == "operation demo"
    assert record["attributes"]["lemmata.status"] == "ok"


def test_switching_it_on_without_the_extra_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(MissingDependency, match=r"lemmata\[otel\]"):
        tracing.configure(True)
    assert not tracing.enabled()


def test_the_settings_switch_it_on(monkeypatch, tmp_path: Path) -> None:
    from lemmata.settings import Settings

    monkeypatch.setenv("LEMMATA_TRACE", "true")
    monkeypatch.setenv("LEMMATA_TRACE_FILE", str(tmp_path / "t.jsonl"))
    settings = Settings.load(config_file=None)
    assert settings.trace and not settings.trace_content
    tracing.configure_from(settings)
    try:
        assert tracing.enabled() and not tracing.content_enabled()
    finally:
        tracing.configure(False)


def test_every_agent_step_is_a_span_with_its_operation_nested(
    spans, settings, coqtop_path, tmp_path: Path
) -> None:
    from lemmata.agents.agent import Agent

    tracing.configure(True, provider=_provider(spans))
    with Agent(settings=settings, checkpoint=tmp_path / "threads.sqlite") as agent:
        result = agent.run("Prove in Coq: forall n : nat, n + 0 = n", thread="t1")
    assert result.status == "answered", result.answer
    finished = spans.get_finished_spans()
    steps = [s.name for s in finished if s.name.startswith("agent.step")]
    assert steps == [f"agent.step {n}" for n in ("recall", "plan", "approve", "act", "answer")] + [
        "agent.step record"
    ]
    by_name = {s.name: s for s in finished}
    plan, act = by_name["agent.step plan"], by_name["agent.step act"]
    assert plan.attributes["lemmata.route.operation"] == "provers_prove"
    operation = by_name["operation provers_prove"]
    assert operation.parent is not None and operation.parent.span_id == act.context.span_id
    assert by_name["agent.step answer"].attributes["lemmata.status"] == "answered"
    every_value = json.dumps([dict(s.attributes) for s in finished])
    assert "n + 0 = n" not in every_value  # the task's text stays out without trace_content


def test_a_pause_for_approval_is_not_a_failed_step(spans, settings, tmp_path: Path) -> None:
    from opentelemetry.trace import StatusCode

    from lemmata.agents.agent import Agent

    tracing.configure(True, provider=_provider(spans))
    with Agent(settings=settings, checkpoint=tmp_path / "threads.sqlite") as agent:
        agent.run("Remember that my sister Ana lives in Porto.", thread="m1")
        paused = agent.run("Forget what you know about Ana.", thread="m2")
    assert paused.status == "needs_approval", paused.answer
    approve = [s for s in spans.get_finished_spans() if s.name == "agent.step approve"][-1]
    assert approve.attributes["lemmata.status"] == "needs_approval"
    assert approve.status.status_code != StatusCode.ERROR
