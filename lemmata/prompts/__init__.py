"""Versioned prompt files (TOML) beside the code that uses them."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["load_prompt"]


@cache
def load_prompt(name: str, package: str = __name__) -> dict[str, Any]:
    """The prompt file ``name.toml`` as a dict with at least ``version``: from this package, or
    from ``package``'s ``prompts/`` folder (``load_prompt("reason", "lemmata.memory")``)."""
    where = files(package) if package == __name__ else files(package).joinpath("prompts")
    text = where.joinpath(f"{name}.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    if "version" not in data:
        raise ValueError(f"prompt {name!r} of {package} has no version")
    return data
