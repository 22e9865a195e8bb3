"""Self-reflection: the reasoning that prefers the expert's action, written from the
alternatives' observed outcomes, and the checker that keeps leaks out of it.

A reflection becomes a training target: the trained agent will stand where the monologue
stands, with the task, its history and the current observation, and nothing else (no label
saying which action is the good one, no menu of alternatives, no outcome of any action). So a
reflection must reason anticipatorily and must not leak any of those.

- :func:`write_reflections` asks a model once per :class:`ExpertStep` (prompt:
  ``prompts/reflection.toml``), with bounded concurrency, and keeps only replies that parse,
  conclude on the expert's action, are not doubled and pass the checker; every other one comes
  back with its ``reason`` (``model-error: ...``, ``unparseable: ...``, ``mismatch: ...``,
  ``doubled: ...``, ``leak: ...``). With no model it writes template reflections
  (:func:`template_reflection`), marked ``source="template"``: the offline path, never passed
  off as a model's.
- :func:`check_text` and :func:`check_reflections` flag, in any text or reflection file (ours
  or a user's; chat ``messages`` or ``prompt``/``completion`` lines), the kinds:

  ============ ==========================================================================
  ``label``    an action named by a label or a given menu ("Action 1", "option B",
               "alternative (b)", "a_i^1", "the alternatives listed")
  ``expert``   "expert", "demonstration", or a privileged name for the action ("the
               correct action", "the chosen action")
  ``outcome``  an outcome narrated as already seen ("this resulted in", "after taking X,
               the observation showed", "we saw that", "the resulting state shows")
  ``mismatch`` the concluded action differs from the record's (or is not admissible)
  ``doubled``  the text, or a paragraph of it, written twice
  ``format``   a line that is not JSON or holds no reflection
  ============ ==========================================================================

  The patterns are narrow on purpose: anticipatory phrasing ("this should lead to", "I expect
  the observation will show"), the current observation ("the observation shows I am in the
  kitchen") and natural wording ("my best move", "another option is") are not flagged. A
  regular expression is a pre-filter, not a judgement of quality: read a sample as well.

>>> [f.kind for f in check_text("Action 2 resulted in a locked door, as the expert did.")]
['label', 'expert', 'outcome']
>>> check_text("Opening the door should let me reach the hall; I expect it to be unlocked.")
[]
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lemmata.agents.experience._format import parse_reply, prompt, render_state
from lemmata.agents.experience.records import Branch, ExpertStep, Outcome
from lemmata.agents.experience.rollouts import canonical_action
from lemmata.errors import DataSourceError, LemmataError, UsageError
from lemmata.llm.base import ChatModel
from lemmata.llm.types import Message

__all__ = [
    "FINDING_KINDS",
    "Finding",
    "Reflection",
    "check_reflections",
    "check_text",
    "reflection_messages",
    "template_reflection",
    "write_reflections",
]

log = logging.getLogger("lemmata.experience")

FINDING_KINDS = ("label", "expert", "outcome", "mismatch", "doubled", "format")
TEMPLATE_VERSION = 1

_I = re.IGNORECASE
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # An action named by its label in the generator's input: "Action 1", "option B",
    # "alternative (b)", "choice #2". A bare lower-case letter counts only before punctuation,
    # so that "an option a bit better" is not flagged.
    (
        "label",
        re.compile(
            r"\b(?i:action|option|alternative|choice|candidate)s?\s*(?:#\s*)?"
            r"(?:\d+\b|\([a-zA-Z0-9]\)|[A-H]\b(?!['’])|[a-h](?=\s*[,.;:)]))"
        ),
    ),
    ("label", re.compile(r"\b[as]_\{?i\}?(?:\^\{?\w+\}?|\{?\+1\}?)")),
    (
        "label",
        re.compile(
            r"\b(?:alternatives|options|candidates)\s+(?:listed|provided|given|above|below)\b"
            r"|\b(?:listed|provided|given)\s+(?:alternatives|options|candidates)\b",
            _I,
        ),
    ),
    ("expert", re.compile(r"\bexperts?(?:['’]s)?\b", _I)),
    (
        "expert",
        re.compile(
            r"\bdemonstrat(?:ion|ions|or|ors)\b"
            r"|\bdemonstrated\s+(?:action|step|move|choice|trajectory|path|solution)s?\b"
            r"|\bthe\s+demonstrated\b",
            _I,
        ),
    ),
    (
        "expert",
        re.compile(
            r"\bthe\s+(?:correct|chosen|selected|optimal|gold|ground[- ]truth|reference|"
            r"target|right)\s+(?:action|option|choice|answer|move|step)\b",
            _I,
        ),
    ),
    # Outcomes narrated as seen. Every pattern needs a past or indicative report, so that
    # "this should result in" and "I expect the observation to show" stay clean, and "the
    # observation shows" (the current one) is not matched.
    (
        "outcome",
        re.compile(
            r"\bthe\s+(?:resulting|resultant|next|new)\s+(?:state|observation|screen)\s+"
            r"(?:shows?|showed|says|said|reads?|revealed|reveals|was|is|indicates?|indicated|"
            r"confirms?|confirmed|displays?|displayed|contains?|contained|mentions?|mentioned|"
            r"tells?|told|lists?|listed)\b",
            _I,
        ),
    ),
    (
        "outcome",
        re.compile(
            r"\bthe\s+(?:observation|outcome|result|feedback|environment|game|response|output)"
            r"\s+(?:then\s+)?(?:showed|revealed|said|confirmed|indicated|returned|displayed|"
            r"reported|told\s+me|came\s+back)\b",
            _I,
        ),
    ),
    (
        "outcome",
        re.compile(
            r"\bresulted\s+in\b|\b(?:this|that|which|it|doing\s+so)\s+results\s+in\b"
            r"|\bthe\s+(?:outcome|result)\s+(?:of|from)\s+[^.;!?]{0,60}?\b(?:was|were|showed)\b",
            _I,
        ),
    ),
    (
        "outcome",
        re.compile(
            r"\bafter\s+(?:taking|doing|trying|executing|performing|choosing|picking|going|"
            r"moving|opening|using|typing|entering|selecting)\b[^.;!?]{0,80}?\b(?:showed|"
            r"revealed|returned|said|turned\s+out|led\s+to|ended\s+up|gave\s+me|told\s+me|"
            r"displayed|appeared|became)\b",
            _I,
        ),
    ),
    (
        "outcome",
        re.compile(
            r"\bwe\s+(?:saw|observed|learned|noticed|found|got)\b"
            r"|\bwhen\s+(?:I|we)\s+(?:tried|took|did|chose|executed|attempted|picked|went|"
            r"moved|opened|used)\b"
            r"|\b(?:it|this|that)\s+turned\s+out\b|\bI\s+ended\s+up\b",
            _I,
        ),
    ),
    (
        "outcome",
        re.compile(
            r"\b(?:trying|taking|doing|choosing|picking|executing)\s+[^.;!?]{0,60}?\b(?:gave|"
            r"showed|produced|returned|revealed|yielded)\b",
            _I,
        ),
    ),
]

_PARAGRAPHS = re.compile(r"\n\s*\n")
_MIN_PARAGRAPH = 40
_HEAD = 100


@dataclass(frozen=True)
class Finding:
    """One problem in a reflection: ``line`` of the file (1-based; ``None`` for a plain
    string), its ``kind`` (see :data:`FINDING_KINDS`), the offending ``span`` and a
    ``message`` that says what is wrong."""

    line: int | None
    kind: str
    span: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.kind}: {self.span!r} ({self.message})"

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "span": self.span, "message": self.message}


_MESSAGES = {
    "label": "names an action by a label or a given menu the agent will not have",
    "expert": "gives the action a privileged label the agent will not have",
    "outcome": "narrates an outcome as seen before the action is taken",
}


def _doubled(text: str) -> str | None:
    """The repeated part when ``text`` (or one of its paragraphs) is written twice."""
    flat = " ".join(text.split())
    if len(flat) >= 2 * _HEAD:
        head = flat[:_HEAD]
        again = flat.find(head, len(flat) // 3)
        if again > 0:
            return head
    seen: set[str] = set()
    for para in _PARAGRAPHS.split(text):
        key = " ".join(para.split())
        if len(key) < _MIN_PARAGRAPH:
            continue
        if key in seen:
            return key[:_HEAD]
        seen.add(key)
    return None


def check_text(
    text: str,
    *,
    action: str | None = None,
    expected: str | None = None,
    admissible: Sequence[str] | None = None,
    line: int | None = None,
) -> list[Finding]:
    """The findings in one reflection ``text`` (the monologue, without its action).

    ``action`` is the action the reflection concludes on; with ``expected`` (the record's
    action) or ``admissible`` it is also checked against them (kind ``mismatch``).
    Findings come in the order of :data:`FINDING_KINDS`, then of their place in the text.
    """
    spans: list[tuple[int, int, int, str]] = []
    for kind, pattern in _PATTERNS:
        spans += [
            (FINDING_KINDS.index(kind), m.start(), -m.end(), kind) for m in pattern.finditer(text)
        ]
    found: list[Finding] = []
    last_end: dict[str, int] = {}
    for _, start, neg_end, kind in sorted(spans):
        if start < last_end.get(kind, -1):
            continue  # inside a longer span of the same kind, already reported
        last_end[kind] = -neg_end
        found.append(Finding(line, kind, text[start:-neg_end], _MESSAGES[kind]))
    if action is not None and expected is not None:
        if canonical_action(action) != canonical_action(expected):
            found.append(
                Finding(line, "mismatch", action, f"concludes on {action!r}, not {expected!r}")
            )
    elif (
        action is not None
        and admissible is not None
        and canonical_action(action) not in {canonical_action(a) for a in admissible}
    ):
        found.append(
            Finding(line, "mismatch", action, "concludes on an action that is not admissible")
        )
    repeated = _doubled(text)
    if repeated is not None:
        found.append(Finding(line, "doubled", repeated, "the text is written twice"))
    return found


# -- files ---------------------------------------------------------------------------------


def _content(value: Any) -> str:
    """The text of a message's content (a string, or a list of ``{"type": "text"}`` parts)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p.get("text", "") for p in value if isinstance(p, dict))
    return ""


