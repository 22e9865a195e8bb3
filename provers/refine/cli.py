"""``lemmata prove FILE --method refine`` and ``lemmata prove-train``.

The batch goes through the same runner as ``--method check`` (results appended and flushed
one theorem at a time, ``--resume``, Ctrl-C keeps what finished); each theorem is searched by
:func:`lemmata.provers.refine.search` with the shipped value model (Coq), and with the model
the settings name, if any: it drafts a proof and proposes repairs the automation could not
find. Progress shows solved/attempted and the verifier calls spent. With ``ray`` the workers
are Ray actors (:mod:`lemmata.provers.ray_workers`), each building its verifier, value model and
model on its node (:func:`refine_worker`); traces are written on the node that searched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lemmata.cli_kit import console, progress_bar
from lemmata.provers.runner import Theorem, TheoremResult

if TYPE_CHECKING:
    from lemmata.llm.base import ChatModel
    from lemmata.provers.base import Verifier
    from lemmata.provers.refine.search import Scorer, SearchConfig
    from lemmata.settings import Settings

__all__ = ["RefineWorker", "prove_refine", "refine_worker", "register", "trace_name"]


def trace_name(theorem_id: str) -> str:
    """A file name for a theorem's trace: ``sub/foo:bar`` -> ``sub__foo__bar.jsonl``."""
    return re.sub(r"[^\w.'-]+", "__", theorem_id).strip("_") + ".jsonl"


class RefineWorker:
    """A runner :class:`~lemmata.provers.runner.Worker` that proves by refinement search."""

    def __init__(
        self,
        verifier: Verifier,
        config: SearchConfig,
        *,
        scorer: Scorer | None = None,
        model: ChatModel | None = None,
        trace_dir: Path | None = None,
        on_attempt: Any = None,
    ) -> None:
        self.verifier = verifier
        self.backend = verifier.backend
        self.config = config
        self.scorer = scorer
        self.model = model
        self.trace_dir = trace_dir
        self.on_attempt = on_attempt

    def prove(self, theorem: Theorem, timeout: float) -> TheoremResult:
        from lemmata.provers.refine.search import search

        policy = None
        draft = theorem.proof
        if self.model is not None:
            from lemmata.provers.refine.model_policy import ModelPolicy

            policy = ModelPolicy(self.model)
            if draft is None:
                draft = policy.draft(theorem.statement, theorem.header, self.backend)
        trace = self.trace_dir / trace_name(theorem.id) if self.trace_dir else None
        if trace is not None and trace.exists():
            trace.unlink()  # a rerun of this theorem replaces its trace
        r = search(
            self.verifier,
            theorem.statement,
            theorem.header,
            id=theorem.id,
            draft=draft,
            policy=policy,
            config=self.config,
            scorer=self.scorer,
            trace=trace,
            on_attempt=self.on_attempt,
        )
        details: dict[str, Any] = {
            "method": "refine",
            "calls": r.calls,
            "vacuous": r.vacuous,
            "header_additions": r.header_additions,
            "nodes": r.nodes,
            "failure_counts": r.failure_counts,
        }
        if trace is not None:
            details["trace"] = str(trace)
        if policy is not None:
            details["model_calls"] = policy.stats.calls
        return TheoremResult(
            theorem.id,
            r.status,
            r.proof,
            r.failure.to_dict() if r.failure else None,
            round(r.elapsed_s, 4),
            r.attempts,
            self.backend,
            details,
        )

    def close(self) -> None:
        self.verifier.close()


def refine_worker(
    backend: str,
    settings: dict[str, Any],
    config: SearchConfig,
    *,
    value_model: Path | None,
    with_model: bool,
    trace_dir: Path | None,
) -> RefineWorker:
    """A :class:`RefineWorker` built where it runs (a Ray actor's node) from picklable parts:
    the settings as values (:func:`~lemmata.provers.ray_workers.remote_settings`) and the
    value model's path."""
    from lemmata.llm import get_model
    from lemmata.provers import make_verifier
    from lemmata.provers.ray_workers import node_settings
    from lemmata.provers.refine.value import load_scorer

    node = node_settings(settings)
    return RefineWorker(
        make_verifier(backend, node),
        config,
        scorer=load_scorer(value_model) if value_model is not None else None,
        model=get_model(node) if with_model else None,
        trace_dir=trace_dir,
    )


