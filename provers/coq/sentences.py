"""Split Coq source into sentences, as coqtop reads them.

A sentence ends at a ``.`` followed by whitespace or the end of the text, outside comments
``(* ... *)`` (which nest) and strings. At the start of a sentence, bullets (``-``, ``+``,
``*``, repeated) and braces ``{`` ``}`` are sentences of their own, as are goal selectors
followed by a brace (``2: {``). Comments between sentences are dropped.

>>> [s.text for s in split_sentences("intros n. induction n.\\n- reflexivity.\\n- simpl. auto.")]
['intros n.', 'induction n.', '-', 'reflexivity.', '-', 'simpl.', 'auto.']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Sentence", "SentenceError", "head_word", "split_sentences"]

_SELECTOR_BRACE = re.compile(r"(\d+|all|par|!)\s*:\s*\{")


class SentenceError(ValueError):
    """The text does not split into complete sentences (an unclosed comment, string or a
    sentence without its final period)."""


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int  # offset of the sentence's first character in the source


def head_word(sentence: str) -> str:
    """The first word of a sentence: ``"Proof with auto."`` -> ``"Proof"``."""
    m = re.match(r"\s*([A-Za-z_][\w']*)", sentence)
    return m.group(1) if m else ""


def _skip_comment(text: str, i: int) -> int:
    """``text[i:]`` starts with ``(*``; return the offset just after the matching ``*)``."""
    depth = 0
    n = len(text)
    while i < n:
        if text.startswith("(*", i):
            depth += 1
            i += 2
        elif text.startswith("*)", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        elif text[i] == '"':
            i = _skip_string(text, i)
        else:
            i += 1
    raise SentenceError("a comment '(*' is never closed")


def _skip_string(text: str, i: int) -> int:
    j = i + 1
    n = len(text)
    while j < n:
        if text[j] == '"':
            if j + 1 < n and text[j + 1] == '"':  # "" is an escaped quote
                j += 2
                continue
            return j + 1
        j += 1
    raise SentenceError("a string '\"' is never closed")


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text``; raises :class:`SentenceError` if one is incomplete."""
    out: list[Sentence] = []
    i, n = 0, len(text)
    while i < n:
        # Skip whitespace and comments between sentences.
        if text[i].isspace():
            i += 1
            continue
        if text.startswith("(*", i):
            i = _skip_comment(text, i)
            continue
        start = i
        ch = text[i]
        if ch in "-+*":
            while i < n and text[i] == ch:
                i += 1
            out.append(Sentence(text[start:i], start))
            continue
        if ch in "{}":
            out.append(Sentence(ch, start))
            i += 1
            continue
        m = _SELECTOR_BRACE.match(text, i)
        if m:
            out.append(Sentence(m.group(0), start))
            i = m.end()
            continue
        while i < n:
            if text.startswith("(*", i):
                i = _skip_comment(text, i)
                continue
            c = text[i]
            if c == '"':
                i = _skip_string(text, i)
                continue
            if (
                c == "."
                and (i + 1 == n or text[i + 1].isspace())
                and not text.startswith("..", i - 1)
            ):
                i += 1
                out.append(Sentence(text[start:i], start))
                break
            i += 1
        else:
            fragment = " ".join(text[start:].split())[:60]
            raise SentenceError(
                f"the text ends inside a sentence without its final '.': {fragment!r}"
            )
    return out
