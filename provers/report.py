"""How a batch run is shown to a person: the summary table of ``lemmata prove`` and the shell."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from lemmata.provers.runner import RunSummary

__all__ = ["print_counts", "print_input_problems", "print_summary"]


def print_counts(console: Console, title: str, counts: dict[str, object]) -> None:
    """One row of counts under their names, as a table."""
    from rich.table import Table

    table = Table(title=title)
    for column in counts:
        table.add_column(column, justify="right")
    table.add_row(*(f"{v:.1f}" if isinstance(v, float) else str(v) for v in counts.values()))
    console.print(table)


def print_input_problems(console: Console, file: str, problems: list[tuple[int, str]]) -> None:
    """``FILE:LINE: message, skipped`` for each bad input line."""
    from rich.markup import escape

    for line, message in problems:
        console.print(
            f"[yellow]{escape(file)}:{line}[/]: {escape(message)}, skipped",
            highlight=False,
            soft_wrap=True,
        )


def print_summary(
    summary: RunSummary, console: Console, *, title: str, bad_lines: int, out: str
) -> None:
    """The counts of a run as a table, then its header errors and where the results are."""
    from rich.markup import escape

    c = summary.counts
    print_counts(
        console,
        title,
        {
            "theorems": summary.total,
            "proved": c["proved"],
            "failed": c["failed"],
            "timeout": c["timeout"],
            "error": c["error"],
            "skipped (done)": summary.skipped,
            "bad lines": bad_lines,
            "seconds": float(summary.elapsed_s),
        },
    )
    for header_error in summary.header_errors.values():
        console.print(f"[red]header error[/]: {escape(header_error)}", highlight=False)
    console.print(f"results: {escape(out)}", highlight=False)
