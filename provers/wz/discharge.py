"""WZ-LLM: the obligations a sketch leaves open go to a model, one small goal at a time.

:func:`discharge` checks the sketch with a Lean verifier, reads which lemmas still use
``sorry`` or fail (:func:`~lemmata.provers.wz.lean_sketch.obligation_report`), and for each
asks the model (any :class:`~lemmata.llm.ChatModel`) for a tactic proof of that lemma alone,
with the definitions and Lean's messages. A proof is kept only if Lean then accepts the lemma;
it is tried at most ``attempts_per_obligation`` times, and the whole run stops after ``budget``
model calls. The model's replies are parsed as ``{"proof": ...}`` (one retry on a malformed
reply); a proof that gives up (``sorry``) or declares things is refused before Lean sees it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, Field

from lemmata.errors import ModelError
from lemmata.provers.lean.repl import screen_lean_proof
from lemmata.provers.wz.lean_sketch import obligation_report

__all__ = ["DischargeReport", "ProofReply", "discharge"]


class ProofReply(BaseModel):
    """What the model must answer: the tactic block of one lemma."""

    proof: str = Field(min_length=1, description="the tactics after `:= by`")


@dataclass
class DischargeReport:
    before: dict[str, str]
    after: dict[str, str]
    calls: int = 0
    attempts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def closed_by_model(self) -> list[str]:
        return [
            n for n, s in self.after.items() if s == "closed" and self.before.get(n) != "closed"
        ]


def _prompt() -> dict[str, Any]:
    return tomllib.loads(
        files("lemmata.provers.wz").joinpath("prompts/discharge.toml").read_text(encoding="utf-8")
    )


def _declarations(text: str) -> list[tuple[str, int, int]]:
    """(name, first line index, end line index exclusive) of each lemma/theorem."""
    lines = text.splitlines()
    starts = [
        (i, m.group(1))
        for i, line in enumerate(lines)
        if (m := re.match(r"^(?:lemma|theorem)\s+(\w+)", line))
    ]
    out = []
    for j, (i, name) in enumerate(starts):
        end = starts[j + 1][0] if j + 1 < len(starts) else len(lines)
        while end > i and (
            not lines[end - 1].strip() or lines[end - 1].startswith(("/--", "end "))
        ):
            end -= 1
        out.append((name, i, end))
    return out


def _replace_proof(text: str, name: str, proof: str) -> str:
    lines = text.splitlines()
    for decl, start, end in _declarations(text):
        if decl != name:
            continue
        head_end = next(i for i in range(start, end) if lines[i].rstrip().endswith(":= by"))
        body = ["  " + line if line.strip() else line for line in proof.strip("\n").splitlines()]
        return "\n".join([*lines[: head_end + 1], *body, *lines[end:]]) + "\n"
    raise KeyError(name)


def _check(verifier: Any, text: str) -> tuple[dict[str, str], list[Any]]:
    reply = verifier.command(text)
    messages = list(getattr(reply, "messages", ()))
    if not hasattr(reply, "messages"):
        messages = [
            type(
                "M",
                (),
                {"severity": "error", "text": getattr(reply, "message", str(reply)), "line": 1},
            )()
        ]
    return obligation_report(text, messages), messages


def discharge(
    sketch: str, verifier: Any, model: Any, *, budget: int = 20, attempts_per_obligation: int = 3
) -> tuple[str, DischargeReport]:
    """Close what the model can; return the new sketch and a report (see the module docstring).

    ``verifier`` needs ``command(text)`` returning the REPL's reply (a
    :class:`~lemmata.provers.lean.LeanRepl` does); ``model`` is a ``ChatModel``.
    """
    prompt = _prompt()
    report_now, messages = _check(verifier, sketch)
    report = DischargeReport(before=dict(report_now), after=dict(report_now))
    text = sketch
    definitions = "\n".join(
        line for line in sketch.splitlines() if not line.startswith(("lemma", "theorem"))
    )
    for name, status in report_now.items():
        if status == "closed":
            continue
        for _attempt in range(attempts_per_obligation):
            if report.calls >= budget:
                report.notes.append(f"budget of {budget} model calls spent")
                report.after = report_now
                return text, report
            decl = next(d for d in _declarations(text) if d[0] == name)
            lemma = "\n".join(text.splitlines()[decl[1] : decl[2]])
            said = (
                "\n".join(
                    f"- line {getattr(m, 'line', '?')}: {getattr(m, 'text', '')}"
                    for m in messages
                    if decl[1] + 1 <= (getattr(m, "line", 0) or 0) <= decl[2]
                )
                or "- (no message)"
            )
            user = prompt["user"].format(
                definitions=definitions.strip()[:6000], lemma=lemma, messages=said
            )
            report.calls += 1
            report.attempts[name] = report.attempts.get(name, 0) + 1
            try:
                reply = model.structured(
                    [
                        {"role": "system", "content": prompt["system"].strip()},
                        {"role": "user", "content": user},
                    ],
                    ProofReply,
                )
            except ModelError as exc:
                report.notes.append(f"{name}: the model's reply was unusable ({exc.code})")
                continue
            refused = screen_lean_proof(reply.proof)
            if refused is not None:
                report.notes.append(f"{name}: refused the model's proof: {refused.message}")
                continue
            candidate = _replace_proof(text, name, reply.proof)
            new_report, new_messages = _check(verifier, candidate)
            if new_report.get(name) == "closed":
                text, report_now, messages = candidate, new_report, new_messages
                break
            messages = new_messages
    report.after = report_now
    return text, report
