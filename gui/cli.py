"""``lemmata ground``, ``lemmata ground-eval`` and ``lemmata ground-generate``.

``lemmata ground IMAGE "instruction"`` prints where to click (``--json``: ``{"point", "bbox",
"score", "abstained", "anchors"}`` in image pixels) and can draw the fused heatmap over the
screenshot (``--heatmap out.png``). ``lemmata ground-eval DIR --format screenspot|screenspot-pro``
prints accuracy overall, by type, for negatives and by target size. ``lemmata ground-generate
DIR`` renders screens with headless Chromium in ScreenSpot-Pro format. ``lemmata gui
train-icons`` builds the icon library from the registries and trains the icon encoder on it
(whole sets held out for evaluation). Bad input exits with status 2 and one line naming what to
fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from lemmata.cli_kit import console as make_console
from lemmata.cli_kit import progress_bar, settings_of

__all__ = ["register"]


def _grounder(
    ctx: typer.Context, anchors: str | None = None, caption_with_model: bool = False, **kwargs: Any
) -> Any:
    from lemmata.errors import UsageError
    from lemmata.gui.ground import Grounder

    settings = settings_of(ctx)
    model = None
    if caption_with_model:
        from lemmata.llm import get_model

        model = get_model(settings, required=True, feature="--caption-with-model")
    chosen = Grounder.offline_anchors(settings, caption_model=model)
    if anchors:
        names = [a.strip() for a in anchors.split(",") if a.strip()]
        known = {a.name for a in chosen}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UsageError(
                f"--anchors: unknown {', '.join(unknown)}; offline anchors: {', '.join(sorted(known))}"
            )
        chosen = [a for a in chosen if a.name in names]
    return Grounder(chosen, settings=settings, **kwargs)


def _ground(
    ctx: typer.Context,
    image: Annotated[Path, typer.Argument(help="A screenshot (PNG, JPEG, WebP).")],
    instruction: Annotated[str, typer.Argument(help='What to find, e.g. "click Submit".')],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    heatmap: Annotated[
        Path | None, typer.Option("--heatmap", help="Draw the fused heatmap over the image here.")
    ] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Abstain below this score.")
    ] = None,
    no_zoom: Annotated[
        bool, typer.Option("--no-zoom", help="Skip the crop-and-zoom pass.")
    ] = False,
    anchors: Annotated[
        str | None, typer.Option("--anchors", help="Use only these anchors: ocr,icons.")
    ] = None,
    caption_with_model: Annotated[
        bool,
        typer.Option(
            "--caption-with-model",
            help="Caption icons with the configured (vision-capable) model, not the icon set.",
        ),
    ] = False,
) -> None:
    """Ground an instruction to a point on a screenshot (or abstain)."""
    from lemmata.gui.image import load_image
    from lemmata.gui.instruction import parse_instruction

    _check_threshold(threshold)

    img = load_image(image)  # bad input fails here, before any model loads
    parse_instruction(instruction)
    grounder = _grounder(ctx, anchors, caption_with_model, zoom=not no_zoom)
    g = grounder.ground(img, instruction, threshold=threshold)
    if heatmap is not None:
        from lemmata.gui.draw import draw_grounding

        heatmap.parent.mkdir(parents=True, exist_ok=True)
        draw_grounding(img, g).save(heatmap)
    if as_json:
        typer.echo(json.dumps(g.to_dict()))
        return
    console = make_console()
    if g.abstained:
        console.print(f"abstained: nothing matches (score {g.score:.2f})")
    else:
        x, y = g.point or (0.0, 0.0)
        box = f" in box {[round(v) for v in g.bbox]}" if g.bbox else ""
        console.print(f"click ({x:.0f}, {y:.0f}){box}, score {g.score:.2f}")
    for name, a in g.anchors.items():
        console.print(f"  {name:10} {a['score']:.2f}  {a['label'] or ''}", markup=False)
    if heatmap is not None:
        console.print(f"heatmap: {heatmap}")


def _ground_eval(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="A folder with annotations.json and images/.")],
    fmt: Annotated[
        str, typer.Option("--format", help="screenspot (bbox x, y, w, h) or screenspot-pro.")
    ] = "screenspot-pro",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="At most N items.")] = None,
    anchors: Annotated[
        str | None, typer.Option("--anchors", help="Use only these anchors: ocr,icons.")
    ] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="Abstain below this score.")
    ] = None,
) -> None:
    """Accuracy of the grounder on a ScreenSpot-style folder."""
    from lemmata.errors import UsageError
    from lemmata.gui.datasets import evaluate, load_annotations

    _check_threshold(threshold)
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    items = load_annotations(folder, fmt)[:limit]
    grounder = _grounder(ctx, anchors)
    err = make_console(stderr=True)
    with progress_bar(
        "ground-eval", err, transient=True, disable=as_json or not err.is_terminal
    ) as progress:
        task = progress.add_task("eval", total=len(items))
        result = evaluate(
            items,
            lambda it: grounder.ground(it.image, it.instruction, threshold=threshold),
            progress=lambda k, n: progress.update(task, completed=k),
        )
    if as_json:
        typer.echo(json.dumps(result.to_dict()))
        return
    console = make_console()

    def pct(v: float | None) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    console.print(f"{result.n} items: overall {pct(result.overall)}")
    for key in ("text", "icon", "negative"):
        console.print(f"  {key:9} {pct(getattr(result, key))}  ({result.counts.get(key, 0)} items)")
    for size, acc in result.by_size.items():
        console.print(f"  {size:9} {acc:.3f}  ({result.counts.get(size, 0)} items)")
    console.print(f"{result.seconds_per_query:.2f} s per query")


def _ground_generate(
    folder: Annotated[Path, typer.Argument(help="Where to write annotations.json and images/.")],
    n: Annotated[int, typer.Option("--n", help="Number of screens.")] = 40,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a data set already in DIR.")
    ] = False,
) -> None:
    """Render generated screens (headless Chromium) with instructions, ScreenSpot-Pro format."""
    from lemmata.errors import UsageError
    from lemmata.gui.synthetic import generate

    if n < 1:
        raise UsageError("--n must be at least 1")
    err = make_console(stderr=True)
    path = generate(
        folder,
        n=n,
        seed=seed,
        overwrite=overwrite,
        progress=lambda k, total: err.print(f"screen {k}/{total}", end="\r"),
    )
    items = json.loads(path.read_text())
    make_console().print(f"{len(items)} instructions on {n} screens: {path}")


def _check_threshold(threshold: float | None) -> None:
    from lemmata.errors import UsageError

    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise UsageError(f"--threshold must lie in [0, 1] (scores do), not {threshold}")


def _train_icons(
    ctx: typer.Context,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Where to write the weights (default: DATA_DIR/icon_encoder.pt)."
        ),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option("--cache", help="The icon sets' cache (default: DATA_DIR/icon-library)."),
    ] = None,
    steps: Annotated[int, typer.Option("--steps", help="Training steps.")] = 1500,
    time_limit: Annotated[
        float,
        typer.Option("--time-limit", help="Minutes after which training ends, steps left or not."),
    ] = 25.0,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            "--checkpoint", help="Also write the weights here every few minutes while training."
        ),
    ] = None,
    held_out: Annotated[
        str | None,
        typer.Option(
            "--held-out", help="Sets kept out of training (default: lucide,feather,octicons)."
        ),
    ] = None,
    sets: Annotated[
        str | None, typer.Option("--sets", help="Sets to use (default: all known).")
    ] = None,
    start: Annotated[
        Path | None,
        typer.Option(
            "--start",
            help="Weights to train on from (e.g. the shipped encoder), instead of from scratch.",
        ),
    ] = None,
    toolbar_share: Annotated[
        float,
        typer.Option(
            "--toolbar-share",
            help="Share of views drawn as a real toolbar shows a glyph (small, on a plate, off "
            "centre), 0 to 1.",
        ),
    ] = 0.0,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate.")] = 2e-3,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Build the icon library (npm and PyPI sets) and train the icon encoder on 2 CPU threads."""
    from lemmata.embeddings import get_embedder
    from lemmata.errors import UsageError
    from lemmata.gui.icon_library import HELD_OUT, SETS
    from lemmata.gui.icon_model import TrainConfig, load_encoder
    from lemmata.gui.icon_train import train_icons

    if steps < 1:
        raise UsageError(f"--steps must be at least 1, not {steps}")
    if not time_limit > 0:
        raise UsageError(f"--time-limit must be a positive number of minutes, not {time_limit}")
    if not 0.0 <= toolbar_share <= 1.0:
        raise UsageError(f"--toolbar-share must lie in [0, 1] (it is a share), not {toolbar_share}")
    if not 0.0 < lr < 1.0:
        raise UsageError(f"--lr must lie in (0, 1), not {lr}")
    start_encoder = load_encoder(start) if start is not None else None  # refused if unreadable
    chosen = tuple(_names(sets)) if sets else tuple(SETS)
    kept_out = tuple(_names(held_out)) if held_out is not None else HELD_OUT
    unknown = sorted(set(chosen + kept_out) - set(SETS))
    if unknown:
        raise UsageError(f"unknown icon sets {', '.join(unknown)}: known are {', '.join(SETS)}")
    settings = settings_of(ctx)
    err = make_console(stderr=True)
    report = train_icons(
        cache or settings.data_dir / "icon-library",
        out or settings.data_dir / "icon_encoder.pt",
        embedder=get_embedder(settings),
        sets=chosen,
        held_out=kept_out,
        config=TrainConfig(
            steps=steps,
            time_limit_s=time_limit * 60,
            checkpoint=checkpoint,
            toolbar_share=toolbar_share,
            lr=lr,
        ),
        progress=lambda m: err.print(m, markup=False),
        start=start_encoder,
    )
    if as_json:
        typer.echo(json.dumps(report))
        return
    console = make_console()
    console.print(f"weights: {report['weights']} ({report['steps']} steps, {report['seconds']} s)")
    for group in ("zero_shot_seen", "zero_shot_held_out"):
        for name, acc in report[group].items():
            console.print(f"  {group[10:]:8} {name:12} zero-shot top-1 {acc:.3f}")


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def register(app: typer.Typer) -> None:
    app.command("ground")(_ground)
    app.command("ground-eval")(_ground_eval)
    app.command("ground-generate")(_ground_generate)
    gui = typer.Typer(help="GUI grounding: the icon encoder.", no_args_is_help=True)
    gui.command("train-icons")(_train_icons)
    app.add_typer(gui, name="gui")