def _split_line(data: Any) -> tuple[str | None, str] | str:
    """``(user prompt or None, assistant completion)`` of a training line, or why not."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if "messages" in data:
        messages = data["messages"]
    elif "completion" in data:
        prompt_part, completion = data.get("prompt"), data["completion"]
        if isinstance(completion, str):
            completion = [{"role": "assistant", "content": completion}]
        if isinstance(prompt_part, str):
            prompt_part = [{"role": "user", "content": prompt_part}]
        if not isinstance(prompt_part, list) or not isinstance(completion, list):
            return "'prompt' and 'completion' must be text or lists of messages"
        messages = [*prompt_part, *completion]
    else:
        return "has neither 'messages' nor 'prompt'/'completion'"
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a list of {role, content} objects"
    replies = [m for m in messages if m.get("role") == "assistant"]
    if not replies:
        return "holds no assistant message"
    users = [m for m in messages if m.get("role") == "user"]
    user = _content(users[-1].get("content")) if users else None
    return user, _content(replies[-1].get("content"))


def _admissible_in(user: str) -> list[str] | None:
    head = "\n\nAdmissible actions:\n"
    if head not in user:
        return None
    block = user.rsplit(head, 1)[1]
    return [ln[2:].strip() for ln in block.splitlines() if ln.startswith("- ")]


def _expected_actions(rollouts: Iterable[ExpertStep] | str | Path | None) -> dict[str, str]:
    if rollouts is None:
        return {}
    if isinstance(rollouts, str | Path):
        from lemmata.agents.experience.data import read_rollouts

        rollouts = read_rollouts(rollouts)
    return {
        render_state(s.instruction, s.observation, s.history, s.admissible): s.action
        for s in rollouts
    }


def check_reflections(
    path: str | Path, *, rollouts: Iterable[ExpertStep] | str | Path | None = None
) -> list[Finding]:
    """The findings in a reflection file, each naming its line.

    Any JSONL file of chat ``messages`` or TRL ``prompt``/``completion`` lines is read; the
    reflection is the last assistant message, without its closing ``Action:`` part. The
    concluded action is checked against the records in ``rollouts`` (``ExpertStep`` objects or
    a ``rollouts.jsonl``) whose state is the line's prompt, else against the admissible actions
    listed in the prompt. An unreadable file raises :class:`DataSourceError`.
    """
    path = Path(path)
    expected = _expected_actions(rollouts)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataSourceError(f"cannot read the reflection file {path}: {exc}") from None
    findings: list[Finding] = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            parts = _split_line(json.loads(raw))
        except ValueError as exc:
            parts = f"not JSON ({exc})"
        if isinstance(parts, str):
            findings.append(Finding(n, "format", raw[:80], parts))
            continue
        user, completion = parts
        reply = parse_reply(completion)
        if not reply.thought:
            findings.append(Finding(n, "format", completion[:80], "the reply holds no reflection"))
            continue
        findings += check_text(
            reply.thought,
            action=reply.action,
            expected=expected.get(user) if user is not None else None,
            admissible=_admissible_in(user) if user is not None else None,
            line=n,
        )
    return findings


# -- writing reflections -------------------------------------------------------------------


@dataclass(frozen=True)
class Reflection:
    """The reflection written for ``steps[step]``: ``text`` (the monologue) when kept, or the
    ``reason`` it was dropped. ``source`` says who wrote it (``"model"`` or ``"template"``),
    ``writer`` names the model or template version, ``raw`` keeps the model's reply."""

    step: int
    text: str | None
    action: str
    source: Literal["model", "template"]
    writer: str
    reason: str | None = None
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None and self.text is not None


