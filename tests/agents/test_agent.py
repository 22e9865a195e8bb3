"""lemmata.Agent: routing offline and with a model, memory around every run, checkpointed
threads, streaming, approval, budgets and Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from lemmata.agents.agent import Agent, Budget
from lemmata.operations import OperationContext, Registry, operation

SISTER = "Remember that my sister Ana lives in Porto."


@pytest.fixture(scope="module")
def embedder():
    from lemmata.embeddings import get_embedder
    from lemmata.settings import Settings

    return get_embedder(Settings.load(config_file=None), cache=False)


@pytest.fixture
def make(settings, embedder, tmp_path: Path):
    agents: list[Agent] = []

    def build(**kw) -> Agent:
        kw.setdefault("settings", settings)
        kw.setdefault("embedder", embedder)
        kw.setdefault("checkpoint", tmp_path / "threads.sqlite")
        agent = Agent(**kw)
        agents.append(agent)
        return agent

    yield build
    for agent in agents:
        agent.close()


def test_offline_a_coq_theorem_is_routed_to_the_prover_and_proved(make, coqtop_path) -> None:
    agent = make(user="alice")
    result = agent.run("Prove in Coq: forall n : nat, n + 0 = n", thread="p1")
    assert result.status == "answered", result.answer
    assert result.route and result.route["operation"] == "provers_prove"
    assert result.answer.startswith("Proved (refine, coq")
    assert result.results[0].ok and result.results[0].payload["proof"]
    assert result.usage["tool_calls"] == 1 and result.usage["model_calls"] == 0


def test_memory_is_recalled_per_user_across_threads_and_the_exchange_recorded(make) -> None:
    alice = make(user="alice")
    stored = alice.run(SISTER, thread="a1")
    assert stored.status == "answered" and stored.route["operation"] == "memory_remember"
    asked = alice.run("Where does Ana live?", thread="a2")
    assert asked.route["operation"] == "memory_recall", asked.route
    assert "Porto" in asked.answer
    assert asked.memory and "Porto" in asked.memory[0]["text"]  # recalled before routing
    bob = make(user="bob")
    other = bob.run("Where does Ana live?", thread="b1")
    assert other.status == "declined" and "Porto" not in other.answer
    episodes = [e.content for e in alice._memory().episodes()]
    assert "Where does Ana live?" in episodes  # the exchange was recorded
    assert episodes.count(SISTER.removeprefix("Remember that ")) == 1  # and not twice


def _slow_structuring(monkeypatch, seconds: float) -> threading.Event:
    """Make the offline extractor take ``seconds``; the event is set when one has begun."""
    from lemmata.memory.extract import OfflineExtractor

    begun = threading.Event()
    extract = OfflineExtractor.extract

    def slow(self, segment):
        begun.set()
        time.sleep(seconds)
        return extract(self, segment)

    monkeypatch.setattr(OfflineExtractor, "extract", slow)
    return begun


def test_a_fact_told_in_one_turn_is_recalled_in_the_next_while_still_being_structured(
    make, monkeypatch
) -> None:
    agent = make(user="erin")
    begun = _slow_structuring(monkeypatch, 0.6)
    told = agent.run("My cat Miso is three years old.", thread="e1")
    # the turn is durable at once; it is structured in the background, after the answer
    assert "My cat Miso is three years old." in [e.content for e in agent._memory().episodes()]
    assert begun.wait(5) and agent._memory().pending() > 0
    asked = agent.run("How old is my cat Miso?", thread="e2")
    assert asked.memory and "three" in asked.memory[0]["text"], (told.answer, asked.memory)
    assert asked.route["operation"] == "memory_recall" and "three" in asked.answer
    assert asked.memory[0]["similarity"] == pytest.approx(
        float(
            agent.embedder.embed([asked.memory[0]["text"]])[0]
            @ agent.embedder.embed(["How old is my cat Miso?"])[0]
        ),
        abs=1e-3,
    )


def test_close_finishes_structuring_what_the_turns_recorded(make, monkeypatch) -> None:
    agent = make(user="fay")
    _slow_structuring(monkeypatch, 0.3)
    agent.run("My brother Tom plays the cello.")
    agent.close()
    assert agent._memory().pending() == 0
    assert any("cello" in f.statement for f in agent._memory().facts())


def test_a_task_no_operation_serves_is_declined_plainly(make) -> None:
    result = make().run("Write a haiku about autumn leaves")
    assert result.status == "declined"
    assert result.answer.startswith("I cannot route this task: no operation serves")
    assert result.results == []


def test_destructive_operations_wait_for_approval(make) -> None:
    agent = make(user="alice")
    agent.run(SISTER, thread="f1")
    paused = agent.run("Forget what I said about my sister.", thread="f1")
    assert paused.status == "needs_approval"
    assert paused.pending[0]["calls"][0]["tool"] == "memory_forget"
    assert any("Porto" in f.statement for f in agent._memory().facts())
    denied = agent.approve("f1", approved=False)
    assert denied.status == "failed" and denied.results[0].status == "denied"
    assert any("Porto" in f.statement for f in agent._memory().facts())
    agent.run("Forget what I said about my sister.", thread="f1")
    done = agent.approve("f1", approved=True)
    assert done.status == "answered" and done.results[0].payload["items"]
    assert not any("Porto" in f.statement for f in agent._memory().facts())
    agent._consolidator.wait()
    memory = agent._memory()
    memory.consolidate()
    # neither the denied nor the approved request became something remembered
    assert not any("sister" in f.statement for f in memory.facts())
    with pytest.raises(Exception, match="not waiting for an approval"):
        agent.approve("f1")
    allowed = make(user="carol", allow=["memory_forget"])
    allowed.run(SISTER)
    assert allowed.run("Forget what I said about my sister.").status == "answered"


def test_stream_yields_steps_and_progress_from_inside_the_operation(make) -> None:
    agent = make()
    events = list(
        agent.stream("Prove that the sum of binomial(n, k) for k from 0 to n is 2^n.", thread="s1")
    )
    steps = [e["node"] for e in events if e["type"] == "step"]
    assert steps == ["recall", "plan", "approve", "act", "answer", "record"]
    progress = [e for e in events if e["type"] == "progress"]
    assert progress and progress[0]["operation"] == "provers_prove"
    assert "Zeilberger" in progress[0]["message"]
    assert agent.result("s1").answer.startswith("Proved (wz")


def test_threads_are_checkpointed_and_resumed_by_another_agent(make) -> None:
    first = make(user="alice")
    first.run(SISTER, thread="t1")
    first.run("Write a haiku", thread="t1")
    first.close()
    again = make(user="alice")
    threads = {t.thread: t for t in again.threads()}
    assert threads["t1"].first == SISTER and threads["t1"].messages >= 5
    before = len(again.history("t1"))
    again.run("Where does Ana live?", thread="t1")
    history = again.history("t1")
    assert len(history) > before and history[-1]["role"] == "assistant"
    assert "Porto" in history[-1]["content"]


def test_budgets_are_enforced_and_reported(make) -> None:
    result = make(budget=Budget(tool_calls=0)).run(SISTER)
    assert result.status == "budget"
    assert (
        result.results[0].status == "cancelled"
        and "budget of 0 tool calls" in result.results[0].reason
    )
    with pytest.raises(Exception, match="cannot be negative"):
        Budget(model_calls=-1)


class SlowIn(BaseModel):
    seconds: float


class SlowOut(BaseModel):
    slept: float


def _slow_args(text: str) -> dict | None:
    if not text.startswith("sleep"):
        return None
    said = re.search(r"(\d+(?:\.\d+)?) seconds", text)
    return {"seconds": float(said.group(1)) if said else 30.0}


NAPPING = threading.Event()  # set once a nap has begun: the turn is inside its tool call


@operation("demo", time_limit_s=60, examples=("sleep for a while",), extract=_slow_args)
def nap(args: SlowIn, ctx: OperationContext) -> SlowOut:
    """Sleep, reporting progress, until the time is up or the caller gives up."""
    started = time.monotonic()
    NAPPING.set()
    while time.monotonic() - started < args.seconds:
        ctx.report("sleeping")
        time.sleep(0.02)
    return SlowOut(slept=time.monotonic() - started)


def test_ctrl_c_cancels_the_turn_and_leaves_a_valid_thread(make) -> None:
    agent = make(registry=Registry([nap]))
    # a real SIGINT, as Ctrl-C sends (interrupt_main would not wake a blocked wait), sent
    # once the turn is inside its tool call, however long a busy machine takes to get there
    NAPPING.clear()
    sent: list[float] = []

    def ctrl_c() -> None:
        if NAPPING.wait(120):
            time.sleep(0.2)
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        agent.run("sleep please", thread="c1")
    assert sent, "the nap never started"
    assert time.monotonic() - sent[0] < 10  # cancelled at once, not after the 30 s nap
    state = agent.graph.get_state(agent._config("c1"))
    assert state.next == ()  # nothing left pending
    messages = state.values["messages"]
    called = {c["id"] for m in messages if m.type == "ai" for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages if m.type == "tool"}
    assert called and called == answered
    assert agent.result("c1").status == "cancelled"
    assert agent.run("hello there", thread="c1").status == "declined"  # the thread goes on


def test_with_a_model_the_model_chooses_tools_and_bad_calls_come_back_to_it(make) -> None:
    from scripted_server import ScriptedOpenAIServer

    from lemmata.llm import LiteLLMModel

    steps = [
        {
            "tool_calls": [
                {
                    "name": "provers_prove",
                    "arguments": {"statement": "Sum(binomial(n, k), (k, 0, n)) = 2**n"},
                }
            ]
        },
        {"tool_calls": [{"name": "provers_teleport", "arguments": {}}]},
        {
            "tool_calls": [
                {"name": "provers_check", "arguments": {"statement": "Theorem t : True."}}
            ]
        },
        {"content": "The identity holds: Zeilberger's certificate proves it."},
    ]
    with ScriptedOpenAIServer(steps) as server:
        model = LiteLLMModel("openai/scripted-model", api_base=server.base_url, backoff_s=0.01)
        agent = make(model=model, user="dora")
        result = agent.run("Is the sum of binomial(n,k) over k equal to 2^n?", thread="m1")
        requests = server.chat_requests()
    assert result.status == "answered"
    assert result.answer == "The identity holds: Zeilberger's certificate proves it."
    assert [e.status for e in result.results] == ["ok", "invalid", "invalid"]
    assert result.usage["model_calls"] == 4 and result.usage["tool_calls"] == 3
    tools = {t["function"]["name"] for t in requests[0]["tools"]}
    assert {"provers_prove", "memory_recall", "gui_ground", "research_research"} <= tools
    assert "What memory holds" in requests[0]["messages"][0]["content"]
    fed_back = [m["content"] for m in requests[2]["messages"] if m["role"] == "tool"]
    assert "no operation named 'provers_teleport'" in fed_back[-1]
    fed_back = [m["content"] for m in requests[3]["messages"] if m["role"] == "tool"]
    assert "proof: Field required" in fed_back[-1]


def test_with_a_model_a_reply_without_tools_is_the_answer(make) -> None:
    from lemmata.llm import ScriptedModel

    agent = make(model=ScriptedModel(["Hello! I prove, remember, see and research."]))
    result = agent.run("hi")
    assert result.status == "answered"
    assert result.answer == "[scripted] Hello! I prove, remember, see and research."
    assert result.results == [] and result.usage["model_calls"] == 1


_KILLED_MID_TURN = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_agent import nap
from lemmata.agents.agent import Agent
from lemmata.operations import Registry
from lemmata.settings import Settings

settings = Settings.load(config_file=None, data_dir=Path({data!r}))
agent = Agent(settings=settings, registry=Registry([nap]), checkpoint={db!r},
              checkpoint_every={every!r}, record=False)
agent.run("sleep for 0 seconds", thread="k1")
Path({marker!r}).write_text("turn 1 done")
agent.run("sleep please", thread="k1")  # killed during the nap
"""


