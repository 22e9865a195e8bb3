"""Versioned prompt files (TOML) beside the code that uses them."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["load_prompt"]


@cache
def load_prompt(name: str) -> dict[str, Any]:
    """The prompt file ``name.toml`` of this package, as a dict with at least ``version``."""
    text = files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    if "version" not in data:
        raise ValueError(f"prompt {name!r} has no version")
    return data