def _situation(step: ExpertStep) -> str:
    return render_state(step.instruction, step.observation, step.history, step.admissible)


def _outcome_text(outcome: Outcome) -> str:
    flags = [
        name
        for name, on in (
            ("invalid action", outcome.invalid),
            ("task completed", outcome.success),
            ("task failed", outcome.failure),
        )
        if on
    ]
    extra = f" [{', '.join(flags)}; score {outcome.score:g}]" if flags else ""
    return " ".join(outcome.observation.split()) + extra


def reflection_messages(step: ExpertStep) -> list[Message]:
    """The reflection prompt for ``step`` (``prompts/reflection.toml``) as chat messages."""
    p = prompt("reflection")
    others = "\n".join(f"- {b.action}" for b in step.alternatives) or "- (none tried)"
    outcomes = "\n".join(
        [f'- doing "{step.action}" leads to: {_outcome_text(step.expert)}']
        + [
            f'- doing "{b.action}" would lead to: {_outcome_text(b.outcome)}'
            for b in step.alternatives
        ]
    )
    user = p["user"].format(
        situation=_situation(step), action=step.action, others=others, outcomes=outcomes
    )
    return [
        {"role": "system", "content": p["system"].strip()},
        {"role": "user", "content": user.strip()},
    ]


def _judge(step: ExpertStep, index: int, text: str, source: Any, writer: str) -> Reflection:
    """Parse and filter one written reflection: the method's filters, then the checker."""
    reply = parse_reply(text)
    keep = {"step": index, "action": step.action, "source": source, "writer": writer, "raw": text}
    if reply.action is None or not reply.thought:
        return Reflection(text=None, reason="unparseable: no final 'Action:' line", **keep)
    findings = check_text(reply.thought, action=reply.action, expected=step.action)
    for kind in ("mismatch", "doubled"):
        hit = next((f for f in findings if f.kind == kind), None)
        if hit is not None:
            return Reflection(text=None, reason=f"{kind}: {hit.message}", **keep)
    if findings:
        f = findings[0]
        return Reflection(text=None, reason=f"leak: {f.kind} {f.span!r}", **keep)
    return Reflection(text=reply.thought, **keep)


