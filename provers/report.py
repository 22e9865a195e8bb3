"""How a batch run is shown to a person: the summary table of ``lemmata prove`` and the shell."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from lemmata.provers.runner import RunSummary

__all__ = ["print_summary"]


def print_summary(
    summary: RunSummary, console: Console, *, title: str, bad_lines: int, out: str
) -> None:
    """The counts of a run as a table, then its header errors and where the results are."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for column in (
        "theorems",
        "proved",
        "failed",
        "timeout",
        "error",
        "skipped (done)",
        "bad lines",
        "seconds",
    ):
        table.add_column(column, justify="right")
    c = summary.counts
    table.add_row(
        str(summary.total),
        str(c["proved"]),
        str(c["failed"]),
        str(c["timeout"]),
        str(c["error"]),
        str(summary.skipped),
        str(bad_lines),
        f"{summary.elapsed_s:.1f}",
    )
    console.print(table)
    for header_error in summary.header_errors.values():
        console.print(f"[red]header error[/]: {escape(header_error)}", highlight=False)
    console.print(f"results: {escape(out)}", highlight=False)
