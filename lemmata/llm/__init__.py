"""The LLM layer: one ``ChatModel`` protocol, a litellm backend and a scripted one.

>>> from lemmata.llm import ScriptedModel
>>> from pydantic import BaseModel
>>> class Verdict(BaseModel):
...     ok: bool
>>> ScriptedModel(['{"ok": true}']).structured("is 2 prime?", Verdict)
Verdict(ok=True)

With a real model::

    from lemmata import Settings
    from lemmata.llm import get_model
    model = get_model(Settings.load())      # LEMMATA_MODEL, LEMMATA_API_BASE, LEMMATA_API_KEY
    model.chat("Prove that 2 + 2 = 4.").content
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lemmata.errors import ModelNotConfigured
from lemmata.llm.base import BaseChatModel, ChatModel, schema_instruction
from lemmata.llm.json_extract import JSONNotFound, extract_json
from lemmata.llm.litellm_model import LiteLLMModel
from lemmata.llm.scripted import ScriptedModel
from lemmata.llm.types import (
    ChatResponse,
    Message,
    ToolCall,
    ToolSpec,
    Usage,
    UsageLog,
    normalize_messages,
)

if TYPE_CHECKING:
    from lemmata.settings import Settings

__all__ = [
    "BaseChatModel",
    "ChatModel",
    "ChatResponse",
    "JSONNotFound",
    "LiteLLMModel",
    "Message",
    "ScriptedModel",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "UsageLog",
    "extract_json",
    "get_model",
    "normalize_messages",
    "schema_instruction",
]


def get_model(
    settings: Settings, *, required: bool = False, feature: str = "this command"
) -> ChatModel | None:
    """The model the settings name, or ``None`` (the offline path) when none is set.

    With ``required=True`` a missing model raises :class:`~lemmata.errors.ModelNotConfigured`
    naming ``feature``.
    """
    if not settings.model:
        if required:
            raise ModelNotConfigured(feature)
        return None
    return LiteLLMModel.from_settings(settings)
