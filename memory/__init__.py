"""lemmata.memory: PlugMem, a knowledge-centric memory graph that any agent can plug in.

Episodes (utterances, observations, actions) are appended durably to SQLite and structured off
the write path into propositional facts (with tags, entities, validity in time and their
source episodes) and prescriptive procedures (subgoal -> steps, with outcomes). Retrieval is
hybrid and indexed (dense vectors in chromadb, BM25 in SQLite FTS5, tags and entities, graph
hops, a Personalized PageRank walk over the entity graph that links facts across sessions,
recency, credibility, validity), fused by reciprocal rank and packed into a token
budget; every item carries the ids of exactly the episodes it came from.

>>> from lemmata.memory import Memory                              # doctest: +SKIP
>>> mem = Memory("/tmp/mem", user="alice")                          # doctest: +SKIP
>>> mem.add_episode("I adopted a cat named Miso yesterday.", speaker="Alice",
...                 timestamp="2024-05-02T10:00")                    # doctest: +SKIP
>>> mem.retrieve("What is the name of Alice's cat?").items[0].text   # doctest: +SKIP
'Alice adopted a cat named Miso yesterday (1 May 2024).'
"""

from typing import TYPE_CHECKING, Any

from lemmata.memory.core import ConsolidationReport, ForgetReport, Memory, Reasoning
from lemmata.memory.extract import Extractor, ModelExtractor, OfflineExtractor
from lemmata.memory.index import ChromaIndex, VectorIndex
from lemmata.memory.log import MemoryLog, StoreError
from lemmata.memory.retrieve import RetrievalConfig
from lemmata.memory.types import (
    AuditEntry,
    Episode,
    Fact,
    FactInput,
    Item,
    Namespace,
    Procedure,
    ProcedureInput,
    Retrieval,
)

if TYPE_CHECKING:
    from lemmata.memory.store import (
        InvalidNamespace,
        NamespaceOutOfScope,
        PlugMemStore,
        StoreInputError,
    )

# LangGraph's store interface (and langchain-core under it) loads only when the store is used.
_LAZY = {
    name: "lemmata.memory.store"
    for name in ("InvalidNamespace", "NamespaceOutOfScope", "PlugMemStore", "StoreInputError")
}

__all__ = [
    "AuditEntry",
    "ChromaIndex",
    "ConsolidationReport",
    "Episode",
    "Extractor",
    "Fact",
    "FactInput",
    "ForgetReport",
    "InvalidNamespace",
    "Item",
    "Memory",
    "MemoryLog",
    "ModelExtractor",
    "Namespace",
    "NamespaceOutOfScope",
    "OfflineExtractor",
    "PlugMemStore",
    "Procedure",
    "ProcedureInput",
    "Reasoning",
    "Retrieval",
    "RetrievalConfig",
    "StoreError",
    "StoreInputError",
    "VectorIndex",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lemmata.memory' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
