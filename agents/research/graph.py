"""The research agent as a LangGraph graph, checkpointed so that a run can be resumed.

``survey -> propose -> test -> (propose | test | finish)``:

- **survey** profiles the tables (row counts, roles of columns, links) and seeds the queue of
  hypotheses from the statistical explorer;
- **propose** (with a model) asks it for hypotheses, checked against the schema;
- **test** takes the best hypotheses from the queue (ranked by expected information: the prior
  of their kind, lowered for columns that already carry insights), tests them with read-only
  SQL, and records each confirmed insight with its evidence; a model's analysis scripts run in
  the sandbox and come back as observations;
- the run stops on its budget (turns, seconds) or when nothing is left to test, never at a
  first "done".

The state holds only plain data, so the SQLite checkpointer can store every step; the database
connection and the model are the run's context, given to :func:`build_graph`.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from lemmata.agents.research.explore import Explorer
from lemmata.agents.research.profile import Survey, survey
from lemmata.agents.research.types import Hypothesis, Insight

if TYPE_CHECKING:
    from lemmata.environments.database import Database
    from lemmata.llm.base import ChatModel

__all__ = ["ResearchContext", "ResearchState", "build_graph"]

BATCH = 8


class ResearchState(TypedDict, total=False):
    """What a research run knows after each step (all of it checkpointed)."""

    entity: str | None
    queue: list[dict[str, Any]]
    tested: Annotated[list[str], operator.add]
    insights: list[dict[str, Any]]
    observations: Annotated[list[str], operator.add]
    turns: int
    budget_turns: int
    budget_seconds: float
    elapsed_s: float
    model_turns: int
    model_done: bool
    stopped: str | None


@dataclass
class ResearchContext:
    """What the nodes use but the state does not hold: the database, the model, the sandbox's
    output folder and a progress callback."""

    db: Database
    model: ChatModel | None = None
    output_dir: Path | None = None
    on_step: Callable[[ResearchState], None] | None = None
    _explorer: Explorer | None = field(default=None, repr=False)
    _survey: Survey | None = field(default=None, repr=False)

    def survey(self) -> Survey:
        if self._survey is None:
            self._survey = survey(self.db)
        return self._survey

    def explorer(self, entity: str | None) -> Explorer:
        if self._explorer is None:
            self._explorer = Explorer(self.db, self.survey(), entity=entity)
        return self._explorer


def _hkey(h: Hypothesis) -> str:
    return repr(h.key())


def _focus(entity: str | None) -> str:
    return f"the entity {entity}" if entity else "the whole database"


def _rank(queue: list[dict[str, Any]], insights: list[dict[str, Any]]) -> list[dict[str, Any]]:
    covered: dict[tuple[str, str], int] = {}
    for ins in insights:
        for c in ins["columns"]:
            covered[(ins["table"], c)] = covered.get((ins["table"], c), 0) + 1

    def expected(h: dict[str, Any]) -> float:
        seen = sum(covered.get((h["table"], c), 0) for c in h["columns"] if c)
        return float(h["priority"]) / (1.0 + 0.5 * seen)

    return sorted(queue, key=expected, reverse=True)


def build_graph(ctx: ResearchContext, checkpointer: Any = None) -> Any:
    """The compiled research graph over ``ctx`` (with ``checkpointer``, resumable)."""
    from langgraph.graph import END, START, StateGraph

    def survey_node(state: ResearchState) -> dict[str, Any]:
        s = ctx.survey()
        explorer = ctx.explorer(state.get("entity"))
        queue = [h.model_dump() for h in explorer.initial()]
        notes = [f"surveyed {len(s.tables)} tables, {len(s.links)} links", *s.observations]
        entity = state.get("entity")
        if entity and not any(h["entities"] for h in queue):
            column = entity.split("=")[0]
            notes.append(f"no table has a column {column}; exploring the whole database instead")
        return {"queue": queue, "observations": notes, "turns": 0, "elapsed_s": 0.0}

    def propose_node(state: ResearchState) -> dict[str, Any]:
        from lemmata.agents.research.model import propose

        if ctx.model is None or state.get("model_done"):
            return {}
        started = time.monotonic()
        insights = [Insight.model_validate(i) for i in state.get("insights", [])]
        usable, notes = propose(
            ctx.model,
            ctx.survey(),
            insights,
            state.get("observations", []),
            focus=_focus(state.get("entity")),
        )
        tested = set(state.get("tested", []))
        queue = list(state.get("queue", []))
        added = 0
        for hyp, proposal in usable:
            if _hkey(hyp) in tested:
                continue
            item = hyp.model_dump()
            item["proposal"] = proposal.model_dump()
            queue.append(item)
            added += 1
        return {
            "queue": queue,
            "observations": notes + [f"the model proposed {added} new hypotheses"],
            "model_turns": state.get("model_turns", 0) + 1,
            "model_done": added == 0,
            "elapsed_s": state.get("elapsed_s", 0.0) + time.monotonic() - started,
        }

    def test_node(state: ResearchState) -> dict[str, Any]:
        started = time.monotonic()
        explorer = ctx.explorer(state.get("entity"))
        insights = list(state.get("insights", []))
        keys = {Insight.model_validate(i).key() for i in insights}
        queue = _rank(list(state.get("queue", [])), insights)
        batch, queue = queue[:BATCH], queue[BATCH:]
        tested: list[str] = []
        notes: list[str] = []
        done = set(state.get("tested", []))
        for item in batch:
            proposal = item.pop("proposal", None)
            hyp = Hypothesis.model_validate(item)
            tested.append(_hkey(hyp))
            if proposal is not None and (proposal.get("sql") or proposal.get("python")):
                found, note = _test_proposal(ctx, hyp, proposal)
                outcome_insights, follow_ups = found, []
            else:
                outcome = explorer.test(hyp)
                outcome_insights, follow_ups, note = (
                    outcome.insights,
                    outcome.follow_ups,
                    outcome.observation,
                )
            if note:
                notes.append(note)
            for ins in outcome_insights:
                if ins.key() not in keys:
                    keys.add(ins.key())
                    insights.append(ins.model_dump())
            for f in follow_ups:
                if _hkey(f) not in done and _hkey(f) not in tested:
                    queue.append(f.model_dump())
        update: dict[str, Any] = {
            "queue": queue,
            "tested": tested,
            "insights": insights,
            "observations": notes[-20:],
            "turns": state.get("turns", 0) + 1,
            "elapsed_s": state.get("elapsed_s", 0.0) + time.monotonic() - started,
        }
        if ctx.on_step is not None:
            ctx.on_step({**state, **update})  # type: ignore[typeddict-item]
        return update

    def finish_node(state: ResearchState) -> dict[str, Any]:
        if state.get("turns", 0) >= state.get("budget_turns", 0):
            reason = "budget_turns"
        elif state.get("elapsed_s", 0.0) >= state.get("budget_seconds", float("inf")):
            reason = "budget_seconds"
        else:
            reason = "exhausted"
        return {"stopped": reason}

    def route(state: ResearchState) -> str:
        if state.get("turns", 0) >= state.get("budget_turns", 0):
            return "finish"
        if state.get("elapsed_s", 0.0) >= state.get("budget_seconds", float("inf")):
            return "finish"
        model_left = ctx.model is not None and not state.get("model_done")
        if not state.get("queue"):
            return "propose" if model_left else "finish"
        # With a model, it proposes again every few turns, when it has seen new results.
        if model_left and state.get("turns", 0) % 3 == 0:
            return "propose"
        return "test"

    def after_propose(state: ResearchState) -> str:
        return "test" if state.get("queue") else "finish"

    graph = StateGraph(ResearchState)
    graph.add_node("survey", survey_node)
    graph.add_node("propose", propose_node)
    graph.add_node("test", test_node)
    graph.add_node("finish", finish_node)
    graph.add_edge(START, "survey")
    graph.add_conditional_edges("survey", route, ["propose", "test", "finish"])
    graph.add_conditional_edges("propose", after_propose, ["test", "finish"])
    graph.add_conditional_edges("test", route, ["propose", "test", "finish"])
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)


def _test_proposal(
    ctx: ResearchContext, hyp: Hypothesis, proposal: dict[str, Any]
) -> tuple[list[Insight], str]:
    """Run a model's own query or script; a query that returns a number becomes an insight
    whose evidence is that query."""
    import math

    from lemmata.environments.sandbox import run_python

    notes = []
    found: list[Insight] = []
    if proposal.get("python"):
        run = run_python(proposal["python"], database=ctx.db.path, output_dir=ctx.output_dir)
        notes.append(f"script for {hyp.kind} on {hyp.table}: {run.observation()[:1500]}")
    sql = proposal.get("sql")
    if sql:
        result = ctx.db.query(sql, max_rows=5)
        if not result.ok:
            notes.append(f"query for {hyp.kind} on {hyp.table} failed: {result.error}")
        elif not result.rows or not isinstance(result.rows[0][0], int | float):
            notes.append(
                f"query for {hyp.kind} on {hyp.table} returned no number:\n{result.text(5)}"
            )
        else:
            value = float(result.rows[0][0])
            claim = proposal.get("claim") or f"{hyp.kind} in {hyp.table}: {{value}}"
            if not math.isfinite(value):
                notes.append(f"query for {hyp.kind} on {hyp.table} returned {value}")
            else:
                direction = proposal.get("direction")
                found.append(
                    Insight(
                        statement=claim.replace("{value}", f"{value:.4g}"),
                        kind=hyp.kind,
                        table=hyp.table,
                        columns=hyp.columns,
                        entities=hyp.entities,
                        direction=direction if direction in _DIRECTIONS else None,
                        value=value,
                        evidence_sql=sql,
                        score=1.0,
                        support={"origin": "model", "rationale": proposal.get("rationale", "")},
                    )
                )
                notes.append(f"query for {hyp.kind} on {hyp.table} returned {value:.4g}")
    return found, "\n".join(notes)


_DIRECTIONS = {"higher", "lower", "increase", "decrease", "positive", "negative", "none"}
