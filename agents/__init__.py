"""lemmata.agents: LangGraph graphs (tool-use, prover, GUI and research agents), their tools, and the early-experience loop.

Built so far: :mod:`lemmata.agents.memory` (PlugMem tools and nodes, and a chat graph with
memory).
"""

from lemmata.agents.memory import (
    MemoryContext,
    MemoryItem,
    MemoryState,
    RecallNode,
    RecordNode,
    memory_agent,
    memory_tools,
)

__all__ = [
    "MemoryContext",
    "MemoryItem",
    "MemoryState",
    "RecallNode",
    "RecordNode",
    "memory_agent",
    "memory_tools",
]
