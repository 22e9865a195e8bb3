"""How early-experience states and replies are written as text: the one renderer that the
training files, the reflection prompt and the model policy share (so that a model trained on
the files sees at inference exactly what it was trained on), and the reader of
``Thought: ... Action: ...`` replies."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lemmata.prompts import load_prompt

PACKAGE = "lemmata.agents.experience"

# The last line that opens with "Action:" (markdown emphasis and heading marks tolerated).
_ACTION_LINE = re.compile(r"^[ \t]*[*_#>`]*[ \t]*action[ \t]*[*_`]*[ \t]*:[ \t]*(.*)$", re.I | re.M)
_THOUGHT_HEAD = re.compile(r"^\s*[*_#>`]*\s*thought\s*[*_`]*\s*:\s*", re.I)
_WRAP = "`'\"*_ \t"


def prompt(name: str) -> dict[str, Any]:
    """The prompt file ``prompts/<name>.toml`` of this package."""
    return load_prompt(name, PACKAGE)


def render_state(
    instruction: str,
    observation: str,
    history: Sequence[tuple[str, str]],
    admissible: Sequence[str] | None = None,
    *,
    max_history: int | None = None,
) -> str:
    """The state as the agent reads it: the task, the earlier actions with what each returned,
    the current observation and, when given, the admissible actions.

    >>> print(render_state("Find the coin.", "A kitchen.", [("look", "A room.")], ["take coin"]))
    Task:
    Find the coin.
    <BLANKLINE>
    Action:
    look
    Observation:
    A room.
    <BLANKLINE>
    Current observation:
    A kitchen.
    <BLANKLINE>
    Admissible actions:
    - take coin
    """
    parts = [f"Task:\n{instruction.strip()}"]
    shown = list(history)
    if max_history is not None and len(shown) > max_history:
        parts.append(f"({len(shown) - max_history} earlier steps not shown)")
        shown = shown[len(shown) - max_history :] if max_history > 0 else []
    for action, obs in shown:
        parts.append(f"Action:\n{action.strip()}\nObservation:\n{obs.strip()}")
    parts.append(f"Current observation:\n{observation.strip()}")
    if admissible is not None:
        parts.append("Admissible actions:\n" + "\n".join(f"- {a}" for a in admissible))
    return "\n\n".join(parts)


@dataclass(frozen=True)
class Reply:
    """A ``Thought: ... Action: ...`` text split in two; ``action`` is ``None`` when there is
    no ``Action:`` line with an action after it."""

    thought: str
    action: str | None


def parse_reply(text: str) -> Reply:
    """Split a reply at its last ``Action:`` line (the action may follow on the next line).

    >>> parse_reply("Thought:\\nThe coin is here.\\n\\nAction:\\ntake coin")
    Reply(thought='The coin is here.', action='take coin')
    >>> parse_reply("I am not sure.").action is None
    True
    """
    matches = list(_ACTION_LINE.finditer(text or ""))
    if not matches:
        return Reply(_THOUGHT_HEAD.sub("", (text or "").strip()).strip(), None)
    last = matches[-1]
    action = last.group(1).strip(_WRAP)
    if not action:
        rest = text[last.end() :].strip().splitlines()
        action = rest[0].strip(_WRAP).strip() if rest else ""
    thought = _THOUGHT_HEAD.sub("", text[: last.start()].strip()).strip()
    return Reply(thought, " ".join(action.split()) or None)
