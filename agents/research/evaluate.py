"""Evaluation suites: generated databases with planted insights, or DDR-Bench checklists.

For each task the research agent runs as a user would run it (``research()`` into a folder),
and its insights are scored against the checklist. Precision counts an insight as correct
when it matches a checklist item or its evidence query reproduces its value on the data
(it is true of the data, even if no checklist asked for it).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.agents.research.run import research
from lemmata.agents.research.score import Score, is_true, judge, score
from lemmata.agents.research.types import KINDS, ChecklistItem
from lemmata.environments.database import Database

if TYPE_CHECKING:
    from lemmata.llm.base import ChatModel

__all__ = ["SuiteResult", "TaskResult", "evaluate_ddr_bench", "evaluate_generated"]


@dataclass
class TaskResult:
    name: str
    entity: str | None
    score: Score
    insights: int
    correct: int
    seconds: float


@dataclass
class SuiteResult:
    """Recall overall and by kind (pooled over items), precision, and seconds per task."""

    tasks: list[TaskResult] = field(default_factory=list)
    null_insights: list[int] = field(default_factory=list)

    def _pooled(self) -> tuple[int, int, dict[str, list[int]]]:
        found = total = 0
        kinds: dict[str, list[int]] = {}
        for t in self.tasks:
            for kind, n in t.score.items_by_kind.items():
                hit = round(t.score.by_kind[kind] * n)
                found += hit
                total += n
                acc = kinds.setdefault(kind, [0, 0])
                acc[0] += hit
                acc[1] += n
        return found, total, kinds

    @property
    def recall(self) -> float:
        found, total, _ = self._pooled()
        return found / total if total else 0.0

    def by_kind(self) -> dict[str, float]:
        _, _, kinds = self._pooled()
        return {k: kinds[k][0] / kinds[k][1] for k in KINDS if k in kinds}

    @property
    def precision(self) -> float:
        n = sum(t.insights for t in self.tasks)
        return sum(t.correct for t in self.tasks) / n if n else 1.0

    def to_dict(self) -> dict[str, Any]:
        seconds = [t.seconds for t in self.tasks]
        _, total, kinds = self._pooled()
        return {
            "tasks": len(self.tasks),
            "items": total,
            "recall": round(self.recall, 4),
            "by_kind": {k: round(v, 4) for k, v in self.by_kind().items()},
            "items_by_kind": {k: v[1] for k, v in kinds.items()},
            "precision": round(self.precision, 4),
            "insights_per_task": round(statistics.mean(t.insights for t in self.tasks), 2)
            if self.tasks
            else 0,
            "seconds_per_task_median": round(statistics.median(seconds), 2) if seconds else 0,
            "seconds_per_task_max": round(max(seconds), 2) if seconds else 0,
            "null_insights_per_db": round(statistics.mean(self.null_insights), 2)
            if self.null_insights
            else None,
            "missed": {t.name: t.score.missed for t in self.tasks if t.score.missed},
        }


def _run_task(
    name: str,
    source: Path,
    checklist: Sequence[ChecklistItem],
    out: Path,
    *,
    entity: str | None,
    budget_turns: int,
    budget_seconds: float,
    model: ChatModel | None,
    judge_model: ChatModel | None,
) -> TaskResult:
    started = time.monotonic()
    report = research(
        source,
        out,
        entity=entity,
        budget_turns=budget_turns,
        budget_seconds=budget_seconds,
        model=model,
        figures=False,
    )
    seconds = time.monotonic() - started
    verdicts = judge(judge_model, report.insights, checklist) if judge_model else None
    result = score(report.insights, checklist, verdicts=verdicts)
    matched = set(result.matched.values())
    with Database(report.stats["evidence_database"]) as db:
        correct = sum(
            1 for i, ins in enumerate(report.insights) if i in matched or is_true(ins, db)
        )
    return TaskResult(name, entity, result, len(report.insights), correct, seconds)


def evaluate_generated(
    seeds: Sequence[int],
    workdir: str | Path,
    *,
    entity_tasks: bool = True,
    null_databases: bool = True,
    budget_turns: int = 60,
    budget_seconds: float = 120.0,
    model: ChatModel | None = None,
    judge_model: ChatModel | None = None,
    on_task: Callable[[TaskResult], None] | None = None,
    style: str = "original",
) -> SuiteResult:
    """Generate one database per seed, run the whole-database task (and the entity task),
    score both; with ``null_databases``, also count what a run reports on the same database
    with nothing planted.

    ``style`` picks the generator: ``original`` (:mod:`~lemmata.agents.research.synthetic`)
    or ``shapes`` (:mod:`~lemmata.agents.research.synthetic2`: text time keys, a time series
    table, a wide table, integer codes, NULLs, mixed units)."""
    if style == "original":
        from lemmata.agents.research.synthetic import generate
    elif style == "shapes":
        from lemmata.agents.research.synthetic2 import generate
    else:
        raise ValueError(f"unknown generator style {style!r}: original or shapes")

    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    suite = SuiteResult()
    for seed in seeds:
        g = generate(work / f"seed{seed}.sqlite", seed=seed)
        tasks: list[tuple[str | None, list[ChecklistItem]]] = [(None, g.checklist)]
        if entity_tasks:
            tasks.append((g.entity, g.entity_checklist))
        for entity, checklist in tasks:
            name = f"seed{seed}" + (f"[{entity}]" if entity else "")
            result = _run_task(
                name,
                g.path,
                checklist,
                work / f"{name.replace('[', '_').replace(']', '')}.out",
                entity=entity,
                budget_turns=budget_turns,
                budget_seconds=budget_seconds,
                model=model,
                judge_model=judge_model,
            )
            suite.tasks.append(result)
            if on_task is not None:
                on_task(result)
        if null_databases:
            null = generate(work / f"null{seed}.sqlite", seed=seed, planted=False)
            report = research(
                null.path,
                work / f"null{seed}.out",
                budget_turns=budget_turns,
                budget_seconds=budget_seconds,
                model=model,
                figures=False,
            )
            suite.null_insights.append(sum(i.kind != "other" for i in report.insights))
    return suite


def evaluate_ddr_bench(
    qa_path: str | Path,
    database: str | Path,
    workdir: str | Path,
    *,
    entity_column: str,
    limit: int | None = None,
    budget_turns: int = 60,
    budget_seconds: float = 120.0,
    model: ChatModel | None = None,
    judge_model: ChatModel | None = None,
    on_task: Callable[[TaskResult], None] | None = None,
) -> SuiteResult:
    """Run one entity task per entity of a DDR-Bench ``qa.json`` on ``database`` and score the
    free-text checklist (answer words, or ``judge_model``'s verdicts)."""
    from lemmata.agents.research.ddrbench import load_ddr_bench

    checklists = load_ddr_bench(qa_path)
    work = Path(workdir)
    suite = SuiteResult()
    for n, (entity_id, items) in enumerate(checklists.items()):
        if limit is not None and n >= limit:
            break
        entity = f"{entity_column}={entity_id}"
        result = _run_task(
            entity,
            Path(database),
            items,
            work / f"entity_{entity_id}",
            entity=entity,
            budget_turns=budget_turns,
            budget_seconds=budget_seconds,
            model=model,
            judge_model=judge_model,
        )
        suite.tasks.append(result)
        if on_task is not None:
            on_task(result)
    return suite
