"""PlugMem in LangGraph: memory tools for agents, and nodes that inject retrieved knowledge into
the graph's state and record each turn as episodes.

- :func:`memory_tools` gives ``remember``, ``recall`` and ``forget`` as LangChain tools, for
  ``langgraph.prebuilt.ToolNode`` or a model that calls tools.
- :class:`RecallNode` reads the latest user message, retrieves knowledge for it and writes
  ``state["memory"]`` (:class:`MemoryContext`: the context lines and every item's provenance).
- :class:`RecordNode` appends the messages it has not seen yet as episodes; the LangGraph
  thread (``config["configurable"]["thread_id"]``) is the memory's session.
- :func:`memory_agent` wires recall -> respond -> record into a compiled graph. With a model the
  reply is written from the knowledge; without one (offline) the reply lists the ranked facts.

>>> from lemmata.agents.memory import memory_agent           # doctest: +SKIP
>>> graph = memory_agent(Memory("/tmp/mem", user="alice"))   # doctest: +SKIP
>>> out = graph.invoke({"messages": [("user", "Where does Alice live?")]},
...                    {"configurable": {"thread_id": "chat-1"}})  # doctest: +SKIP
>>> out["memory"]["items"][0]["provenance"]                  # doctest: +SKIP
['ep_...']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from lemmata.errors import UsageError

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph.state import CompiledStateGraph

    from lemmata.llm.base import ChatModel
    from lemmata.memory import Memory, Retrieval

__all__ = [
    "MemoryContext",
    "MemoryItem",
    "MemoryState",
    "RecallNode",
    "RecordNode",
    "memory_agent",
    "memory_tools",
]


class MemoryItem(TypedDict):
    """One retrieved item as it sits in the graph's state."""

    id: str
    kind: str
    text: str
    provenance: list[str]


class MemoryContext(TypedDict):
    """What :class:`RecallNode` writes: the query, the prompt lines and the items."""

    query: str
    context: str
    items: list[MemoryItem]
    tokens: int


class MemoryState(TypedDict, total=False):
    """A chat state with memory: the messages (LangGraph's reducer), the retrieved knowledge,
    and how many messages have been recorded as episodes."""

    messages: Annotated[list[AnyMessage], add_messages]
    memory: MemoryContext
    recorded: int


_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, str | dict)
    )


def _context(found: Retrieval) -> MemoryContext:
    return {
        "query": found.query,
        "context": found.as_context(),
        "items": [
            {"id": i.id, "kind": i.kind, "text": i.text, "provenance": list(i.provenance)}
            for i in found.items
        ],
        "tokens": found.tokens,
    }


def _session(config: RunnableConfig | None) -> str | None:
    configurable = (config or {}).get("configurable") or {}
    thread = configurable.get("thread_id")
    return str(thread) if thread is not None else None


def memory_tools(memory: Memory, *, k: int = 5, budget_tokens: int = 600) -> list[BaseTool]:
    """``remember(text, speaker?)``, ``recall(query)`` and ``forget(item_id)`` over ``memory``.

    ``recall`` answers with one line per item, ``[id] text (from: episode ids)``, so that an
    agent can cite and forget by id.
    """

    def remember(text: str, speaker: str | None = None) -> str:
        """Store a piece of information in long-term memory."""
        eid = memory.add_episode(text, speaker=speaker)
        memory.consolidate()
        return f"stored as episode {eid}"

    def recall(query: str) -> str:
        """Look up what long-term memory knows about a question."""
        found = memory.retrieve(query, k=k, budget_tokens=budget_tokens)
        if not found.items:
            return "nothing in memory matches"
        return "\n".join(
            f"[{i.id}] {i.text} (from: {', '.join(i.provenance)})" for i in found.items
        )

    def forget(item_id: str) -> str:
        """Remove one remembered item (by the id recall showed) from memory."""
        report = memory.forget([item_id])
        return f"forgot {item_id}" if report.items else f"no item {item_id} in memory"

    return [
        StructuredTool.from_function(remember),
        StructuredTool.from_function(recall),
        StructuredTool.from_function(forget),
    ]


class RecallNode:
    """A node that retrieves knowledge for the latest user message into ``state["memory"]``."""

    def __init__(self, memory: Memory, *, k: int = 8, budget_tokens: int | None = 800) -> None:
        self.memory = memory
        self.k = k
        self.budget_tokens = budget_tokens

    def __call__(self, state: MemoryState) -> dict[str, Any]:
        messages = state.get("messages") or []
        question = next((m for m in reversed(messages) if m.type == "human"), None)
        if question is None or not _text(question).strip():
            return {"memory": {"query": "", "context": "", "items": [], "tokens": 0}}
        found = self.memory.retrieve(_text(question), k=self.k, budget_tokens=self.budget_tokens)
        return {"memory": _context(found)}


class RecordNode:
    """A node that appends the messages not recorded yet as episodes, in the thread's session.

    By default only the user's messages are recorded (``roles=("human", "ai")`` adds the
    assistant's): a reply written from memory would otherwise come back as new knowledge.
    """

    def __init__(self, memory: Memory, *, roles: Sequence[str] = ("human",)) -> None:
        self.memory = memory
        self.roles = tuple(roles)

    def __call__(self, state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        messages = state.get("messages") or []
        start = state.get("recorded", 0)
        # a memory confined to one session records there; otherwise the thread is the session
        session = self.memory.namespace.session or _session(config)
        episodes = [
            {
                "content": _text(m),
                "speaker": getattr(m, "name", None) or _ROLES.get(m.type, m.type),
                "session": session,
            }
            for m in messages[start:]
            if m.type in self.roles and _text(m).strip()
        ]
        if episodes:
            self.memory.add_episodes(episodes)
        return {"recorded": len(messages)}


def _respond(model: ChatModel | None) -> Any:
    def respond(state: MemoryState) -> dict[str, Any]:
        memory: MemoryContext = state.get("memory") or {
            "query": "",
            "context": "",
            "items": [],
            "tokens": 0,
        }
        if model is None:
            lines = [f"- {i['text']}" for i in memory["items"]]
            text = (
                "From memory (offline, no model):\n" + "\n".join(lines)
                if lines
                else "Nothing in memory matches."
            )
            return {"messages": [AIMessage(text, name="memory")]}
        from lemmata.prompts import load_prompt

        prompt = load_prompt("memory_agent", "lemmata.agents")
        history = [
            {"role": _ROLES.get(m.type, "user"), "content": _text(m)}
            for m in state.get("messages") or []
            if m.type in ("human", "ai")
        ]
        reply = model.chat(
            [
                {
                    "role": "system",
                    "content": prompt["system"].format(context=memory["context"] or "(none)"),
                },
                *history,
            ]
        )
        label = "[scripted] " if reply.scripted or model.is_scripted else ""
        return {"messages": [AIMessage(label + (reply.content or ""))]}

    return respond


def memory_agent(
    memory: Memory,
    model: ChatModel | None = None,
    *,
    k: int = 8,
    budget_tokens: int | None = 800,
    checkpointer: Any = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A chat graph with memory: recall -> respond -> record, over :class:`MemoryState`.

    Pass a LangGraph checkpointer (e.g. ``SqliteSaver``) to keep threads across runs.
    """
    if k < 1:
        raise UsageError(f"k must be at least 1, not {k}")
    graph = StateGraph(MemoryState)
    graph.add_node("recall", RecallNode(memory, k=k, budget_tokens=budget_tokens))
    graph.add_node("respond", _respond(model))
    graph.add_node("record", RecordNode(memory))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "record")
    graph.add_edge("record", END)
    return graph.compile(checkpointer=checkpointer)
