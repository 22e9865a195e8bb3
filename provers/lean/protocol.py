"""The Lean 4 REPL's JSON protocol (leanprover-community/repl): framing and replies.

Requests are JSON objects, each followed by a blank line; so are the replies. A reply is one of:

- a command reply ``{"env", "messages"?, "sorries"?, "tactics"?}`` (``cmd``, ``path``, and
  the pickling commands, which answer with just ``env`` or ``proofState``);
- a tactic reply ``{"proofState", "goals", "proofStatus"?, "messages"?, "sorries"?}``;
- an error ``{"message": "..."}`` (an unknown environment or proof state, a tactic that does
  not parse).

>>> r = parse_response({"env": 0, "messages": [{"severity": "error", "pos": {"line": 1, "column": 15},
...     "endPos": {"line": 1, "column": 17}, "data": "unsolved goals\\n⊢ Nat"}]})
>>> r.errors[0].line, r.errors[0].text.splitlines()[0]
(1, 'unsolved goals')
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CommandResponse",
    "LeanMessage",
    "ProtocolError",
    "ReplError",
    "ResponseReader",
    "Sorry",
    "TacticInfo",
    "TacticResponse",
    "encode_request",
    "goals_in_message",
    "parse_response",
    "split_transcript",
]


class ProtocolError(ValueError):
    """The REPL answered something that is not a reply of its protocol."""


@dataclass(frozen=True)
class LeanMessage:
    severity: str
    text: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class Sorry:
    goal: str
    proof_state: int | None
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class TacticInfo:
    tactic: str
    goals: str
    proof_state: int | None
    used_constants: tuple[str, ...] = ()
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class CommandResponse:
    env: int | None
    messages: tuple[LeanMessage, ...] = ()
    sorries: tuple[Sorry, ...] = ()
    tactics: tuple[TacticInfo, ...] = ()
    proof_state: int | None = None  # set by unpickleProofStateFrom / pickleTo of a proof state
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def errors(self) -> list[LeanMessage]:
        return [m for m in self.messages if m.severity == "error"]


@dataclass(frozen=True)
class TacticResponse:
    proof_state: int
    goals: tuple[str, ...]
    proof_status: str | None = None
    messages: tuple[LeanMessage, ...] = ()
    sorries: tuple[Sorry, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def errors(self) -> list[LeanMessage]:
        return [m for m in self.messages if m.severity == "error"]

    @property
    def completed(self) -> bool:
        """No goals left and nothing unfinished (``proofStatus`` ``Completed``, when the REPL
        reports one)."""
        if self.proof_status is not None:
            return self.proof_status == "Completed"
        return not self.goals and not self.errors


@dataclass(frozen=True)
class ReplError:
    message: str


Response = CommandResponse | TacticResponse | ReplError


def encode_request(request: dict[str, Any]) -> bytes:
    """One request, framed: the JSON text and a blank line."""
    return (json.dumps(request, ensure_ascii=False) + "\n\n").encode("utf-8")


def _pos(obj: Any) -> tuple[int | None, int | None]:
    if isinstance(obj, dict):
        line, col = obj.get("line"), obj.get("column")
        return (line if isinstance(line, int) else None, col if isinstance(col, int) else None)
    return None, None


def _message(obj: Any) -> LeanMessage:
    if not isinstance(obj, dict) or not isinstance(obj.get("data"), str):
        raise ProtocolError(f"a message must be an object with text 'data': {obj!r:.80}")
    line, col = _pos(obj.get("pos"))
    end_line, end_col = _pos(obj.get("endPos"))
    return LeanMessage(str(obj.get("severity", "info")), obj["data"], line, col, end_line, end_col)


def _sorry(obj: Any) -> Sorry:
    if not isinstance(obj, dict):
        raise ProtocolError(f"a sorry must be an object: {obj!r:.80}")
    line, col = _pos(obj.get("pos"))
    ps = obj.get("proofState")
    return Sorry(str(obj.get("goal", "")), ps if isinstance(ps, int) else None, line, col)


def _tactic(obj: Any) -> TacticInfo:
    if not isinstance(obj, dict):
        raise ProtocolError(f"a tactic must be an object: {obj!r:.80}")
    line, col = _pos(obj.get("pos"))
    ps = obj.get("proofState")
    return TacticInfo(
        str(obj.get("tactic", "")),
        str(obj.get("goals", "")),
        ps if isinstance(ps, int) else None,
        tuple(str(c) for c in obj.get("usedConstants") or ()),
        line,
        col,
    )


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key) or []
    if not isinstance(value, list):
        raise ProtocolError(f"{key!r} must be a list")
    return value


def parse_response(obj: Any) -> Response:
    """Turn one decoded reply into a typed value; :class:`ProtocolError` if it is none."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"a reply must be a JSON object, got {type(obj).__name__}")
    messages = tuple(_message(m) for m in _list(obj, "messages"))
    sorries = tuple(_sorry(s) for s in _list(obj, "sorries"))
    if "message" in obj and "env" not in obj and "proofState" not in obj:
        return ReplError(str(obj["message"]))
    if "goals" in obj and "proofState" in obj:
        goals = obj["goals"]
        if not isinstance(goals, list) or not isinstance(obj["proofState"], int):
            raise ProtocolError(
                "a tactic reply needs an integer 'proofState' and a list of 'goals'"
            )
        status = obj.get("proofStatus")
        return TacticResponse(
            obj["proofState"],
            tuple(str(g) for g in goals),
            str(status) if status is not None else None,
            messages,
            sorries,
            obj,
        )
    if "env" in obj or "proofState" in obj:
        env, ps = obj.get("env"), obj.get("proofState")
        if (env is not None and not isinstance(env, int)) or (
            ps is not None and not isinstance(ps, int)
        ):
            raise ProtocolError("'env' and 'proofState' must be integers")
        tactics = tuple(_tactic(t) for t in _list(obj, "tactics"))
        return CommandResponse(env, messages, sorries, tactics, ps, obj)
    if messages:  # a command whose every declaration failed still reports its messages
        return CommandResponse(None, messages, sorries, (), None, obj)
    raise ProtocolError(f"not a REPL reply: {json.dumps(obj)[:80]}")


