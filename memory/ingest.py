"""Reading episodes from files: LoCoMo conversations and JSON Lines.

Both readers validate the whole file before anything is stored, and a problem names the record
(``file:line`` for JSONL; the session and turn for LoCoMo).

- ``read_jsonl(path)``: one episode per line, the fields of
  :class:`~lemmata.memory.Episode` (``content`` required; ``speaker``, ``session``,
  ``timestamp``, ``kind``, ``id``, ``subgoal``, ``outcome``, ``meta``). Blank lines and lines
  starting with ``#`` are skipped.
- ``read_locomo(path)``: a LoCoMo conversation file (``speaker_a``, ``session_N``,
  ``session_N_date_time``, ``qa``; or the same under ``conversation``, as in
  ``locomo10.json``, which may also hold a list of such samples). Each turn becomes an
  utterance whose id is its ``dia_id``, in the session's time; a shared image's caption is
  kept as ``meta.image_caption``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lemmata.errors import UsageError
from lemmata.memory.dates import parse_timestamp
from lemmata.memory.types import Episode, describe_error

__all__ = ["Conversation", "Question", "read_jsonl", "read_locomo"]


@dataclass(frozen=True)
class Question:
    """A LoCoMo question with the turns (``dia_id``) that hold its answer."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass
class Conversation:
    """One LoCoMo sample: its episodes in order, and its questions."""

    sample_id: str
    speakers: tuple[str, str]
    episodes: list[Episode] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None


def read_jsonl(path: str | Path) -> list[Episode]:
    """Episodes from a JSON Lines file; the first bad line is named and nothing is returned."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    out: list[Episode] = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{n}: not JSON ({exc.msg}); nothing was stored") from None
        if not isinstance(record, dict):
            raise UsageError(f"{path}:{n}: expected a JSON object; nothing was stored")
        try:
            out.append(Episode.model_validate(record))
        except ValidationError as exc:
            raise UsageError(f"{path}:{n}: {describe_error(exc)}; nothing was stored") from None
    return out


_SESSION = re.compile(r"^session_(\d+)$")


def read_locomo(path: str | Path) -> list[Conversation]:
    """LoCoMo samples from a file (one sample, or a list of them)."""
    path = Path(path)
    data = _load_json(path)
    samples = data if isinstance(data, list) else [data]
    out = []
    for k, sample in enumerate(samples):
        where = f"{path}" + (f" sample {k}" if isinstance(data, list) else "")
        if not isinstance(sample, dict):
            raise UsageError(f"{where}: expected a JSON object")
        conv = sample.get("conversation", sample)
        if not isinstance(conv, dict) or "speaker_a" not in conv:
            raise UsageError(f"{where}: not a LoCoMo conversation (no speaker_a)")
        sid = str(sample.get("sample_id") or path.stem)
        result = Conversation(sid, (str(conv["speaker_a"]), str(conv.get("speaker_b", ""))))
        sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)))
        for num, key in sessions:
            turns = conv[key]
            if not isinstance(turns, list):
                raise UsageError(f"{where}: {key} is not a list of turns")
            stamp = conv.get(f"{key}_date_time")
            try:
                when = parse_timestamp(stamp) if stamp else None
            except ValueError as exc:
                raise UsageError(f"{where}: {key}_date_time: {exc}") from None
            for t, turn in enumerate(turns):
                if not isinstance(turn, dict):
                    raise UsageError(f"{where}: {key} turn {t}: expected an object")
                meta: dict[str, Any] = {}
                caption = turn.get("blip_caption")
                if caption:
                    meta["image_caption"] = str(caption)
                try:
                    result.episodes.append(
                        Episode.model_validate(
                            {
                                "content": str(turn.get("text") or caption or "").strip()
                                or "(no text)",
                                "speaker": turn.get("speaker"),
                                "session": f"session_{num}",
                                "timestamp": when,
                                "id": turn.get("dia_id") or f"D{num}:{t + 1}",
                                "meta": meta,
                            }
                        )
                    )
                except ValidationError as exc:
                    raise UsageError(f"{where}: {key} turn {t}: {describe_error(exc)}") from None
        for q in sample.get("qa", conv.get("qa", [])) or []:
            if not isinstance(q, dict) or "question" not in q:
                continue
            result.questions.append(
                Question(
                    question=str(q["question"]),
                    answer=str(q.get("answer", q.get("adversarial_answer", ""))),
                    # one entry of the data lists two turns as "D8:6; D9:17": split them
                    evidence=tuple(
                        p.strip()
                        for e in q.get("evidence", []) or []
                        for p in str(e).split(";")
                        if p.strip()
                    ),
                    category=int(q.get("category", 0)),
                )
            )
        out.append(result)
    return out