def prove_refine(
    *,
    settings: Settings,
    theorems: list[Theorem],
    problems: list[Any],
    file: Path,
    out: Path,
    backend: str,
    workers: int,
    budget_calls: int,
    budget_seconds: float,
    trace_dir: Path | None,
    resume: bool,
    as_json: bool,
    value: bool = True,
    ray: str | None = None,
) -> None:
    """The ``--method refine`` branch of ``lemmata prove``; ``ray`` as ``--ray`` takes it."""
    import contextlib
    import functools

    from rich.markup import escape

    from lemmata.llm import get_model
    from lemmata.provers import make_verifier
    from lemmata.provers.refine.search import SearchConfig
    from lemmata.provers.refine.value import DEFAULT_MODEL, load_scorer
    from lemmata.provers.report import print_summary
    from lemmata.provers.runner import run_batch

    config = SearchConfig(budget_calls=budget_calls, budget_seconds=budget_seconds)
    if ray is None:
        make_verifier(backend, settings).close()  # a missing Coq/Lean fails here, once
    scorer = None
    if value and backend == "coq" and DEFAULT_MODEL.exists():
        scorer = load_scorer(DEFAULT_MODEL)
    model = get_model(settings)
    err = console(stderr=True)
    spent = {"calls": 0}
    progress = progress_bar(
        "refine", err, disable=as_json and not err.is_terminal, fields=("tally",)
    )
    tally: dict[str, int] = {}

    def line() -> str:
        done = sum(tally.values())
        return f"solved {tally.get('proved', 0)}/{done}, verifier calls {spent['calls']}"

    cluster: Any = contextlib.nullcontext()
    if ray is not None:
        from lemmata.provers.ray_workers import RayCluster, remote_settings

        cluster = RayCluster(ray, workers=workers)
    with cluster, progress:
        task = progress.add_task("refine", total=None, tally="")

        def started(n: int) -> None:
            progress.update(task, total=n)

        def finished(result: TheoremResult) -> None:
            tally[result.status] = tally.get(result.status, 0) + 1
            spent["calls"] += int(result.details.get("calls", 0))
            progress.update(task, advance=1, tally=line())

        def local() -> RefineWorker:
            return RefineWorker(
                make_verifier(backend, settings),
                config,
                scorer=scorer,
                model=model,
                trace_dir=trace_dir,
            )

        make: Any = local
        if ray is not None:
            build = functools.partial(
                refine_worker,
                backend,
                remote_settings(settings),
                config,
                value_model=DEFAULT_MODEL.resolve() if scorer else None,
                with_model=model is not None,
                trace_dir=trace_dir.resolve() if trace_dir else None,
            )
            make = cluster.factory(build, backend)
        summary = run_batch(
            theorems,
            make,
            out=out,
            workers=workers,
            timeout=budget_seconds,
            resume=resume,
            on_result=finished,
            on_start=started,
        )
    report = summary.to_dict() | {
        "backend": backend,
        "method": "refine",
        "out": str(out),
        "budget_calls": budget_calls,
        "budget_seconds": budget_seconds,
        "value_model": str(DEFAULT_MODEL) if scorer else None,
        "model": model.name if model else None,
        "trace_dir": str(trace_dir) if trace_dir else None,
        "ray": ray,
        "input_problems": [str(p) for p in problems],
    }
    if as_json:
        typer.echo(json.dumps(report))
        return
    screen = console()
    print_summary(
        summary,
        screen,
        title=f"{file.name}: refine on {backend}, {budget_calls} calls / {budget_seconds:g} s "
        f"a theorem"
        + (f", repairs from {model.name}" if model else ", offline")
        + (f", on Ray ({ray})" if ray else ""),
        bad_lines=len(problems),
        out=str(out),
    )
    if trace_dir is not None:
        screen.print(
            f"traces: {escape(str(trace_dir))} (draw one: lemmata prove-draw TRACE)",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    """Add ``prove-train`` to the ``lemmata`` app."""

    @app.command("prove-train")
    def prove_train(
        traces: Annotated[
            Path,
            typer.Argument(help="A trace file or a folder of them (lemmata prove --trace-dir)."),
        ],
        out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the model.")],
        epochs: Annotated[int, typer.Option("--epochs", min=1, max=1000)] = 40,
        seed: Annotated[int, typer.Option("--seed")] = 0,
    ) -> None:
        """Train the refinement search's value model on search traces."""
        from lemmata.provers.refine.cli_draw import load_traces
        from lemmata.provers.refine.value import train

        found = load_traces(traces, "TRACES")
        with progress_bar("train", console(stderr=True), transient=True) as progress:
            task = progress.add_task("train", total=epochs)
            try:
                _, report = train(
                    found,
                    out,
                    epochs=epochs,
                    seed=seed,
                    on_epoch=lambda e, loss: progress.update(task, advance=1),
                )
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="TRACES") from None
        typer.echo(str(report))
