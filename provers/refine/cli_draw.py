"""``lemmata prove-draw TRACE [--id ID ...] [--out DIR]``: draw proof-search trees to PNG.

TRACE is a trace file written by the refinement search (``search(..., trace=...)``) or a folder
of them; each search (or each one named by ``--id``) is drawn to ``DIR/<id>.png`` and its path
printed, one per line. A missing file, a file that is not a trace (the message names the file
and line) or an unknown id exits with status 2 and one line saying what to fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from lemmata.provers.refine.trace import ProblemTrace

__all__ = ["load_traces", "register"]


def _prove_draw(
    trace: Annotated[
        Path,
        typer.Argument(
            metavar="TRACE", help="A search trace (JSONL), or a folder of them.", show_default=False
        ),
    ],
    ids: Annotated[
        list[str] | None,
        typer.Option(
            "--id",
            metavar="ID",
            help="Draw only this problem (repeat for more).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="DIR", help="Folder for the PNGs (default: beside the trace)."
        ),
    ] = None,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", metavar="N", min=10, help="Most boxes in one picture.")
    ] = 400,
) -> None:
    """Draw the proof-search tree of each problem in a trace to PNG."""
    from lemmata.provers.refine.draw import draw_trees, select_traces

    traces = load_traces(trace, "TRACE")
    try:
        select_traces(traces, ids, trace)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--id") from None
    # Checked above, so that each mistake is reported against the argument that made it;
    # drawing takes far longer than reading the file again.
    folder = out if out is not None else (trace if trace.is_dir() else trace.parent)
    for png in draw_trees(trace, folder, ids, max_nodes=max_nodes):
        typer.echo(str(png))


def load_traces(path: Path, hint: str) -> list[ProblemTrace]:
    """The searches recorded in ``path`` (a trace file or a folder of them); a missing path,
    a line that is not a trace record, or no search at all is a usage error naming it."""
    from lemmata.provers.refine.trace import read_trace

    if not path.exists():
        raise typer.BadParameter(f"no such file or folder: {path}", param_hint=hint)
    try:
        found = read_trace(path)
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise typer.BadParameter(str(exc), param_hint=hint) from None
    if not found:
        raise typer.BadParameter(f"no searches recorded in {path}", param_hint=hint)
    return found


def register(app: typer.Typer) -> None:
    """Add ``prove-draw`` to ``app`` (the ``lemmata`` CLI)."""
    app.command("prove-draw")(_prove_draw)
