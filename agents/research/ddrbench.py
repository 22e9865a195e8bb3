"""DDR-Bench checklists (``qa.json``) for users who have that data.

DDR-Bench (thinkwee/DDR_Bench) ships, per scenario, a ``qa.json`` of the form
``{"metadata": {...}, "results": [{"entity_id": "10502319", "qa_pairs": [{"question": ...,
"answer": ..., "source_text": ...}]}]}``: free-text facts about each entity that a run's
insights should state. :func:`load_ddr_bench` turns each pair into a
:class:`~lemmata.agents.research.types.ChecklistItem` of kind ``other`` with its question and
answer; :mod:`~lemmata.agents.research.score` matches them by the answer's words, or by an LLM
judge.

>>> import json, tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "qa.json"
>>> _ = p.write_text(json.dumps({"results": [{"entity_id": "7", "qa_pairs": [
...     {"question": "What is the patient's sex?", "answer": "Female"}]}]}))
>>> items = load_ddr_bench(p)
>>> items["7"][0].answer, items["7"][0].kind
('Female', 'other')
"""

from __future__ import annotations

import json
from pathlib import Path

from lemmata.agents.research.types import ChecklistItem
from lemmata.errors import DataSourceError

__all__ = ["load_ddr_bench"]


def load_ddr_bench(path: str | Path) -> dict[str, list[ChecklistItem]]:
    """The checklists of a DDR-Bench ``qa.json``, by entity id; a malformed record raises
    :class:`~lemmata.errors.DataSourceError` naming it."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataSourceError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DataSourceError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise DataSourceError(
            f"{path}: expected an object with a 'results' list (DDR-Bench qa.json)"
        )
    out: dict[str, list[ChecklistItem]] = {}
    for i, record in enumerate(results):
        where = f"{path}: results[{i}]"
        if not isinstance(record, dict) or "entity_id" not in record:
            raise DataSourceError(f"{where} has no entity_id")
        pairs = record.get("qa_pairs")
        if not isinstance(pairs, list):
            raise DataSourceError(f"{where} ({record['entity_id']}) has no qa_pairs list")
        entity = str(record["entity_id"])
        items = out.setdefault(entity, [])
        for j, pair in enumerate(pairs):
            if not isinstance(pair, dict) or not str(pair.get("answer", "")).strip():
                raise DataSourceError(f"{where}.qa_pairs[{j}] has no answer")
            items.append(
                ChecklistItem(
                    id=f"{entity}:{len(items)}",
                    kind="other",
                    question=str(pair.get("question", "")),
                    answer=str(pair["answer"]),
                    statement=str(pair.get("source_text", "")),
                )
            )
    return out
