"""``lemmata experience ...``: collect early experience, export the training files, check
reflections, train the local policies and evaluate them.

``lemmata experience collect ENV --out DIR`` walks the expert trajectories of ENV's train
tasks and tries K alternatives at each state (DIR/rollouts.jsonl, resumable with
``--resume``), then writes the three training files (expert, IWM, reflection) beside it.
Bad input exits with status 2 and one line naming what to fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from lemmata.cli_kit import console, progress_bar, settings_of

__all__ = ["app", "register"]

app = typer.Typer(
    help="Early experience: learn from the outcomes of the agent's own actions, with no reward.",
    no_args_is_help=True,
)


def register(parent: typer.Typer) -> None:
    """Add ``experience ...`` to ``parent`` (the ``lemmata`` CLI)."""
    parent.add_typer(app, name="experience")


def _model(ctx: typer.Context, offline: bool) -> Any:
    """The configured model, or ``None`` offline or when none is configured."""
    if offline:
        return None

    settings = settings_of(ctx)
    if not getattr(settings, "model", None):
        return None
    from lemmata.llm import get_model

    return get_model(settings)


def _names(games: str | None) -> list[str] | None:
    if not games:
        return None
    return [g.strip() for g in games.split(",") if g.strip()]


def _options(pairs: list[str] | None) -> dict[str, Any]:
    from lemmata.errors import UsageError

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option takes KEY=VALUE, not {pair!r}")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


@app.command("collect")
def _collect(
    ctx: typer.Context,
    env: Annotated[str, typer.Argument(help="textworld-express, scienceworld or coq-tactics.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The run's folder.")],
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Task (game) types, comma-separated (default all)."),
    ] = None,
    demos: Annotated[
        int | None, typer.Option("--demos", help="Expert trajectories per task type.")
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Alternatives tried at each expert state.")] = 4,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the alternatives' draw.")] = 0,
    workers: Annotated[int, typer.Option("--workers", help="Environments in parallel.")] = 1,
    ray: Annotated[
        str | None,
        typer.Option("--ray", help="Run on Ray actors: local, auto, or a cluster address."),
    ] = None,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", help="Cap each expert trajectory's length.")
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", help="An environment option KEY=VALUE (JSON values), repeatable."),
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in --out.")] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Start over, replacing the run in --out.")
    ] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use no model even when one is configured.")
    ] = False,
    no_export: Annotated[
        bool, typer.Option("--no-export", help="Write rollouts.jsonl only, not the training files.")
    ] = False,
    fmt: Annotated[
        str, typer.Option("--format", help="messages (TRL, OpenAI) or prompt-completion (TRL).")
    ] = "messages",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Roll out expert trajectories with K alternatives per state, then write the data files."""
    from lemmata.agents.experience.collection import CollectProgress, collect

    model = _model(ctx, offline)
    propose = None
    if model is not None:
        from lemmata.agents.experience.llm import proposer

        propose = proposer(model)
    err = console(stderr=True)
    with progress_bar(
        "collect",
        err,
        count="{task.completed:.0f}/{task.total:.0f} tasks",
        fields=("{task.fields[records]} states, {task.fields[steps]} steps",),
        transient=True,
        disable=as_json or not err.is_terminal,
    ) as progress:
        bar = progress.add_task("collect", total=None, records=0, steps=0)

        def report(p: CollectProgress) -> None:
            progress.update(
                bar, total=p.total, completed=p.done, records=p.records, steps=p.env_steps
            )

        result = collect(
            env,
            out,
            names=_names(tasks),
            demos=demos,
            k=k,
            seed=seed,
            workers=workers,
            ray=ray,
            max_steps=max_steps,
            env_options=_options(option),
            propose=propose,
            resume=resume,
            overwrite=overwrite,
            progress=report,
        )
    exported = None
    if not no_export:
        exported = _export(result.rollouts, out, model, fmt, as_json)
    summary: dict[str, Any] = {
        "out": str(result.out_dir),
        "tasks": result.tasks,
        "records": result.records,
        "env_steps": result.env_steps,
        "steps_per_s": round(result.steps_per_s, 1),
        "failed": result.failed,
        "files": {k: str(v) for k, v in result.files.items()},
    }
    if exported is not None:
        summary["export"] = exported.to_dict()
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
        return
    con = console()
    con.print(result.summary(), markup=False)
    for task, reason in list(result.failed.items())[:10]:
        con.print(f"  stopped early: {task}: {reason}", markup=False)
    if exported is not None:
        con.print(exported.summary(), markup=False)
    con.print(f"rollouts: {result.rollouts}", markup=False)


