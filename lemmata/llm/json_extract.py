"""A tolerant reader of the JSON that models write.

Models wrap JSON in prose and code fences, leave trailing commas, use single quotes or Python's
``True``/``None``. :func:`extract_json` finds the first JSON object (or array) in a reply and
parses it, trying in turn: the whole text, fenced blocks, each balanced ``{...}``/``[...]``
span, and each of those repaired. It never evaluates code.

>>> extract_json('Sure! ```json\\n{"a": 1,}\\n```')
{'a': 1}
>>> extract_json("{'ok': True, 'n': None}")
{'ok': True, 'n': None}
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["JSONNotFound", "extract_json"]

_FENCE = re.compile(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class JSONNotFound(ValueError):
    """No parseable JSON value was found in the text."""


def extract_json(text: str, *, want: type | tuple[type, ...] = (dict, list)) -> Any:
    """Return the first JSON value of type ``want`` found in ``text``.

    Raises :class:`JSONNotFound` with a short reason when there is none.
    """
    if not isinstance(text, str) or not text.strip():
        raise JSONNotFound("the reply is empty")
    for candidate in _candidates(text):
        for parse in (_strict, _repaired, _python_literal):
            try:
                value = parse(candidate)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, want):
                return value
    raise JSONNotFound(f"no JSON {_names(want)} in the reply: {_preview(text)}")


def _candidates(text: str) -> Iterator[str]:
    yield text.strip()
    for m in _FENCE.finditer(text):
        yield m.group(1).strip()
    yield from _balanced_spans(text)


def _balanced_spans(text: str) -> Iterator[str]:
    """Each top-level ``{...}`` or ``[...]`` span, skipping brackets inside strings."""
    i = 0
    n = len(text)
    while i < n:
        if text[i] not in "{[":
            i += 1
            continue
        depth = 0
        quote: str | None = None
        escaped = False
        for j in range(i, n):
            ch = text[j]
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    yield text[i : j + 1]
                    i = j
                    break
        else:
            # Unclosed: a truncated reply. Offer what there is; a repair may still parse it.
            yield text[i:]
            return
        i += 1


def _strict(s: str) -> Any:
    return json.loads(s)


def _repaired(s: str) -> Any:
    fixed = _TRAILING_COMMA.sub(r"\1", s)
    fixed = fixed.replace("\u201c", '"').replace("\u201d", '"')
    return json.loads(fixed)


def _python_literal(s: str) -> Any:
    if len(s) > 200_000:
        raise ValueError("too long to try as a literal")
    return ast.literal_eval(_TRAILING_COMMA.sub(r"\1", s))


def _names(want: type | tuple[type, ...]) -> str:
    kinds = want if isinstance(want, tuple) else (want,)
    return " or ".join(
        {"dict": "object", "list": "array"}.get(k.__name__, k.__name__) for k in kinds
    )


def _preview(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")
