"""The method's three training files, built from :class:`ExpertStep` records.

========================= ==================================================================
file                      one sample
========================= ==================================================================
``expert.jsonl``          the agent's system prompt; the state (task, history, current
                          observation, admissible actions when enumerable) ->
                          ``"Action:\\n<expert action>"``
``iwm.jsonl``             the world model's system prompt; the state and
                          ``"Action:\\n<a>"`` -> ``"Observation:\\n<next observation>"``, for
                          the expert's transition and each alternative's
``reflection.jsonl``      the agent's system prompt; the state ->
                          ``"Thought:\\n<reflection>\\n\\nAction:\\n<expert action>"``
``dropped.jsonl``         every sample the filters removed, with its file and ``reason``
``<name>.meta.jsonl``     one line per sample of ``<name>.jsonl``, in the same order: its
                          task, state index and source (for reflections ``"model"`` or
                          ``"template"`` and the writer), kept apart so that the training
                          files hold only what trainers read
========================= ==================================================================

Each sample is ``{"messages": [system, user, assistant]}`` (TRL's conversational format and
OpenAI fine-tuning's), or with ``fmt="prompt-completion"``
``{"prompt": [system, user], "completion": [assistant]}`` (TRL computes the loss on the
completion only).

The filters, applied here so that trainers load and train:

- IWM: identical transitions (same state, action and next observation) are kept once
  (``duplicate``); invalid-action transitions are kept as signal but capped at
  ``max_invalid_share`` of the file (default 0.25; an IWM set drowned in error messages trains
  worse than imitation), a seeded draw choosing which stay (``invalid-cap``).
- Reflections: written by a model when one is given, else templated
  (:mod:`lemmata.agents.experience.reflect`); doubled text, a concluded action that differs
  from the expert's and leaks (labels, "expert", narrated outcomes) are dropped with the
  reason.

Writing is atomic: every file is written to a temporary file in the folder, and all are
renamed into place only when every one is complete, so a failure leaves the earlier files
whole.

>>> from lemmata.environments.text import Task
>>> from lemmata.agents.experience.records import Branch, ExpertStep, Outcome
>>> import tempfile
>>> step = ExpertStep(
...     task=Task("textworld-express", "coin", 3, "train"), index=0, instruction="Find the coin.",
...     observation="You are in the kitchen. There is a coin.", history=(),
...     admissible=("take coin", "move west"), action="take coin",
...     expert=Outcome("You take the coin.", score=1.0, success=True, done=True),
...     alternatives=(Branch("move west", Outcome("You are in the corridor.")),),
... )
>>> result = export_sft([step], tempfile.mkdtemp())
>>> result.counts
{'expert': 1, 'iwm': 2, 'reflection': 1}
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lemmata.agents.experience._format import prompt, render_state
from lemmata.agents.experience.records import ExpertStep, Outcome
from lemmata.agents.experience.reflect import Reflection, write_reflections
from lemmata.errors import DataSourceError, UsageError
from lemmata.llm.base import ChatModel
from lemmata.llm.types import Message

__all__ = [
    "DEFAULT_MAX_INVALID_SHARE",
    "FILES",
    "ExportResult",
    "Format",
    "RolloutWarning",
    "SFTSample",
    "export_sft",
    "expert_sample",
    "iwm_sample",
    "read_rollouts",
    "reflection_sample",
]

Format = Literal["messages", "prompt-completion"]
FILES = ("expert", "iwm", "reflection")
DEFAULT_MAX_INVALID_SHARE = 0.25


class RolloutWarning(UserWarning):
    """A ``rollouts.jsonl`` line was skipped because it is not a valid record."""


def read_rollouts(path: str | Path, *, strict: bool = False) -> list[ExpertStep]:
    """The records of a ``rollouts.jsonl``, one :class:`ExpertStep` per non-blank line.

    A line that is not JSON or not a valid record is skipped with one :class:`RolloutWarning`
    that names every bad line and why (the run goes on with the good ones); with
    ``strict=True`` it raises :class:`~lemmata.errors.DataSourceError` instead. A missing or
    unreadable file raises :class:`~lemmata.errors.DataSourceError`.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataSourceError(f"cannot read the rollouts file {path}: {exc}") from None
    steps: list[ExpertStep] = []
    bad: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            bad.append(f"line {n}: not JSON ({exc.args[0]})")
            continue
        if not isinstance(data, dict):
            bad.append(f"line {n}: not a JSON object")
            continue
        try:
            step = ExpertStep.from_dict(data)
        except Exception as exc:  # from_dict's UsageError, or a nested record's own error
            bad.append(f"line {n}: {exc}")
            continue
        if not step.action.strip():
            bad.append(f"line {n}: the expert action is empty")
            continue
        steps.append(step)
    if bad:
        listed = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
        message = f"{path}: {len(bad)} bad record line(s): {listed}"
        if strict:
            raise DataSourceError(message + " (fix or remove them)")
        warnings.warn(message + " (skipped)", RolloutWarning, stacklevel=2)
    return steps


