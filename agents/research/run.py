"""``research(source, out_dir)``: one research run, from a database to a written report."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.agents.research.graph import ResearchContext, ResearchState, build_graph
from lemmata.agents.research.types import KINDS, Insight
from lemmata.environments.database import open_source
from lemmata.errors import UsageError

if TYPE_CHECKING:
    from lemmata.llm.base import ChatModel

__all__ = ["ResearchReport", "research"]

THREAD = "research"


@dataclass
class ResearchReport:
    """A finished run: its insights (best first), its figures and numbers, where it was written."""

    insights: list[Insight]
    stats: dict[str, Any]
    observations: list[str]
    out_dir: Path
    files: dict[str, Path] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "insights": [i.public() for i in self.insights],
            "stats": self.stats,
            "observations": self.observations,
        }


def _order(insights: list[Insight], entity: str | None) -> list[Insight]:
    def key(ins: Insight) -> tuple[int, float]:
        about_entity = entity is not None and entity in ins.entities
        return (0 if about_entity else 1, -ins.score)

    return sorted(insights, key=key)


def research(
    source: str | Path,
    out_dir: str | Path,
    *,
    entity: str | None = None,
    budget_turns: int = 40,
    budget_seconds: float = 300.0,
    model: ChatModel | None = None,
    resume: bool = False,
    figures: bool = True,
    on_step: Callable[[ResearchState], None] | None = None,
) -> ResearchReport:
    """Explore ``source`` (a SQLite file, or a folder of CSV/Parquet files) and write a report
    into ``out_dir``.

    Offline (``model=None``) the statistical explorer proposes and tests every hypothesis; with a
    model, the model proposes hypotheses too and rewrites the statements. The run is
    checkpointed in ``out_dir/checkpoint.sqlite``: ``resume=True`` continues the last run there
    (with the budgets given now) instead of starting again. The source is never modified, and
    ``stats["source_unchanged"]`` says so after checking its SHA-256.

    >>> import tempfile, pathlib
    >>> from lemmata.agents.research.synthetic import generate
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> db = generate(tmp / "shop.sqlite", seed=1, domain="retail")
    >>> report = research(db.path, tmp / "out", budget_turns=30, figures=False)
    >>> report.stats["source_unchanged"], len(report.insights) >= 9
    (True, True)
    """
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        import numpy  # noqa: F401
        import scipy  # noqa: F401
    except ImportError:
        from lemmata.errors import MissingDependency

        raise MissingDependency("the research agent", "pip install 'lemmata[research]'") from None
    if budget_turns < 1:
        raise UsageError(f"--budget-turns must be at least 1 (got {budget_turns})")
    if budget_seconds <= 0:
        raise UsageError(f"--budget-seconds must be positive (got {budget_seconds:g})")
    if entity is not None:
        from lemmata.agents.research.explore import parse_entity

        try:
            parse_entity(entity)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: give a folder for the report")
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    db, loaded = open_source(source, out)
    checksum = db.checksum() if loaded is None else None
    ckpt_path = out / "checkpoint.sqlite"
    if not resume:
        for suffix in ("", "-wal", "-shm"):
            Path(str(ckpt_path) + suffix).unlink(missing_ok=True)
    con = sqlite3.connect(ckpt_path, check_same_thread=False)
    try:
        saver = SqliteSaver(con)
        ctx = ResearchContext(db=db, model=model, output_dir=out / "scratch", on_step=on_step)
        graph = build_graph(ctx, checkpointer=saver)
        config: dict[str, Any] = {
            "configurable": {"thread_id": THREAD},
            "recursion_limit": 4 * budget_turns + 50,
        }
        snapshot = graph.get_state(config)
        budgets = {"budget_turns": budget_turns, "budget_seconds": float(budget_seconds)}
        if resume and snapshot.values:
            # Continue where the last run stopped, with the budgets given now.
            resumed_from = snapshot.values.get("turns", 0)
            graph.update_state(config, {**budgets, "stopped": None}, as_node="test")
            state = graph.invoke(None, config)
        else:
            resumed_from = None
            state = graph.invoke({"entity": entity, **budgets}, config)
    finally:
        con.close()
    insights = _order([Insight.model_validate(i) for i in state.get("insights", [])], entity)
    survey = ctx.survey()
    rewritten = 0
    if model is not None:
        from lemmata.agents.research.model import rewrite_statements

        rewritten = rewrite_statements(model, insights, focus=entity or "the whole database")
    observations = [*(loaded.observations if loaded else []), *state.get("observations", [])]
    by_kind = {k: sum(i.kind == k for i in insights) for k in KINDS}
    stats: dict[str, Any] = {
        "source": str(source),
        "evidence_database": str(db.path),
        "entity": entity,
        "tables": {t.name: t.rows for t in survey.tables.values()},
        # Each column's role and the evidence for it; which tables are time series.
        "columns": {
            t.name: {c.name: f"{c.role}: {c.evidence}" for c in t.columns.values()}
            for t in survey.tables.values()
        },
        "time_series": {
            t.name: f"one row per {t.period} of {t.time}"
            for t in survey.tables.values()
            if t.series
        },
        "links": [
            f"{lk.child}.{lk.column} -> {lk.parent}.{lk.parent_column}" for lk in survey.links
        ],
        "turns": state.get("turns", 0),
        "budget_turns": budget_turns,
        "budget_seconds": budget_seconds,
        "stopped": state.get("stopped"),
        "resumed_from_turn": resumed_from,
        "hypotheses_tested": len(state.get("tested", [])),
        "hypotheses_left": len(state.get("queue", [])),
        "insights": len(insights),
        "insights_by_kind": {k: v for k, v in by_kind.items() if v},
        "queries": db.queries,
        "elapsed_s": round(time.monotonic() - started, 3),
        "explorer": (
            "statistical (offline)"
            if model is None
            else f"model {model.name}{' [scripted]' if model.is_scripted else ''} + statistical"
        ),
        "statements_rewritten": rewritten,
    }
    if checksum is not None:
        stats["source_sha256"] = checksum
        stats["source_unchanged"] = db.checksum() == checksum
    else:
        stats["source_unchanged"] = True  # a folder is only read; its copy is data.sqlite
    from lemmata.agents.research.report import write_report

    try:
        files = write_report(
            out, insights, stats, observations, db=db, survey=survey, figures=figures
        )
    finally:
        db.close()
    return ResearchReport(insights, stats, observations, out, files)
