"""Instructions in: what to look for, and where relative to what.

``parse_instruction("click the icon left of Save")`` gives the target phrase (``""`` here: any
icon), a hint that the target is an icon, and the relation ``("left", "Save")``; ``'type into
the "Email" field'`` gives ``"Email"``.

Instructions worded as actions are read twice: ``"create a new text file"`` keeps its phrase
(``"create new text file"``), names its ``subject`` (``"text file"``: what a label would say,
the action words and "new" gone) and its ``action_text`` (``"create a new text file"``, only the
clicking words gone: what an icon's meaning is matched with), and the action without its object,
which is what an icon draws: ``verb`` (``"reload the runs"`` -> ``"reload"``) and ``verb_phrase``
(``"expand the chart to full screen"`` -> ``"expand to full screen"``), and ``card``, the title of
the card the action is done in (``"pin the eval loss chart to the top"`` -> ``"eval loss"``).
The anchors match the phrase; :mod:`~lemmata.gui.ground`
resolves relations by grounding the reference first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lemmata.errors import UsageError

__all__ = ["CONCERNS_NAME", "Query", "concerned_name", "parse_instruction"]

_VERBS = (
    "click to",
    "tap to",
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
# Verbs that say what the user wants done (not how to click): a label names the object
_ACTIONS = {
    "create", "make", "add", "start", "launch", "run", "switch", "change", "delete", "remove",
    "close", "edit", "rename", "save", "download", "upload", "print", "share", "copy", "paste",
    "cut", "undo", "redo", "refresh", "reload", "search", "show", "hide", "view", "restart",
    "stop", "play", "pause", "insert", "attach", "send", "export", "import", "new", "go",
    "return", "get", "see", "enter", "leave", "exit", "turn", "set", "manage", "browse", "open",
    # looking at something: its object is what to find
    "read", "look", "inspect", "examine", "watch", "study",
}  # fmt: skip
_PARTICLES = {"in", "out", "up", "off", "on", "to", "into", "back", "over", "down", "at"}
# "show only the image cards": words between the action and its object
_LIMITERS = {"only", "just"}
# what a card or a chart is called by its kind, not its title ("the image cards", "the eval
# loss chart"): the label says the rest
_CONTAINERS = {"card", "cards", "tile", "tiles", "chart", "charts", "plot", "plots"}
# a relative clause describes the object ("the text that the runs logged"): the label names
# what comes before it
_RELATIVES = {"that", "which", "who", "whose", "where"}
# what "close this panel" or "delete the selection" points at is the control, not a label
_DEICTIC = {
    "selection", "selected", "panel", "page", "window", "dialog", "item", "items", "view",
    "one", "it", "this", "list", "results", "text", "current", "here", "them", "everything",
}  # fmt: skip
# where a label leads, which the label itself seldom says ("go to the scalars dashboard" for a
# tab reading "Scalars")
_PLACES = {"dashboard", "page", "section", "pane", "panel", "view", "window", "dialog"}
_CLICKS = ("click on", "click to", "click", "double click", "double-click", "right click",
           "tap on", "tap to", "tap", "press", "hit", "select", "choose", "pick", "use")  # fmt: skip
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
    subject: str = ""  # the phrase without its action words, when it had some
    action_text: str = ""  # the instruction without clicking words, kind or role words
    verb: str = ""  # the action alone, its object gone ("reload the runs" -> "reload")
    # the action with its object gone but what follows it kept ("expand the chart to full
    # screen" -> "expand to full screen"); empty when that is the bare verb
    verb_phrase: str = ""
    # the title of the card or row the action is done in ("pin the eval loss chart to the top"
    # -> "eval loss"): the target is a control inside it, not its title
    card: str = ""
    # a closing name the action concerns, not a label to click ("get help with TensorBoard" ->
    # "TensorBoard")
    concerns: str = ""


def _subject(action: str) -> str:
    """What a label would say for an instruction worded as an action ("create a new text
    file" -> "text file"): the leading action words gone; empty when there were none, or when
    nothing of substance is left ("sign in") or only words that point at the current thing
    ("close this panel")."""
    words = [w.strip(",;:") for w in action.split()]
    cut = next((i for i, w in enumerate(words) if i > 1 and w.lower() in _RELATIVES), None)
    described = cut is not None  # "the text that the runs logged" is not "this text"
    words = words[:cut]
    ends = (_ICON_WORDS | _ROLE_WORDS | _PLACES | _CONTAINERS) - {"text"}
    while words and words[-1].lower() in ends:
        words = words[:-1]
    k = 0
    while k < len(words) and words[k].lower() in _ACTIONS | _ARTICLES:
        k += 1
    # the particles of a phrasal action ("go to the scalars", "switch over to ...")
    while 0 < k < len(words) and words[k].lower() in _PARTICLES | _ARTICLES | _LIMITERS:
        k += 1
    rest = [w for w in words[k:] if w.lower() not in _ARTICLES]
    pointing = _PARTICLES if described else _PARTICLES | _DEICTIC
    if k == 0 or not any(len(w) >= 3 and w.lower() not in pointing for w in rest):
        return ""
    return " ".join(rest)


# what holds a title and its own controls: "the eval loss chart", "Alice's row"
_CARDS = {"card", "chart", "plot", "tile", "row", "widget"}
_DEFINITE = {"the", "this", "that", "my"}
# words that pick a card by its place or age, not by its title
_ORDER = {"new", "next", "previous", "first", "last", "other", "same", "current", "selected"}


def _card(action: str) -> str:
    """The title of the card (or row) an action is done in, when the action's object is one
    ("pin the eval loss chart to the top", "open the eval loss chart's menu", "delete the
    Alice row" -> "eval loss", "eval loss", "Alice"): the words between the last article and
    the card's kind; empty when the object is no card or names none ("zoom in on the chart")."""
    words = [w.strip(",;:") for w in action.split()]
    for i, w in enumerate(words):
        base = re.sub(r"['’]s$", "", w.lower())
        if base not in _CARDS or i < 2:
            continue
        # a definite one ("the eval loss chart"): "add a new row" names no row on the screen
        j = max((k for k in range(i) if words[k].lower() in _DEFINITE), default=None)
        if j is None:
            return ""
        title = words[j + 1 : i]
        if title and all(t.lower() not in _ORDER for t in title):
            return " ".join(title)
        return ""
    return ""


def _verb(action: str) -> str:
    """The action of an instruction without its object, what an icon draws ("reload the runs"
    -> "reload", "zoom in on the graph" -> "zoom in", "turn the tooltips off" -> "turn off"):
    the first word with a particle right after it and a particle that ends the sentence;
    empty when the first word is not followed by an article or a particle (then it is not
    surely a verb: "max pooling node"), or when the instruction is that word alone."""
    words = [w.strip(",;:").lower() for w in action.split()]
    if len(words) < 2 or not words[0].isalpha() or words[0] in _PARTICLES | _ARTICLES:
        return ""
    k = 2 if words[1] in _PARTICLES else 1
    if k == 1 and words[1] not in _ARTICLES:
        return ""
    verb = words[:k]
    if len(words) > k + 1 and words[-1] in _PARTICLES and words[-1] not in verb:
        verb.append(words[-1])
    return " ".join(verb)


# what ends an object and starts what the action does with it ("expand the chart to full screen")
_PREPOSITIONS = {"to", "into", "as", "by", "with", "from", "onto", "in", "on", "off", "for"}


def _verb_phrase(action: str, verb: str) -> str:
    """``action`` with the object after ``verb`` left out, up to a preposition ("expand the eval
    loss chart to full screen" -> "expand to full screen", "download the plot as an image" ->
    "download as an image"); empty when nothing follows the object."""
    if not verb:
        return ""
    words = [w.strip(",;:").lower() for w in action.split()]
    k = len(verb.split())
    if k >= len(words) or words[k] not in _ARTICLES or words[k - 1] != verb.split()[-1]:
        # no object right after the verb, or the verb took the closing particle ("turn off")
        return ""
    j = k + 1
    while j < len(words) and words[j] not in _PREPOSITIONS:
        j += 1
    if j >= len(words) - 1:
        return ""
    return " ".join(words[:k] + words[j:])


def _action_text(text: str, *, roles: bool = False) -> str:
    """The instruction as a user would say what they want: clicking words, kind and (unless
    ``roles``) role words gone ("click the delete button" -> "delete")."""
    words = text.strip().rstrip(".!?").split()
    lowered = " ".join(words).lower()
    for verb in sorted(_CLICKS, key=len, reverse=True):
        if lowered.startswith(verb + " "):
            words = words[len(verb.split()) :]
            break
    drop = _ICON_WORDS if roles else _ICON_WORDS | _ROLE_WORDS
    kept = [w for w in words if w.lower().strip(",;:") not in drop]
    while kept and kept[0].lower() in _ARTICLES:
        kept = kept[1:]
    return " ".join(kept)


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
    phrase = phrase or text
    if kind == "text":  # a quoted label is what to read
        return Query(text, phrase, kind)
    action = _action_text(text)
    doing = _action_text(text, roles=True)  # "switch" is a role word too
    verb = _verb(doing)
    return Query(
        text,
        phrase,
        kind,
        subject=_subject(_action_text(text, roles=True)),
        action_text=action if action.lower() != phrase.lower() else "",
        verb=verb,
        verb_phrase=_verb_phrase(doing, verb),
        card=_card(doing) if verb else "",
        concerns=concerned_name(text),
    )


# ", with TensorBoard" at the end: a capitalised name after a preposition of concern
CONCERNS_NAME = re.compile(
    r"\s+(?:with|about|for|from|of)\s+(?:the\s+|a\s+|an\s+)?"
    r"(?P<name>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)\s*$"
)


def concerned_name(instruction: str) -> str:
    """The closing name an instruction's action concerns ("get help with TensorBoard" ->
    "TensorBoard", "learn more about Bokeh" -> "Bokeh"), or ``""``: what the action is about,
    not a label to click."""
    m = CONCERNS_NAME.search(" ".join(instruction.split()))
    return m.group("name") if m else ""