# -- samples -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SFTSample:
    """One training sample: a system prompt, the user's text and the assistant's target."""

    system: str
    user: str
    assistant: str

    def to_json(self, fmt: Format = "messages") -> dict[str, Any]:
        system: Message = {"role": "system", "content": self.system}
        user: Message = {"role": "user", "content": self.user}
        reply: Message = {"role": "assistant", "content": self.assistant}
        if fmt == "messages":
            return {"messages": [system, user, reply]}
        if fmt == "prompt-completion":
            return {"prompt": [system, user], "completion": [reply]}
        raise UsageError(f"format is 'messages' or 'prompt-completion', not {fmt!r}")


def _state(step: ExpertStep, *, admissible: bool = True) -> str:
    return render_state(
        step.instruction, step.observation, step.history, step.admissible if admissible else None
    )


def expert_sample(step: ExpertStep) -> SFTSample:
    """The imitation sample: the state -> ``"Action:\\n<expert action>"``."""
    return SFTSample(prompt("sft")["agent"].strip(), _state(step), f"Action:\n{step.action}")


def iwm_sample(step: ExpertStep, action: str, outcome: Outcome) -> SFTSample:
    """The world-model sample: the state and ``action`` -> ``"Observation:\\n<next>"``."""
    return SFTSample(
        prompt("sft")["world_model"].strip(),
        f"{_state(step, admissible=False)}\n\nAction:\n{action}",
        f"Observation:\n{outcome.observation.strip()}",
    )


def reflection_sample(step: ExpertStep, reflection: str) -> SFTSample:
    """The self-reflection sample: the state -> ``"Thought:\\n<c>\\n\\nAction:\\n<a>"``."""
    return SFTSample(
        prompt("sft")["agent"].strip(),
        _state(step),
        f"Thought:\n{reflection.strip()}\n\nAction:\n{step.action}",
    )


# -- the export ----------------------------------------------------------------------------


@dataclass
class ExportResult:
    """What :func:`export_sft` wrote: ``files`` by name, ``counts`` of samples per file,
    ``dropped`` counts per file and reason kind (``{"iwm": {"duplicate": 3}}``), and who wrote
    the reflections (``reflections_by``: ``"model:<name>"`` or ``"template:v1"``)."""

    out_dir: Path
    files: dict[str, Path] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    reflections_by: str = ""
    fmt: Format = "messages"

    def summary(self) -> str:
        parts = [f"{name} {self.counts.get(name, 0)}" for name in FILES]
        lines = [f"wrote {', '.join(parts)} samples to {self.out_dir} ({self.reflections_by})"]
        for name, reasons in self.dropped.items():
            listed = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
            lines.append(f"dropped from {name}: {listed}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out_dir),
            "files": {k: str(v) for k, v in self.files.items()},
            "counts": dict(self.counts),
            "dropped": {k: dict(v) for k, v in self.dropped.items()},
            "reflections_by": self.reflections_by,
            "format": self.fmt,
        }


@dataclass
class _Built:
    samples: dict[str, list[SFTSample]] = field(default_factory=lambda: {n: [] for n in FILES})
    meta: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {n: [] for n in FILES})
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def add(self, name: str, sample: SFTSample, meta: dict[str, Any]) -> None:
        self.samples[name].append(sample)
        self.meta[name].append(meta)

    def drop(self, name: str, reason: str, meta: dict[str, Any], sample: Any) -> None:
        self.dropped.append({"file": name, "reason": reason, **meta, "sample": sample})


def _where(step: ExpertStep) -> dict[str, Any]:
    return {"task": step.task.id, "split": step.task.split, "index": step.index}