@pytest.mark.parametrize("every", ["turn", "step"])
def test_a_process_killed_mid_turn_keeps_the_finished_turns(
    every: str, settings, tmp_path: Path
) -> None:
    import subprocess
    import sys

    db, marker = tmp_path / "threads.sqlite", tmp_path / "marker"
    script = _KILLED_MID_TURN.format(
        tests=str(Path(__file__).parent),
        data=str(settings.data_dir),
        db=str(db),
        every=every,
        marker=str(marker),
    )
    child = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists(), "the first turn did not finish"
        time.sleep(3.0)  # well into the second turn's 30 s nap
        child.kill()  # as a crash or an OOM kill would: no handler runs
    finally:
        child.kill()
        child.wait(30)
    with Agent(settings=settings, registry=Registry([nap]), checkpoint=db) as agent:
        said = [m["content"] for m in agent.history("k1") if m["role"] == "user"]
        assert said[0] == "sleep for 0 seconds"  # the finished turn is there either way
        if every == "step":
            assert said[1:] == ["sleep please"]  # the killed turn, up to its last step
        else:
            assert said[1:] == []  # the killed turn is gone, whole: no half-written turn
        assert agent.run("sleep for 0 seconds", thread="k1").status == "answered"


def test_a_turn_embeds_its_task_once_for_recall_routing_the_operation_and_the_record(
    make, embedder
) -> None:
    class Counting:
        def __init__(self, inner) -> None:
            self.inner, self.name, self.texts = inner, inner.name, []

        @property
        def dim(self) -> int:
            return self.inner.dim

        def embed(self, texts):
            self.texts.extend(texts)
            return self.inner.embed(texts)

    counting = Counting(embedder)
    agent = make(user="erin", embedder=counting)
    agent.run(SISTER, thread="e1")
    agent._consolidator.wait()  # the first turn's structuring embeds its facts
    counting.texts.clear()
    task = "Where does Ana live?"
    asked = agent.run(task, thread="e2")
    assert asked.route["operation"] == "memory_recall" and asked.route["args"]["query"] == task
    assert "Porto" in asked.answer
    assert counting.texts.count(task) == 1  # not again in the operation's recall or the record
