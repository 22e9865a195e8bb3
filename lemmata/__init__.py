"""Lemmata: LLM agents that remember, prove, see and research.

Importing ``lemmata`` is cheap: it loads settings and errors only. The heavy parts (litellm,
torch, chromadb) are imported by the modules that use them, on first use.

>>> import lemmata
>>> settings = lemmata.Settings.load(config_file=None)
>>> model = lemmata.ScriptedModel(["hello"])
>>> model.chat([{"role": "user", "content": "hi"}]).content
'hello'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lemmata._version import __version__
from lemmata.errors import LemmataError
from lemmata.settings import Settings

if TYPE_CHECKING:
    from lemmata.agents.agent import Agent
    from lemmata.embeddings import Embedder, get_embedder
    from lemmata.jupyter import load_ipython_extension
    from lemmata.llm import ChatModel, LiteLLMModel, ScriptedModel, get_model

__all__ = [
    "Agent",
    "ChatModel",
    "Embedder",
    "LemmataError",
    "LiteLLMModel",
    "ScriptedModel",
    "Settings",
    "__version__",
    "get_embedder",
    "get_model",
    "load_ipython_extension",
]

_LAZY = {
    "Agent": "lemmata.agents.agent",
    "ChatModel": "lemmata.llm",
    "LiteLLMModel": "lemmata.llm",
    "ScriptedModel": "lemmata.llm",
    "get_model": "lemmata.llm",
    "Embedder": "lemmata.embeddings",
    "get_embedder": "lemmata.embeddings",
    "load_ipython_extension": "lemmata.jupyter",  # %load_ext lemmata
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lemmata' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