def _iwm(steps: Sequence[ExpertStep], built: _Built, cap: float, seed: int, fmt: Format) -> None:
    seen: set[tuple[str, str]] = set()
    entries: list[tuple[SFTSample, dict[str, Any]]] = []
    for step in steps:
        pairs = [(step.action, step.expert, "expert")]
        pairs += [(b.action, b.outcome, f"alternative:{b.source}") for b in step.alternatives]
        for action, outcome, source in pairs:
            sample = iwm_sample(step, action, outcome)
            meta = {**_where(step), "source": source, "invalid": outcome.invalid}
            key = (sample.user, sample.assistant)
            if key in seen:
                reason = "duplicate: the same transition is already in the file"
                built.drop("iwm", reason, meta, sample.to_json(fmt))
                continue
            seen.add(key)
            entries.append((sample, meta))
    invalid = [i for i, (_, meta) in enumerate(entries) if meta["invalid"]]
    n_valid = len(entries) - len(invalid)
    # At most `cap` of the file invalid: n / (n_valid + n) <= cap.
    allowed = len(invalid) if cap >= 1 else int(cap * n_valid / (1 - cap))
    cut = set(invalid)
    if allowed < len(invalid):
        cut -= set(random.Random(seed).sample(invalid, allowed))
    else:
        cut = set()
    reason = f"invalid-cap: invalid transitions are capped at {cap:.0%} of the file"
    for i, (sample, meta) in enumerate(entries):
        if i in cut:
            built.drop("iwm", reason, meta, sample.to_json(fmt))
        else:
            built.add("iwm", sample, meta)


def _write_all(out: Path, payloads: dict[str, list[dict[str, Any]]]) -> dict[str, Path]:
    """Write every payload to a temporary file, then rename them all into place."""
    temps: dict[str, Path] = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, rows in payloads.items():
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
            temps[name] = Path(tmp_name)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        final = {name: out / f"{name}.jsonl" for name in payloads}
        for name, tmp in temps.items():
            os.replace(tmp, final[name])
        return final
    except OSError as exc:
        raise DataSourceError(
            f"cannot write the training files to {out}: {exc} (no file was left half-written; "
            "fix the folder and export again)"
        ) from None
    finally:
        for tmp in temps.values():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def export_sft(
    steps: Iterable[ExpertStep] | str | Path,
    out_dir: str | Path,
    *,
    model: ChatModel | None = None,
    reflections: Sequence[Reflection] | None = None,
    fmt: Format = "messages",
    max_invalid_share: float = DEFAULT_MAX_INVALID_SHARE,
    seed: int = 0,
    concurrency: int = 4,
    progress: Callable[[int, int], None] | None = None,
) -> ExportResult:
    """Write ``expert.jsonl``, ``iwm.jsonl``, ``reflection.jsonl`` and ``dropped.jsonl`` (with
    their ``.meta.jsonl`` companions) to ``out_dir`` from ``steps`` (records, or the path of a
    ``rollouts.jsonl``, read with :func:`read_rollouts`).

    Reflections are ``reflections`` when given (one per step, as
    :func:`~lemmata.agents.experience.reflect.write_reflections` returns them), else written by
    ``model`` (``progress(done, total)`` follows the calls), else templated. See the module's
    documentation for the formats and the filters.
    """
    if fmt not in ("messages", "prompt-completion"):
        raise UsageError(f"format is 'messages' or 'prompt-completion', not {fmt!r}")
    if not 0 <= max_invalid_share <= 1:
        raise UsageError(f"max_invalid_share is a fraction in [0, 1], not {max_invalid_share}")
    records = read_rollouts(steps) if isinstance(steps, str | Path) else list(steps)
    if reflections is None:
        reflections = write_reflections(records, model, concurrency=concurrency, progress=progress)
    if len(reflections) != len(records):
        raise UsageError(
            f"{len(reflections)} reflections were given for {len(records)} records: give one per record"
        )
    built = _Built()
    for step in records:
        built.add("expert", expert_sample(step), {**_where(step), "source": "expert"})
    _iwm(records, built, max_invalid_share, seed, fmt)
    writers: Counter[str] = Counter()
    for step, refl in zip(records, reflections, strict=True):
        meta = {**_where(step), "source": refl.source, "writer": refl.writer}
        writers[f"{refl.source}:{refl.writer}" if refl.source == "model" else refl.writer] += 1
        if refl.ok and refl.text is not None:
            built.add("reflection", reflection_sample(step, refl.text), meta)
        else:
            built.drop("reflection", refl.reason or "empty", meta, {"reply": refl.raw})
    payloads: dict[str, list[dict[str, Any]]] = {}
    for name in FILES:
        payloads[name] = [s.to_json(fmt) for s in built.samples[name]]
        payloads[f"{name}.meta"] = built.meta[name]
    payloads["dropped"] = built.dropped
    out = Path(out_dir)
    written = _write_all(out, payloads)
    dropped: dict[str, dict[str, int]] = {}
    for row in built.dropped:
        kind = str(row["reason"]).split(":", 1)[0]
        dropped.setdefault(row["file"], Counter())[kind] += 1
    return ExportResult(
        out_dir=out,
        files={name: written[name] for name in (*FILES, "dropped")},
        counts={name: len(built.samples[name]) for name in FILES},
        dropped={k: dict(v) for k, v in dropped.items()},
        reflections_by=", ".join(sorted(writers)) or "none",
        fmt=fmt,
    )
