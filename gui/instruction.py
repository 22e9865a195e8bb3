"""Instructions in: what to look for, and where relative to what.

``parse_instruction("click the icon left of Save")`` gives the target phrase (``""`` here: any
icon), a hint that the target is an icon, and the relation ``("left", "Save")``; ``'type into
the "Email" field'`` gives ``"Email"``. The anchors match the phrase; :mod:`~lemmata.gui.ground`
resolves relations by grounding the reference first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lemmata.errors import UsageError

__all__ = ["Query", "parse_instruction"]

_VERBS = (
    "click on",
    "click",
    "double click",
    "double-click",
    "right click",
    "tap on",
    "tap",
    "press",
    "hit",
    "select",
    "choose",
    "pick",
    "open",
    "go to",
    "navigate to",
    "show",
    "toggle",
    "enable",
    "disable",
    "check",
    "uncheck",
    "type into",
    "type in",
    "enter text in",
    "focus",
    "find",
    "locate",
    "use",
    "view",
)
_ARTICLES = {"the", "a", "an", "this", "that", "my"}
_ICON_WORDS = {"icon", "glyph", "symbol", "pictogram"}
_ROLE_WORDS = {
    "button",
    "link",
    "tab",
    "menu",
    "field",
    "input",
    "box",
    "checkbox",
    "option",
    "item",
    "label",
    "entry",
    "control",
    "toggle",
    "switch",
    "text",
    "textbox",
    "dropdown",
}
_RELATION = re.compile(
    r"^(?P<target>.*?)\s*(?:which is\s+|that is\s+|just\s+|directly\s+)?"
    r"(?:to the\s+)?(?P<rel>left of|right of|above|below|under|beneath|next to|beside)\s+"
    r"(?:the\s+)?(?P<ref>.+)$",
    re.I,
)
_DIRECTIONS = {
    "left of": "left",
    "right of": "right",
    "above": "above",
    "below": "below",
    "under": "below",
    "beneath": "below",
    "next to": "near",
    "beside": "near",
}


@dataclass(frozen=True)
class Query:
    """A parsed instruction: ``phrase`` to match, ``kind`` (``"icon"``, ``"text"`` or None when
    the instruction does not say) and ``relation`` as ``(direction, reference phrase)``."""

    instruction: str
    phrase: str
    kind: str | None = None
    relation: tuple[str, str] | None = None


def _strip(text: str) -> tuple[str, str | None]:
    """The phrase left of ``text`` without verbs, articles and role words; the kind hint."""
    quoted = re.findall(r"[\"“'‘]([^\"”'’]+)[\"”'’]", text)
    words = text.strip().rstrip(".!?").split()
    lowered = " ".join(words).lower()
    for verb in sorted(_VERBS, key=len, reverse=True):
        if lowered.startswith(verb + " ") or lowered == verb:
            words = words[len(verb.split()) :]
            break
    kind = None
    kept = []
    roles = []
    for w in words:
        lw = w.lower().strip(",;:")
        if lw in _ICON_WORDS:
            kind = "icon"
            continue
        if lw in _ROLE_WORDS:
            roles.append(w.strip(",;:"))
            continue
        if lw in _ARTICLES:
            continue
        kept.append(w.strip(",;:"))
    if not kept and roles:  # "tap the text button": the role word is the name
        kept = roles[:1]
    if quoted:
        return quoted[0].strip(), kind or "text"
    return " ".join(kept).strip("\"'“”‘’ "), kind


def parse_instruction(instruction: str) -> Query:
    """Parse ``instruction``; an empty one is a :class:`~lemmata.errors.UsageError`."""
    if not isinstance(instruction, str) or not instruction.strip():
        raise UsageError("the instruction is empty: say what to find, e.g. 'click Submit'")
    text = " ".join(instruction.split())
    if len(text) > 500:
        raise UsageError(f"the instruction is {len(text)} characters long: keep it under 500")
    m = _RELATION.match(text)
    if m and m.group("ref").strip():
        target, kind = _strip(m.group("target"))
        ref, _ = _strip(m.group("ref"))
        if ref:
            return Query(text, target, kind, (_DIRECTIONS[m.group("rel").lower()], ref))
    phrase, kind = _strip(text)
    return Query(text, phrase or text, kind)
