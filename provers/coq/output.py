"""Read what coqtop prints: errors and warnings with their positions, and the goals.

>>> out = 'Toplevel input, characters 0-11:\\n> reflexivity.\\n> ^^^^^^^^^^^\\nError: Unable to unify "2" with "1".\\n'
>>> parse_output(out).errors[0].text
'Unable to unify "2" with "1".'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "Assumptions",
    "CoqMessage",
    "ParsedOutput",
    "parse_assumptions",
    "parse_output",
    "read_assumptions",
]

_LOC = re.compile(r"^Toplevel input, characters (\d+)-(\d+):\n(?:>.*\n)*", re.M)
_KIND = re.compile(r"^(Error|Warning):\s*", re.M)
_MAIN_GOAL = re.compile(r"^(\d+) goals?(?: \(ID \d+\))?\s*$", re.M)
_OTHER_GOAL = re.compile(r"^goal (\d+) \(ID \d+\) is:\s*$", re.M)
_TAGS = re.compile(r"</?(infomsg|warning|prompt)>")


@dataclass(frozen=True)
class CoqMessage:
    severity: str  # "error" | "warning" | "info"
    text: str
    start: int | None = None  # character offsets within the sentence
    end: int | None = None


@dataclass
class ParsedOutput:
    errors: list[CoqMessage] = field(default_factory=list)
    warnings: list[CoqMessage] = field(default_factory=list)
    info: list[str] = field(default_factory=list)
    goals: list[str] | None = None  # None when the output shows no goals at all
    text: str = ""


def _squash(text: str) -> str:
    return " ".join(text.split())


def parse_output(output: str) -> ParsedOutput:
    """Split one answer of coqtop into messages and goals."""
    parsed = ParsedOutput(text=output)
    for info in re.findall(r"<infomsg>(.*?)</infomsg>", output, re.S):
        parsed.info.append(_squash(info))
    body = re.sub(r"<infomsg>.*?</infomsg>", "", output, flags=re.S)
    body = _TAGS.sub("", body)

    # Messages: an optional location block, then "Error:"/"Warning:" and the text up to the
    # next location block or the end.
    pos = 0
    pending_loc: tuple[int, int] | None = None
    rest_for_goals = []
    while True:
        loc = _LOC.search(body, pos)
        kind = _KIND.search(body, pos)
        if kind is None:
            rest_for_goals.append(body[pos:])
            break
        if loc is not None and loc.start() < kind.start():
            rest_for_goals.append(body[pos : loc.start()])
            pending_loc = (int(loc.group(1)), int(loc.group(2)))
            pos = loc.end()
            continue
        rest_for_goals.append(body[pos : kind.start()])
        nxt = _LOC.search(body, kind.end())
        end = nxt.start() if nxt else len(body)
        text = body[kind.end() : end]
        severity = "error" if kind.group(1) == "Error" else "warning"
        start, stop = pending_loc if pending_loc else (None, None)
        msg = CoqMessage(severity, _squash(text), start, stop)
        (parsed.errors if severity == "error" else parsed.warnings).append(msg)
        pending_loc = None
        pos = end
    parsed.goals = _parse_goals("".join(rest_for_goals))
    return parsed


def _parse_goals(text: str) -> list[str] | None:
    if "No more goals" in text:
        return []
    main = _MAIN_GOAL.search(text)
    others = list(_OTHER_GOAL.finditer(text))
    if main is None and not others:
        return None
    goals: list[str] = []
    if main is not None:
        stop = others[0].start() if others and others[0].start() > main.end() else len(text)
        block = text[main.end() : stop]
        if "====" in block:
            goals.append(_format_main(block))
    for i, m in enumerate(others):
        stop = others[i + 1].start() if i + 1 < len(others) else len(text)
        concl = text[m.end() : stop]
        concl = re.split(r"\n\s*\n", concl.strip("\n"), maxsplit=1)[0]
        goals.append("⊢ " + _squash(concl))
    return goals


def _format_main(block: str) -> str:
    hyps, _, concl = block.partition("============================")
    lines = [_squash(h) for h in hyps.strip("\n").splitlines() if h.strip()]
    # A hypothesis whose type runs over several lines continues with deeper indentation.
    merged: list[str] = []
    for raw in hyps.strip("\n").splitlines():
        if not raw.strip():
            continue
        if merged and raw.startswith("    ") and " : " not in raw:
            merged[-1] += " " + raw.strip()
        else:
            merged.append(raw.strip())
    lines = merged or lines
    return "\n".join([*lines, "⊢ " + _squash(concl)])


# What ``Print Assumptions`` says of a checker that was switched off, by the kind of failure.
_UNSAFE_LINES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(\S+) is assumed to be guarded\.$"), "assumed_guarded"),
    (re.compile(r"^(\S+) is assumed to be positive\.$"), "assumed_positive"),
    (re.compile(r"^(\S+) relies on an unsafe hierarchy\.$"), "unsafe_universes"),
    (re.compile(r"^Type hierarchy is collapsed"), "unsafe_universes"),
)
_SECTIONS = frozenset({"Axioms:", "Section Variables:", "Theory:"})


@dataclass(frozen=True)
class Assumptions:
    """The answer to ``Print Assumptions NAME``, read strictly.

    ``axioms``: the names of axioms and section variables; ``unsafe``: ``(subject, kind)``
    for every line that says a checker was off (``kind`` is ``assumed_guarded``,
    ``assumed_positive`` or ``unsafe_universes``); ``unknown``: the lines this reader does not
    know (definitional UIP, impredicative Set, a future Coq's new line, an answer that is no
    answer at all). A caller fails the check unless ``unsafe`` and ``unknown`` are empty: what
    cannot be read is not trusted.
    """

    axioms: tuple[str, ...] = ()
    unsafe: tuple[tuple[str, str], ...] = ()
    unknown: tuple[str, ...] = ()


def read_assumptions(output: str) -> Assumptions:
    """Read coqtop's answer to ``Print Assumptions``; see :class:`Assumptions`.

    >>> read_assumptions("Axioms:\\nspin is assumed to be guarded.\\n").unsafe
    (('spin', 'assumed_guarded'),)
    >>> read_assumptions("Axioms:\\nax\\n  : forall n : nat,\\n    n = n\\n").axioms
    ('ax',)
    """
    # Notes such as "Fetching opaque proofs from disk for ..." come as info messages.
    text = _TAGS.sub("", re.sub(r"<infomsg>.*?</infomsg>", "", output, flags=re.S))
    if re.search(r"^Error:", text, re.M):
        return Assumptions(unknown=(" ".join(text.split())[:200],))
    if text.strip() == "Closed under the global context":
        return Assumptions()
    axioms: list[str] = []
    unsafe: list[tuple[str, str]] = []
    unknown: list[str] = []
    section: str | None = None
    for line in text.splitlines():
        if not line.strip() or line[0].isspace():
            continue  # blank, or the rest of a type printed over several lines
        if line.strip() in _SECTIONS:
            section = line.strip()
            continue
        found = next(((m, k) for p, k in _UNSAFE_LINES if (m := p.match(line.strip()))), None)
        if found is not None:
            m, kind = found
            unsafe.append((m.group(1) if m.groups() else "", kind))
        elif section in ("Axioms:", "Section Variables:") and (
            m := re.match(r"^([^\s:]+)(?:\s*:.*)?$", line)
        ):
            axioms.append(m.group(1))
        else:
            unknown.append(line.strip())
    if section is None and not unsafe:
        unknown.append(" ".join(text.split())[:200] or "no answer")
    return Assumptions(tuple(axioms), tuple(unsafe), tuple(unknown))


def parse_assumptions(output: str) -> list[str]:
    """The axiom names in the answer to ``Print Assumptions``; ``[]`` when closed."""
    return list(read_assumptions(output).axioms)