def _export(rollouts: Path, out: Path, model: Any, fmt: str, quiet: bool) -> Any:
    from lemmata.agents.experience.data import export_sft

    err = console(stderr=True)
    with progress_bar(
        "reflections",
        err,
        count="{task.completed:.0f}/{task.total:.0f}",
        transient=True,
        disable=quiet or model is None or not err.is_terminal,
    ) as progress:
        bar = progress.add_task("reflections", total=None)

        def report(done: int, total: int) -> None:
            progress.update(bar, completed=done, total=total)

        return export_sft(rollouts, out, model=model, fmt=fmt, progress=report)  # type: ignore[arg-type]


@app.command("export")
def _export_files(
    ctx: typer.Context,
    rollouts: Annotated[Path, typer.Argument(help="A rollouts.jsonl written by collect.")],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder for the files (default: beside it).")
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="messages (TRL, OpenAI) or prompt-completion (TRL).")
    ] = "messages",
    offline: Annotated[
        bool, typer.Option("--offline", help="Templated reflections even when a model is set.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Write the expert, IWM and reflection training files from a rollouts.jsonl."""
    from lemmata.errors import UsageError

    if not rollouts.is_file():
        raise UsageError(f"no rollouts file at {rollouts}: run `lemmata experience collect` first")
    result = _export(rollouts, out or rollouts.parent, _model(ctx, offline), fmt, as_json)
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        console().print(result.summary(), markup=False)


@app.command("check")
def _check(
    file: Annotated[
        Path, typer.Argument(help="A reflection file (messages or prompt-completion).")
    ],
    rollouts: Annotated[
        Path | None,
        typer.Option("--rollouts", help="The rollouts it came from: also check concluded actions."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Flag leaked labels, "expert", narrated outcomes and wrong actions in reflections.

    Exits 0 when the file is clean and 1 when something was found.
    """
    from lemmata.agents.experience.reflect import check_reflections

    findings = check_reflections(file, rollouts=rollouts)
    if as_json:
        print(json.dumps([f.to_dict() for f in findings], indent=2))
    else:
        con = console()
        for f in findings:
            con.print(f"{file}:{f}", markup=False)
        con.print(
            f"{len(findings)} finding(s) in {file}" if findings else f"{file}: clean", markup=False
        )
    if findings:
        raise typer.Exit(1)


@app.command("train")
def _train(
    run: Annotated[Path, typer.Argument(help="A collect run's folder (or its rollouts.jsonl).")],
    method: Annotated[
        str, typer.Option("--method", help="il, iwm, sr, or all (one policy each).")
    ] = "all",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the weights and batches.")] = 0,
    updates: Annotated[
        int | None, typer.Option("--updates", help="Gradient updates (the same for every method).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Folder for policy-METHOD.pt (default: the run)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the written files as JSON.")
    ] = False,
) -> None:
    """Train the local torch policy by imitation (il), with implicit world modelling (iwm) or
    with the self-reflection objective (sr), on the same demonstrations and budget."""
    from lemmata.agents.experience.data import read_rollouts
    from lemmata.agents.experience.policy import METHODS, train_policy
    from lemmata.errors import UsageError

    methods = list(METHODS) if method == "all" else [m.strip() for m in method.split(",")]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise UsageError(f"--method: {', '.join(unknown)} is not one of il, iwm, sr, all")
    path = run / "rollouts.jsonl" if run.is_dir() else run
    if not path.is_file():
        raise UsageError(f"no rollouts at {path}: run `lemmata experience collect` first")
    steps = read_rollouts(path)
    folder = out or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    err = console(stderr=True)
    with progress_bar(
        "train {task.fields[method]}",
        err,
        count="{task.completed:.0f}/{task.total:.0f} updates, loss {task.fields[loss]:.3f}",
        transient=True,
        disable=as_json or not err.is_terminal,
    ) as progress:
        for m in methods:
            bar = progress.add_task("train", total=None, method=m, loss=0.0)

            def report(done: int, total: int, loss: float, bar: Any = bar) -> None:
                progress.update(bar, completed=done, total=total, loss=loss)

            policy = train_policy(steps, m, seed=seed, updates=updates, progress=report)  # type: ignore[arg-type]
            target = folder / f"policy-{m}.pt"
            policy.save(target)
            written[m] = str(target)
    if as_json:
        print(json.dumps(written, indent=2))
        return
    con = console()
    con.print(f"trained on {len(steps)} expert states from {path}", markup=False)
    for m, p in written.items():
        con.print(f"{m}: {p}", markup=False)


@app.command("eval")
def _eval(
    ctx: typer.Context,
    env: Annotated[str, typer.Argument(help="textworld-express, scienceworld or coq-tactics.")],
    policy: Annotated[
        list[Path] | None, typer.Option("--policy", "-p", help="A policy file, repeatable.")
    ] = None,
    model: Annotated[
        bool, typer.Option("--model", help="Also evaluate the configured model as the policy.")
    ] = False,
    split: Annotated[
        str, typer.Option("--split", help="Comma-separated splits: train, test-id, test-ood.")
    ] = "test-id,test-ood",
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Task (game) types, comma-separated (default all)."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="Task variations per type and split.")] = 20,
    max_steps: Annotated[int, typer.Option("--max-steps", help="Actions per episode.")] = 50,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", help="An environment option KEY=VALUE (JSON values), repeatable."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Success rate and invalid-action rate of policies on test splits."""
    from lemmata.agents.experience.policy import Policy, evaluate
    from lemmata.environments.text import SPLITS, open_environment
    from lemmata.errors import UsageError

    splits = [s.strip() for s in split.split(",") if s.strip()]
    bad = [s for s in splits if s not in SPLITS]
    if bad:
        raise UsageError(f"--split: {', '.join(bad)} is not one of {', '.join(SPLITS)}")
    policies: dict[str, Any] = {}
    for p in policy or []:
        policies[p.stem] = Policy.load(p)
    if model:
        from lemmata.agents.experience.llm import ModelPolicy

        chat = _model(ctx, False)
        if chat is None:
            raise UsageError("--model needs a configured model (set LEMMATA_MODEL or model = ...)")
        policies["model"] = ModelPolicy(chat).act
    if not policies:
        raise UsageError("nothing to evaluate: pass --policy FILE (repeatable) or --model")
    results: dict[str, dict[str, Any]] = {}
    err = console(stderr=True)
    with open_environment(env, **_options(option)) as environment:
        for s in splits:
            chosen = environment.tasks(s, names=_names(tasks), limit=limit)  # type: ignore[arg-type]
            for name, pol in policies.items():
                if not as_json:
                    err.print(f"evaluating {name} on {len(chosen)} {s} tasks", markup=False)
                r = evaluate(pol, environment, chosen, max_steps=max_steps)
                results.setdefault(name, {})[s] = r.to_dict()
    if as_json:
        print(json.dumps(results, indent=2))
        return
    from rich.table import Table

    table = Table(title=f"{env}: success (invalid actions)")
    table.add_column("policy")
    for s in splits:
        table.add_column(s, justify="right")
    for name, by_split in results.items():
        table.add_row(
            name,
            *(
                f"{by_split[s]['success_rate']:.0%} ({by_split[s]['invalid_rate']:.0%})"
                for s in splits
            ),
        )
    console().print(table)