class ResponseReader:
    """Reassemble replies from the REPL's output, fed in chunks of any size."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._partial = ""

    def feed(self, text: str) -> Iterator[dict[str, Any]]:
        self._partial += text
        *complete, self._partial = self._partial.split("\n")
        for line in complete:
            if line.strip():
                self._lines.append(line)
                continue
            if self._lines:
                yield self._flush()

    def _flush(self) -> dict[str, Any]:
        text = "\n".join(self._lines)
        self._lines = []
        try:
            obj = json.loads(text, strict=False)
        except json.JSONDecodeError as exc:
            raise ProtocolError(
                f"the REPL wrote text that is not JSON: {text[:120]!r} ({exc.msg})"
            ) from None
        if not isinstance(obj, dict):
            raise ProtocolError("the REPL wrote JSON that is not an object")
        return obj

    def close(self) -> Iterator[dict[str, Any]]:
        """Whatever is left once the stream has ended."""
        if self._partial.strip():
            self._lines.append(self._partial)
            self._partial = ""
        if self._lines:
            yield self._flush()


def split_transcript(text: str) -> list[str]:
    """The blank-line-separated blocks of a transcript file (requests or replies)."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.strip():
            current.append(line)
        elif current:
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return blocks


_HYPOTHESIS = re.compile(r"^(case \S+|\S.* : .*)$")


def goals_in_message(text: str) -> tuple[str, ...]:
    """The goals a message shows, each as the REPL writes goals (``case`` tag, hypotheses,
    ``⊢`` conclusion); ``()`` when it shows none.

    Lean appends the goal to many messages: ``unsolved goals`` lists them, blank-line apart;
    ``don't know how to synthesize placeholder`` follows ``context:`` with one; a failed
    tactic ends with one. A goal is the run of hypothesis lines before a ``⊢`` line, and the
    lines indented under either.

    >>> goals_in_message("unsolved goals\\ncase zero\\n⊢ 0 = 0\\n\\ncase succ\\nn : Nat\\n⊢ n + 1 = 0")
    ('case zero\\n⊢ 0 = 0', 'case succ\\nn : Nat\\n⊢ n + 1 = 0')
    """
    goals = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        turnstiles = [i for i, line in enumerate(lines) if line.startswith("⊢")]
        if not turnstiles:
            continue
        first = turnstiles[0]
        while first > 0 and (
            _HYPOTHESIS.match(lines[first - 1]) or lines[first - 1].startswith(" ")
        ):
            first -= 1
        while first < turnstiles[0] and lines[first].startswith(" "):
            first += 1  # the indented tail of a header line, not a hypothesis
        last = turnstiles[-1] + 1
        while last < len(lines) and lines[last].startswith(" "):
            last += 1
        goals.append("\n".join(lines[first:last]))
    return tuple(goals)