def _verdict(branch: Branch, step: ExpertStep) -> str:
    """What the agent may expect of an alternative, from its observed outcome, said as
    expectation and without revealing what the outcome showed."""
    o = branch.outcome
    if o.invalid:
        return "I doubt that is possible from here, so it would most likely just be refused"
    if o.failure:
        return "that risks ending the task without completing it"
    if o.success:
        return "the other step looks like the surer way to finish"
    if canonical_action(o.observation) == canonical_action(step.observation):
        return "that would probably leave things as they are"
    if o.score < step.expert.score:
        return "it does not look like it would bring me closer to the goal"
    return "it does not look like what the task needs at this point"


_OPENINGS = (
    "I could {a}, but {v}.",
    "Another option is to {a}; {v}.",
    "I might also {a}, though {v}.",
)


def template_reflection(step: ExpertStep, index: int = 0) -> Reflection:
    """A reflection built from the alternatives' observed outcomes with no model, phrased as
    expectation (the offline path). It is marked ``source="template"`` and goes through the
    same filters as a model's."""
    obs = " ".join(step.observation.split())
    if len(obs) > 200:
        obs = obs[:197].rstrip() + "..."
    parts = [f"My task: {' '.join(step.instruction.split())}", f'What I see now: "{obs}"']
    for i, branch in enumerate(step.alternatives[:4]):
        parts.append(
            _OPENINGS[i % len(_OPENINGS)].format(a=branch.action, v=_verdict(branch, step))
        )
    best_alt = max((b.outcome.score for b in step.alternatives), default=step.expert.score)
    if step.expert.success:
        why = "it should complete the task"
    elif step.expert.score > best_alt:
        why = "it should bring me closer to the goal"
    else:
        why = "it looks like the step that moves the task forward"
    parts.append(f"So I will {step.action}: {why}.")
    text = " ".join(parts) + f"\n\nAction: {step.action}"
    return _judge(step, index, text, "template", f"template:v{TEMPLATE_VERSION}")


