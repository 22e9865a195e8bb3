"""``lemmata research`` and ``lemmata research-eval``.

``lemmata research DB --out DIR`` explores DB (a SQLite file, or a folder of CSV/Parquet
files) and writes DIR/report.json, DIR/report.md and DIR/figures/. ``lemmata research-eval``
runs the agent on generated databases (or on DDR-Bench checklists) and prints recall by kind.
Bad input exits with status 2 and one line naming what to fix.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from lemmata.cli_kit import JsonOpt, console, progress_bar, settings_of

__all__ = ["register"]


def _model(ctx: typer.Context, offline: bool) -> Any:
    if offline:
        return None
    from lemmata.llm import get_model

    return get_model(settings_of(ctx))


def _research(
    ctx: typer.Context,
    db: Annotated[Path, typer.Argument(help="A SQLite file, or a folder of CSV/Parquet files.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for report.json, report.md, figures/.")
    ],
    entity: Annotated[
        str | None,
        typer.Option("--entity", help="Focus on one entity: column=value, e.g. patient_id=42."),
    ] = None,
    budget_turns: Annotated[
        int, typer.Option("--budget-turns", help="Stop after this many turns.")
    ] = 40,
    budget_seconds: Annotated[
        float, typer.Option("--budget-seconds", help="Stop after this many seconds of exploring.")
    ] = 300.0,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the run checkpointed in --out.")
    ] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use no model even when one is configured.")
    ] = False,
    no_figures: Annotated[bool, typer.Option("--no-figures", help="Draw no figures.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Explore a database on your own and report verifiable insights."""
    from lemmata.agents.research.run import research

    model = _model(ctx, offline)
    err = console(stderr=True)
    with progress_bar(
        "research",
        err,
        disable=as_json or not err.is_terminal,
        fields=("insights",),
        count="turn {task.completed:.0f}/{task.total:.0f}",
        transient=True,
    ) as progress:
        task = progress.add_task("research", total=budget_turns, insights="0 insights")

        def step(state: Any) -> None:
            found = len(state.get("insights", []))
            progress.update(task, completed=state.get("turns", 0), insights=f"{found} insights")

        report = research(
            db,
            out,
            entity=entity,
            budget_turns=budget_turns,
            budget_seconds=budget_seconds,
            model=model,
            resume=resume,
            figures=not no_figures,
            on_step=step,
        )
    if as_json:
        typer.echo(report.files["json"].read_text(encoding="utf-8").rstrip())
        return
    screen = console()
    s = report.stats
    screen.print(
        f"{s['insights']} insights from {s['hypotheses_tested']} hypotheses in {s['turns']} turns "
        f"({s['elapsed_s']:.1f} s, stopped: {s['stopped']}; explorer: {s['explorer']})"
    )
    for i, ins in enumerate(report.insights[:15], 1):
        screen.print(f"{i:>2}. [{ins.kind}] {ins.statement}")
    if len(report.insights) > 15:
        screen.print(f"    ... and {len(report.insights) - 15} more in the report")
    screen.print(f"report: {report.files['markdown']}  json: {report.files['json']}")


def _research_eval(
    ctx: typer.Context,
    seeds: Annotated[
        str,
        typer.Option(
            "--seeds", help="Generated databases: seeds as A-B (inclusive) or a list 1,2,3."
        ),
    ] = "1000-1004",
    ddr_bench: Annotated[
        Path | None,
        typer.Option("--ddr-bench", help="A DDR-Bench qa.json instead of generated databases."),
    ] = None,
    db: Annotated[
        Path | None, typer.Option("--db", help="With --ddr-bench: the scenario's SQLite database.")
    ] = None,
    entity_column: Annotated[
        str,
        typer.Option("--entity-column", help="With --ddr-bench: the column holding entity ids."),
    ] = "subject_id",
    limit: Annotated[
        int | None, typer.Option("--limit", help="With --ddr-bench: at most N entities.")
    ] = None,
    budget_turns: Annotated[int, typer.Option("--budget-turns")] = 60,
    budget_seconds: Annotated[float, typer.Option("--budget-seconds")] = 120.0,
    judge_: Annotated[
        bool,
        typer.Option("--judge", help="Let the configured model judge the items the rules miss."),
    ] = False,
    workdir: Annotated[
        Path | None, typer.Option("--workdir", help="Keep databases and reports here.")
    ] = None,
    offline: Annotated[bool, typer.Option("--offline", help="Use no model for the agent.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Score the research agent on checklists: recall by kind, precision, seconds per task."""
    from lemmata.agents.research.evaluate import evaluate_ddr_bench, evaluate_generated
    from lemmata.errors import UsageError
    from lemmata.llm import get_model

    model = _model(ctx, offline)
    judge_model = get_model(settings_of(ctx), required=True, feature="--judge") if judge_ else None
    err = console(stderr=True)

    def done(task: Any) -> None:
        if not as_json:
            err.print(
                f"{task.name}: recall {task.score.recall:.2f} ({task.insights} insights, "
                f"{task.seconds:.1f} s)"
            )

    with tempfile.TemporaryDirectory(prefix="lemmata-eval-") as tmp:
        work = workdir or Path(tmp)
        if ddr_bench is not None:
            if db is None:
                raise UsageError("--ddr-bench needs --db, the scenario's SQLite database")
            suite = evaluate_ddr_bench(
                ddr_bench,
                db,
                work,
                entity_column=entity_column,
                limit=limit,
                budget_turns=budget_turns,
                budget_seconds=budget_seconds,
                model=model,
                judge_model=judge_model,
                on_task=done,
            )
        else:
            suite = evaluate_generated(
                _parse_seeds(seeds),
                work,
                budget_turns=budget_turns,
                budget_seconds=budget_seconds,
                model=model,
                judge_model=judge_model,
                on_task=done,
            )
        result = suite.to_dict()
    if as_json:
        typer.echo(json.dumps(result))
        return
    screen = console()
    screen.print(
        f"recall {result['recall']:.3f} over {result['items']} items in {result['tasks']} tasks; "
        f"precision {result['precision']:.3f}; median {result['seconds_per_task_median']:.1f} s a task"
    )
    for kind, value in result["by_kind"].items():
        screen.print(f"  {kind:<17} {value:.3f}  ({result['items_by_kind'][kind]} items)")
    if result["null_insights_per_db"] is not None:
        screen.print(f"insights on null databases: {result['null_insights_per_db']} per database")


def _parse_seeds(text: str) -> list[int]:
    from lemmata.errors import UsageError

    try:
        if "-" in text.strip().lstrip("-"):
            a, b = text.split("-", 1)
            seeds = list(range(int(a), int(b) + 1))
        else:
            seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise UsageError(f"--seeds {text!r}: give A-B or a list such as 1,2,3") from None
    if not seeds:
        raise UsageError(f"--seeds {text!r} names no seed")
    return seeds


def register(app: typer.Typer) -> None:
    """Add ``research`` and ``research-eval`` to the ``lemmata`` app."""
    app.command("research")(_research)
    app.command("research-eval")(_research_eval)
