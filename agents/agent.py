"""``lemmata.Agent``: a LangGraph supervisor over the operations registry.

Hand it a task in words; it picks the operation (prove, check, remember, recall, forget,
ground, act, research), fills in the arguments, runs it and answers from the result:

- **with a model** (litellm tool calling, any provider): the model chooses operations and writes
  their arguments, reads each result envelope and answers; a reply that names no tool is the
  answer, a tool that does not exist or bad arguments come back to it as an ``invalid``
  envelope to correct;
- **with none** (the embedded default): the offline router (:mod:`lemmata.agents.router`)
  recognises the task from its form and words, extracts the arguments, runs the operation and
  answers from its envelope, or says plainly that it cannot route the task and why.

Memory is part of every run: what memory holds about the task is recalled first (into the
model's prompt, and as evidence for the router), and the exchange is recorded afterwards as
episodes in the user's namespace (the thread is the session; the operations run are recorded as
actions with their outcome). The task is embedded once per turn, for the recall and the router
alike. The recorded episodes are durable when the turn ends; offline, structuring them into
facts and procedures runs in a background thread once the turn is over (the next recall waits
for it, so it finds what this turn recorded; :meth:`Agent.close` waits for it too); with a
model, structuring calls the model and stays in the next recall, as it always did, rather than
spend calls behind the user's back. Threads are checkpointed in SQLite (LangGraph's saver) and
resumable; :meth:`Agent.stream` yields progress from inside the operations; destructive
operations (forget, GUI actions) pause for approval with ``interrupt()`` unless allowed up
front; budgets (model calls, tool calls, seconds) are enforced per run and reported.

>>> agent = Agent(user="alice")                                            # doctest: +SKIP
>>> agent.run("Prove in Coq: forall n : nat, n + 0 = n").answer            # doctest: +SKIP
'Proved (refine, coq, 0.9 s).\\nproof:\\nintros.\\nlia.'
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from lemmata import tracing
from lemmata.agents._turn import Consolidator, TurnVectors
from lemmata.agents.memory import _text
from lemmata.errors import LemmataError, UsageError
from lemmata.operations import Envelope, OperationContext, Registry, Scope

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

    from lemmata.agents.router import Router
    from lemmata.embeddings import Embedder
    from lemmata.llm.base import ChatModel
    from lemmata.llm.types import Message
    from lemmata.memory.core import Memory
    from lemmata.settings import Settings

__all__ = ["Agent", "AgentResult", "AgentState", "Budget", "ThreadInfo"]

RunStatus = Literal[
    "answered", "failed", "declined", "needs_approval", "budget", "error", "cancelled"
]


@dataclass(frozen=True)
class Budget:
    """Per-run limits: model calls, operation (tool) calls and wall-clock seconds."""

    model_calls: int = 8
    tool_calls: int = 6
    seconds: float = 900.0

    def __post_init__(self) -> None:
        if self.model_calls < 0 or self.tool_calls < 0:
            raise UsageError("budgets cannot be negative")
        if self.seconds <= 0:
            raise UsageError(f"the seconds budget must be positive, not {self.seconds}")


class AgentState(TypedDict, total=False):
    """One thread's state (checkpointed): the messages, this turn's recalled memory, the
    planned calls, their envelopes, the usage and how the turn ended."""

    messages: Annotated[list[AnyMessage], add_messages]
    memory: list[dict[str, Any]]
    evidence: float | None
    plan: list[dict[str, Any]]
    results: list[dict[str, Any]]
    route: dict[str, Any] | None
    usage: dict[str, Any]
    status: str | None


@dataclass
class AgentResult:
    """What one run (a turn) produced. ``status``: ``answered`` (every operation ok, or a
    model's answer), ``failed`` (an operation ran and did not succeed: see ``results``),
    ``declined`` (no operation fits: ``answer`` says why), ``needs_approval`` (paused before a
    destructive operation: ``pending`` says which; :meth:`Agent.approve` continues),
    ``budget`` (a budget ran out), ``error`` (the model failed), ``cancelled``."""

    thread: str
    status: RunStatus
    answer: str
    results: list[Envelope[Any]] = field(default_factory=list)
    route: dict[str, Any] | None = None
    memory: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    pending: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "answered"


@dataclass(frozen=True)
class ThreadInfo:
    """A checkpointed thread: its id, how many messages, the first and the last."""

    thread: str
    messages: int
    first: str
    last: str


def _is_yes(value: Any) -> bool:
    if isinstance(value, dict):
        value = value.get("approve", value.get("approved", False))
    if isinstance(value, str):
        return value.strip().lower() in ("y", "yes", "approve", "approved", "ok", "true")
    return value is True


class Agent:
    """The supervisor; see the module docstring.

    ``model``: a :class:`~lemmata.llm.ChatModel`, or None for the offline router (the embedded
    default). ``user`` and ``name`` form the memory namespace (the thread is the session).
    ``allow``: destructive operations that run without asking (their names, or True for all).
    ``checkpoint``: the threads' SQLite file (default ``data_dir/agent/threads.sqlite``).
    ``capabilities`` restricts the operations (e.g. ``["memory", "provers"]``).
    ``checkpoint_every``: ``"turn"`` (default) writes a thread's checkpoint when a turn ends,
    pauses for approval, fails or is cancelled, so a process killed mid-turn loses that turn
    alone (about 9 ms a turn faster); ``"step"`` writes one after every step before the next
    starts, for turns whose operations run long.
    """

    def __init__(
        self,
        *,
        model: ChatModel | None = None,
        settings: Settings | None = None,
        user: str = "default",
        name: str = "lemmata",
        registry: Registry | None = None,
        capabilities: Iterable[str] | None = None,
        budget: Budget | None = None,
        allow: Iterable[str] | bool = (),
        checkpoint: str | Path | None = None,
        embedder: Embedder | None = None,
        record: bool = True,
        checkpoint_every: Literal["turn", "step"] = "turn",
    ) -> None:
        from lemmata.operations import load_registry
        from lemmata.settings import Settings

        # Tasks come from others (a user, a model's tool call): verifiers run confined
        # unless the settings say otherwise.
        self.settings = (settings or Settings.load()).for_input_from_others()
        tracing.configure_from(self.settings)
        self.model = model
        self.scope = Scope(user=user, agent=name, session=None)
        try:
            self.registry = (registry or load_registry()).select(capabilities)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not len(self.registry):
            raise UsageError("no operations are installed: reinstall lemmata")
        self.budget = budget or Budget()
        self.allow: set[str] | bool = allow if isinstance(allow, bool) else set(allow)
        self.record = record
        if checkpoint_every not in ("turn", "step"):
            raise UsageError(f"checkpoint_every must be 'turn' or 'step', not {checkpoint_every!r}")
        self.checkpoint_every = checkpoint_every
        self._router: Router | None = None
        self._consolidator = Consolidator()
        self._recorded: Memory | None = None  # what this turn recorded into, to structure
        self._last_thread = ""
        self._run_cancel = threading.Event()  # one per run: Ctrl-C tells its operations
        self.context = OperationContext(settings=self.settings, model=model, scope=self.scope)
        # The embedder every part of a turn shares (the recall, the router, the operations'
        # memory and the record): it hands the task's vector to all of them, computed once.
        self._vectors = TurnVectors(embedder if embedder is not None else self._load_embedder)
        self.context.resources[("embedder",)] = self._vectors
        path = (
            Path(checkpoint) if checkpoint else self.settings.data_dir / "agent" / "threads.sqlite"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        self.checkpoint_path = path
        self._con = sqlite3.connect(path, check_same_thread=False, timeout=30)
        self._con.execute("PRAGMA journal_mode=WAL")
        # A turn writes a checkpoint and its pending writes per step (about 15 commits): with
        # WAL, NORMAL keeps every acknowledged commit through a killed process and skips the
        # fsync of each (4 ms apiece here); only an OS crash or power cut can take the last
        # turns' history. The memory log, the source of truth for what was learned, stays FULL.
        self._con.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.Lock()
        from langgraph.checkpoint.sqlite import SqliteSaver

        self._saver = SqliteSaver(self._con)
        self.graph = self._build()

    # -- plumbing --------------------------------------------------------------------------

    def _load_embedder(self) -> Embedder:
        from lemmata.embeddings import get_embedder

        return get_embedder(self.settings)

    @property
    def embedder(self) -> Embedder:
        """The embedding model (loaded on first use)."""
        return self._vectors.inner

    @property
    def vectors(self) -> TurnVectors:
        """The embedder as the turn sees it: the task's vector computed once, in recall."""
        return self._vectors

    @property
    def router(self) -> Router:
        if self._router is None:
            from lemmata.agents.router import Router

            self._router = Router(self.registry, self.vectors)
        return self._router

    def close(self) -> None:
        """Finish structuring the recorded turns, then close the threads' database."""
        self._consolidator.close()
        self._con.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _memory(self) -> Any:
        from lemmata.memory.operations import open_memory

        return open_memory(self.context, self.scope)

    # -- the graph -------------------------------------------------------------------------

    def _build(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        graph = StateGraph(AgentState)
        graph.add_node("recall", self._step("recall", self._recall))
        graph.add_node("plan", self._step("plan", self._plan))
        graph.add_node("approve", self._step("approve", self._approve))
        graph.add_node("act", self._step("act", self._act))
        graph.add_node("answer", self._step("answer", self._answer))
        graph.add_node("record", self._step("record", self._record))
        graph.add_edge(START, "recall")
        graph.add_edge("recall", "plan")
        graph.add_conditional_edges(
            "plan", lambda s: "approve" if s.get("plan") else "record", ["approve", "record"]
        )
        graph.add_edge("approve", "act")
        graph.add_conditional_edges(
            "act",
            lambda s: "plan" if self.model is not None and s.get("status") is None else "answer",
            ["plan", "answer"],
        )
        graph.add_edge("answer", "record")
        graph.add_edge("record", END)
        return graph.compile(checkpointer=self._saver)

    def _step(self, name: str, node: Any) -> Any:
        """The node inside an ``agent.step NAME`` span (a no-op while tracing is off); a pause
        for approval is the step's outcome, not its failure."""
        from langgraph.errors import GraphInterrupt

        @functools.wraps(node)  # LangGraph reads the signature (a ``config`` parameter)
        def traced(*args: Any, **kwargs: Any) -> Any:
            paused: GraphInterrupt | None = None
            out: Any = None
            attributes = {"lemmata.step": name, "lemmata.agent": self.scope.agent}
            with tracing.span(f"agent.step {name}", attributes) as span:
                try:
                    out = node(*args, **kwargs)
                except GraphInterrupt as exc:
                    span.set("lemmata.status", "needs_approval")
                    paused = exc
                else:
                    if isinstance(out, dict):
                        span.set("lemmata.status", out.get("status"))
                        if name == "plan":
                            span.set("lemmata.calls", len(out.get("plan") or []))
                            route = out.get("route") or {}
                            span.set("lemmata.route.operation", route.get("operation"))
                            span.set("lemmata.route.confidence", route.get("confidence"))
            if paused is not None:
                raise paused
            return out

        return traced

    def _task(self, state: AgentState) -> str:
        human = next((m for m in reversed(state.get("messages") or []) if m.type == "human"), None)
        return _text(human).strip() if human is not None else ""

    def _recall(self, state: AgentState) -> dict[str, Any]:
        task = self._task(state)
        update: dict[str, Any] = {
            "memory": [],
            "evidence": None,
            "plan": [],
            "results": [],
            "route": None,
            "status": None,
            "usage": {"model_calls": 0, "tool_calls": 0, "started": time.time()},
        }
        if not task:
            return update
        # The last turn's structuring must end first: the next retrieve would wait for it
        # anyway, and the embedder is not safe to share between threads mid-call.
        self._consolidator.wait()
        vector = self.vectors.start(task)  # the router reads it again in the plan node
        try:
            found = self._memory().retrieve(task, k=5, budget_tokens=600, vector=vector)
        except LemmataError:
            return update  # a memory problem must not stop the task itself
        items = list(found.items)
        if items:
            # the dense channel measured most items against the task already; an item found
            # only by its words or links is embedded here
            missing = [i.text for i in items if i.similarity is None]
            extra = iter(self.embedder.embed(missing) @ vector if missing else ())
            sims = [float(next(extra) if i.similarity is None else i.similarity) for i in items]
            update["evidence"] = round(max(sims), 4)
            update["memory"] = [
                {
                    "id": i.id,
                    "text": i.text,
                    "provenance": list(i.provenance),
                    "similarity": round(float(s), 4),
                }
                for i, s in zip(items, sims, strict=True)
            ]
        return update

    def _over(self, state: AgentState, what: str) -> str | None:
        usage = state.get("usage") or {}
        spent = time.time() - usage.get("started", time.time())
        if spent > self.budget.seconds:
            return f"the time budget of {self.budget.seconds:g} s is spent"
        if what == "model" and usage.get("model_calls", 0) >= self.budget.model_calls:
            return f"the budget of {self.budget.model_calls} model calls is spent"
        if what == "tool" and usage.get("tool_calls", 0) >= self.budget.tool_calls:
            return f"the budget of {self.budget.tool_calls} tool calls is spent"
        return None

    def _plan(self, state: AgentState) -> dict[str, Any]:
        if self.model is None:
            return self._plan_offline(state)
        return self._plan_model(state)

    def _plan_offline(self, state: AgentState) -> dict[str, Any]:
        route = self.router.route(self._task(state), evidence=state.get("evidence"))
        decision = {
            "operation": route.operation,
            "args": route.args,
            "confidence": round(route.confidence, 4),
            "reason": route.reason,
        }
        if route.declined:
            return {
                "route": decision,
                "plan": [],
                "status": "declined",
                "messages": [
                    AIMessage(f"I cannot route this task: {route.reason}.", name="router")
                ],
            }
        call = {"id": f"call_{uuid.uuid4().hex[:12]}", "tool": route.operation, "args": route.args}
        # The router's choice is written as a tool call, so that a thread reads the same
        # whether the router or a model chose (a model can take over the thread later).
        ai = AIMessage(
            "",
            name="router",
            tool_calls=[{"name": call["tool"], "args": call["args"], "id": call["id"]}],
        )
        return {"route": decision, "plan": [call], "messages": [ai]}

    def _plan_model(self, state: AgentState) -> dict[str, Any]:
        from lemmata.errors import ModelError
        from lemmata.llm.types import ToolSpec
        from lemmata.prompts import load_prompt

        assert self.model is not None
        over = self._over(state, "model")
        if over:
            return {"plan": [], "status": "budget", "messages": [AIMessage(f"Stopped: {over}.")]}
        memory = state.get("memory") or []
        context = "\n".join(f"[{m['id']}] {m['text']}" for m in memory) or "(nothing)"
        system = load_prompt("agent", "lemmata.agents")["system"].format(context=context).strip()
        messages: list[Message] = [{"role": "system", "content": system}]
        messages += _to_chat(state.get("messages") or [])
        tools = [ToolSpec(op.qualified_name, op.summary, op.parameters()) for op in self.registry]
        usage = dict(state.get("usage") or {})
        usage["model_calls"] = usage.get("model_calls", 0) + 1
        try:
            reply = self.model.chat(messages, tools=tools)
        except ModelError as exc:
            return {
                "plan": [],
                "usage": usage,
                "status": "error",
                "messages": [AIMessage(f"The model failed: [{exc.code}] {exc}")],
            }
        label = "[scripted] " if reply.scripted or self.model.is_scripted else ""
        if not reply.tool_calls:
            return {
                "plan": [],
                "usage": usage,
                "status": "answered",
                "messages": [AIMessage(label + (reply.content or ""))],
            }
        calls = [
            {"id": c.id or f"call_{uuid.uuid4().hex[:12]}", "tool": c.name, "args": c.arguments}
            for c in reply.tool_calls
        ]
        ai = AIMessage(
            label + (reply.content or "") if reply.content else "",
            tool_calls=[{"name": c["tool"], "args": c["args"], "id": c["id"]} for c in calls],
        )
        return {"plan": calls, "usage": usage, "messages": [ai]}

    def _needs_approval(self, tool: str) -> bool:
        op = self.registry.find(tool)
        if op is None or not op.destructive or self.allow is True:
            return False
        return not (isinstance(self.allow, set) and op.qualified_name in self.allow)

    def _approve(self, state: AgentState) -> dict[str, Any]:
        from langgraph.types import interrupt

        plan = [dict(c) for c in state.get("plan") or []]
        asking = [c for c in plan if self._needs_approval(c["tool"])]
        if not asking:
            return {}
        answer = interrupt(
            {
                "question": "approve these destructive operations?",
                "calls": [{"tool": c["tool"], "args": c["args"]} for c in asking],
            }
        )
        if not _is_yes(answer):
            for c in plan:
                if c in asking:
                    c["denied"] = True
        return {"plan": plan}

    def _act(self, state: AgentState) -> dict[str, Any]:
        from langgraph.config import get_stream_writer

        writer: Any = None
        try:
            writer = get_stream_writer()
        except Exception:  # outside a streaming run: progress has nowhere to go
            writer = None
        usage = dict(state.get("usage") or {})
        results = list(state.get("results") or [])
        messages: list[AnyMessage] = []
        status: str | None = None
        started = usage.get("started", time.time())
        deadline = time.monotonic() + max(0.0, self.budget.seconds - (time.time() - started))
        for call in state.get("plan") or []:
            over = self._over({"usage": usage}, "tool")
            if call.get("denied"):
                env = Envelope[Any](
                    operation=call["tool"],
                    ok=False,
                    status="denied",
                    reason=f"{call['tool']} was not approved",
                    hint=(
                        "approve it when asked, or allow it up front: "
                        f"Agent(allow=[{call['tool']!r}]) in Python, "
                        f"':allow {call['tool']}' in lemmata shell"
                    ),
                )
            elif over:
                env = Envelope[Any](
                    operation=call["tool"], ok=False, status="cancelled", reason=over
                )
                status = "budget"
            else:
                usage["tool_calls"] = usage.get("tool_calls", 0) + 1
                ctx = OperationContext(
                    settings=self.settings,
                    model=self.model,
                    scope=self.scope.model_copy(update={"session": None}),
                    resources=self.context.resources,
                    progress=writer,
                    deadline=deadline,
                    _lock=self.context._lock,
                    _parents=(self._run_cancel,),
                )
                env = self.registry.invoke(call["tool"], call.get("args") or {}, ctx)
            results.append(env.model_dump(mode="json") | {"call": call["id"]})
            messages.append(
                ToolMessage(
                    env.model_dump_json(exclude_none=True)[:8000],
                    tool_call_id=call["id"],
                    name=call["tool"],
                    status="success" if env.ok else "error",
                )
            )
        if status is None and self._over({"usage": usage}, "time"):
            status = "budget"
        return {
            "results": results,
            "usage": usage,
            "messages": messages,
            "plan": [],
            "status": status,
        }

    def _answer(self, state: AgentState) -> dict[str, Any]:
        results = [Envelope[Any].model_validate(r) for r in state.get("results") or []]
        status = state.get("status")
        if self.model is not None and status == "budget":
            return {"messages": [AIMessage("Stopped: the budget ran out before an answer.")]}
        text = "\n\n".join(self._describe(env) for env in results) or "Nothing was run."
        if status is None:
            status = "answered" if all(e.ok for e in results) else "failed"
        return {"messages": [AIMessage(text, name="router")], "status": status}

    def _describe(self, env: Envelope[Any]) -> str:
        op = self.registry.find(env.operation)
        if op is not None and env.payload is not None:
            # a payload that does not validate still reads, as JSON
            with contextlib.suppress(Exception):
                env = env.model_copy(update={"payload": op.output.model_validate(env.payload)})
        return env.text()

    def _record(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        try:
            return self._record_turn(state, config)
        finally:
            self._vectors.end()  # the turn is over: its text's vector is let go

    def _record_turn(self, state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        if not self.record:
            return {}
        task = self._task(state)
        if not task:
            return {}
        thread = str(((config or {}).get("configurable") or {}).get("thread_id", "default"))
        results = state.get("results") or []
        episodes: list[dict[str, Any]] = []
        operations = {r["operation"] for r in results}
        # The task's words become an episode unless memory already took them (remember) or
        # they ask memory to drop something (forget: approved or denied, the request is not a
        # fact about the world, and keeping it would store what the user wanted gone).
        if not any(r["operation"] == "memory_remember" and r["ok"] for r in results) and (
            "memory_forget" not in operations
        ):
            episodes.append({"content": task, "speaker": self.scope.user, "session": thread})
        for r in results:
            if r["operation"].startswith("memory_"):
                continue  # memory's own reads and writes are not knowledge about the world
            verdict = r["status"] if r["ok"] else f"{r['status']}: {r['reason'][:200]}"
            episodes.append(
                {
                    "content": f"ran {r['operation']} -> {verdict}",
                    "kind": "action",
                    "speaker": self.scope.agent,
                    "session": thread,
                    "subgoal": task[:2000],
                    "outcome": 1.0 if r["ok"] else -1.0,
                }
            )
        if episodes:
            memory = self._memory()
            try:
                memory.add_episodes(episodes)
            except LemmataError:
                return {}  # the answer stands even if memory could not take the record
            if self.model is None:
                # offline structuring is local work: after the answer, not before it (see the
                # module docstring); with a model it would spend calls outside the budget
                self._recorded = memory
        return {}

    # -- running ---------------------------------------------------------------------------

    def _config(self, thread: str) -> RunnableConfig:
        return {"configurable": {"thread_id": thread}, "recursion_limit": 50}

    def run(self, task: str, *, thread: str | None = None) -> AgentResult:
        """Run one task to its answer (or to an approval request) in ``thread`` (a new thread
        when None). Ctrl-C cancels the turn: the thread stays valid, and the interrupt is
        raised again."""
        try:
            for _ in self._turn(task, thread):
                pass
            return self.result(self._last_thread)
        finally:
            self._settle()

    def stream(self, task: str | None, *, thread: str | None = None) -> Iterator[dict[str, Any]]:
        """Run ``task`` and yield events as they happen: ``{"type": "step", "node": ...}``
        after each step, ``{"type": "progress", "operation": ..., "message": ...,
        "fraction": ...}`` from inside operations, ``{"type": "interrupt", ...}`` when an
        approval is needed. ``task=None`` continues a paused thread."""
        try:
            yield from self._turn(task, thread)
        finally:
            self._settle()

    def _turn(self, task: str | None, thread: str | None) -> Iterator[dict[str, Any]]:
        if task is not None and (not isinstance(task, str) or not task.strip()):
            raise UsageError("the task is empty: say what you want done")
        thread = thread or f"t-{uuid.uuid4().hex[:10]}"
        self._last_thread = thread
        payload: Any = None if task is None else {"messages": [HumanMessage(task.strip())]}
        yield from self._drive(payload, thread)

    def _settle(self) -> None:
        """After a turn: structure what it recorded, in the background (see the module
        docstring); started once the turn is over, so that it does not slow the turn's end."""
        memory, self._recorded = self._recorded, None
        if memory is not None:
            self._consolidator.submit(memory)

    def cancel(self) -> None:
        """Tell the running operations of the current run to stop (Ctrl-C does this)."""
        self._run_cancel.set()

    def _drive(self, payload: Any, thread: str) -> Iterator[dict[str, Any]]:
        config = self._config(thread)
        self._run_cancel = threading.Event()
        previous: Any = None
        if threading.current_thread() is threading.main_thread():
            import signal

            # LangGraph runs nodes in worker threads and waits for them before Ctrl-C
            # reaches us: tell the operations first, so that they stop now.
            def on_sigint(signum: int, frame: Any) -> None:
                self._run_cancel.set()
                raise KeyboardInterrupt

            previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            parts: Iterator[Any] = self.graph.stream(
                payload,
                config,
                stream_mode=["updates", "custom"],
                subgraphs=True,
                durability="exit" if self.checkpoint_every == "turn" else "sync",
            )
            for namespace, mode, chunk in parts:
                if mode == "custom":
                    event = dict(chunk) if isinstance(chunk, dict) else {"message": str(chunk)}
                    yield {"type": "progress", "namespace": list(namespace), **event}
                    continue
                for node, update in (chunk or {}).items():
                    if node == "__interrupt__":
                        yield {"type": "interrupt", "requests": [i.value for i in update]}
                    else:
                        yield {"type": "step", "node": node, "namespace": list(namespace)}
        except KeyboardInterrupt:
            self._run_cancel.set()
            self._cancel(thread)
            raise
        finally:
            if previous is not None:
                import signal

                signal.signal(signal.SIGINT, previous)

    def approve(self, thread: str, approved: bool = True) -> AgentResult:
        """Continue a thread paused for approval: run the operations (``approved``) or
        answer that they were denied."""
        from langgraph.types import Command

        if not self.graph.get_state(self._config(thread)).interrupts:
            raise UsageError(f"thread {thread!r} is not waiting for an approval")
        self._last_thread = thread
        try:
            for _ in self._drive(Command(resume={"approve": approved}), thread):
                pass
            return self.result(thread)
        finally:
            self._settle()

    def _cancel(self, thread: str) -> None:
        """After Ctrl-C: close the turn so that the history stays valid (every tool call
        answered, nothing left pending)."""
        config = self._config(thread)
        snapshot = self.graph.get_state(config)
        messages = snapshot.values.get("messages") or []
        # A result the act node wrote may still be a pending write (not in the checkpoint
        # the update builds on): write every tool call's result again, by its id.
        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        patch: list[AnyMessage] = [
            results.get(str(call["id"]))
            or ToolMessage(
                '{"ok": false, "status": "cancelled", "reason": "cancelled by the user"}',
                tool_call_id=call["id"],
                name=call["name"],
                status="error",
            )
            for m in messages
            if isinstance(m, AIMessage)
            for call in m.tool_calls
        ]
        patch.append(AIMessage("Cancelled.", name="router"))
        self.graph.update_state(
            config, {"messages": patch, "status": "cancelled", "plan": []}, as_node="record"
        )

    def result(self, thread: str) -> AgentResult:
        """The latest turn of ``thread`` as an :class:`AgentResult`."""
        snapshot = self.graph.get_state(self._config(thread))
        values = snapshot.values or {}
        messages = values.get("messages") or []
        last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        usage = dict(values.get("usage") or {})
        started = usage.pop("started", None)
        if started is not None:
            usage["seconds"] = round(time.time() - started, 3)
        results = [Envelope[Any].model_validate(r) for r in values.get("results") or []]
        pending = [i.value for i in snapshot.interrupts] if snapshot.interrupts else None
        status: RunStatus
        if pending:
            status = "needs_approval"
            answer = "Waiting for approval: " + "; ".join(
                f"{c['tool']}({c['args']})" for req in pending for c in req.get("calls", [])
            )
        else:
            status = values.get("status") or "answered"
            answer = _text(last_ai) if last_ai is not None else ""
        return AgentResult(
            thread=thread,
            status=status,
            answer=answer,
            results=results,
            route=values.get("route"),
            memory=values.get("memory") or [],
            usage=usage,
            pending=pending,
        )

    def threads(self) -> list[ThreadInfo]:
        """Every checkpointed thread, most recent first."""
        try:
            rows = self._con.execute(
                "SELECT thread_id, MAX(rowid) FROM checkpoints GROUP BY thread_id ORDER BY 2 DESC"
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        out = []
        for thread, _ in rows:
            messages = self.graph.get_state(self._config(thread)).values.get("messages") or []
            texts = [_text(m) for m in messages]
            out.append(
                ThreadInfo(
                    thread,
                    len(messages),
                    texts[0][:80] if texts else "",
                    texts[-1][:80] if texts else "",
                )
            )
        return out

    def history(self, thread: str) -> list[dict[str, Any]]:
        """The thread's messages as ``{"role", "content"}`` (tool results with their tool)."""
        messages = self.graph.get_state(self._config(thread)).values.get("messages") or []
        return [
            {"role": {"human": "user", "ai": "assistant"}.get(m.type, m.type), "content": _text(m)}
            | ({"tool": m.name} if isinstance(m, ToolMessage) else {})
            for m in messages
        ]


def _to_chat(messages: list[AnyMessage]) -> list[Message]:
    """LangChain messages as chat messages for :class:`ChatModel`; a tool call left without
    its result (a cancelled turn) gets a "cancelled" result, so the history stays valid."""
    import json

    out: list[Message] = []
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    for m in messages:
        if isinstance(m, HumanMessage):
            out.append({"role": "user", "content": _text(m)})
        elif isinstance(m, AIMessage):
            msg: Message = {"role": "assistant", "content": _text(m) or None}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
                    }
                    for c in m.tool_calls
                ]
            out.append(msg)
            for c in m.tool_calls:
                if c["id"] not in answered:
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": str(c["id"]),
                            "content": "cancelled by the user",
                        }
                    )
        elif isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": str(m.tool_call_id), "content": _text(m)})
    return out