def _with_frequency_penalty(model: ChatModel, value: float | None) -> ChatModel:
    """``model`` asking for ``frequency_penalty=value`` where its provider supports it."""
    from lemmata.llm.litellm_model import LiteLLMModel, import_litellm

    if value is None or not isinstance(model, LiteLLMModel):
        return model
    try:
        supported = import_litellm().get_supported_openai_params(model=model.name) or []
    except Exception:  # a provider litellm cannot describe: send nothing it may reject
        supported = []
    if "frequency_penalty" not in supported:
        return model
    tuned = copy.copy(model)  # shares the usage log and the litellm module
    tuned.extra_params = {**model.extra_params, "frequency_penalty": value}
    return tuned


def write_reflections(
    steps: Sequence[ExpertStep],
    model: ChatModel | None,
    *,
    concurrency: int = 4,
    temperature: float | None = 0.7,
    frequency_penalty: float | None = 0.3,
    progress: Callable[[int, int], None] | None = None,
) -> list[Reflection]:
    """One :class:`Reflection` per step, in order: written by ``model`` (one call each, at most
    ``concurrency`` at once), or from templates when ``model`` is ``None``.

    A failed call or a reply that does not pass the filters is returned with its ``reason``;
    nothing here raises for one bad reply. ``progress(done, total)`` is called after each step.
    """
    if concurrency < 1:
        raise UsageError(f"concurrency must be 1 or more, not {concurrency}")
    total = len(steps)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    if model is None:
        out = []
        for i, step in enumerate(steps):
            out.append(template_reflection(step, i))
            tick()
        return out

    tuned = _with_frequency_penalty(model, frequency_penalty)
    kind: Literal["model"] = "model"

    def one(i: int) -> Reflection:
        step = steps[i]
        try:
            reply = tuned.chat(reflection_messages(step), temperature=temperature)
        except LemmataError as exc:
            log.warning("reflection for step %d failed: %s", i, exc)
            reason = f"model-error: {exc.code}: {exc}"
            return Reflection(i, None, step.action, kind, model.name, reason=reason)
        return _judge(step, i, reply.content or "", kind, model.name)

    results: list[Reflection | None] = [None] * total
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for i, result in zip(range(total), pool.map(one, range(total)), strict=True):
            results[i] = result
            tick()
    return [r for r in results if r is not None]
