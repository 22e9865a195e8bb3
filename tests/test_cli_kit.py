"""The CLI's wiring: capabilities add their commands through one entry-point group, reach the
settings through ``lemmata.cli_kit`` only, and share one progress bar."""

from __future__ import annotations

import ast
import io
import textwrap
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from lemmata.cli_kit import CliState, progress_bar, register_commands, settings_of

ROOT = Path(__file__).resolve().parents[1]
CAPABILITIES = ("memory", "provers", "gui", "agents", "environments")


def test_no_capability_imports_the_cli_module() -> None:
    """Commands reach the run's settings through cli_kit, never the CLI's internals."""
    offenders = []
    for folder in CAPABILITIES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                if "lemmata.cli" in names and isinstance(node, ast.stmt):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_every_capability_adds_its_commands() -> None:
    app = typer.Typer()
    warnings: list[str] = []
    added = register_commands(app, warnings.append)
    assert warnings == []
    assert {"memory", "provers", "gui", "research", "experience"} <= set(added)
    from lemmata.cli import app as root

    text = CliRunner().invoke(root, ["--help"], env={"COLUMNS": "200"}).output
    for command in ("prove", "ground", "research", "experience", "memory"):
        assert command in text, command


def test_a_broken_command_plugin_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "demo_cli").mkdir(parents=True)
    (site / "demo_cli" / "__init__.py").write_text(
        textwrap.dedent("""
        import typer

        def register(app):
            @app.command("hello")
            def hello(ctx: typer.Context) -> None:
                from lemmata.cli_kit import settings_of
                typer.echo(f"hello {settings_of(ctx).verifier_timeout_s:g}")
        """)
    )
    info = site / "demo_cli-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-cli\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[lemmata.cli_commands]\nhello = demo_cli:register\nbroken = demo_cli:MISSING\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("LEMMATA_VERIFIER_TIMEOUT_S", "7")
    app = typer.Typer()

    @app.callback()
    def root(ctx: typer.Context) -> None:
        ctx.obj = CliState()

    warnings: list[str] = []
    added = register_commands(app, warnings.append)
    assert "hello" in added and "broken" not in added
    assert len(warnings) == 1 and "'broken'" in warnings[0]
    run = CliRunner().invoke(app, ["hello"])
    assert run.exit_code == 0, run.output
    assert run.output.strip() == "hello 7"  # the settings of the run, through cli_kit


def test_settings_of_a_command_app_run_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEMMATA_VERIFIER_TIMEOUT_S", "9")
    app = typer.Typer()

    @app.command()
    def show(ctx: typer.Context) -> None:
        typer.echo(settings_of(ctx).verifier_timeout_s)

    run = CliRunner().invoke(app, [])
    assert run.exit_code == 0 and run.output.strip() == "9.0"


def test_progress_bar_shows_counts_fields_and_formats() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160, color_system=None)
    with progress_bar(
        "train {task.fields[method]}",
        console,
        count="{task.completed:.0f}/{task.total:.0f} updates",
        fields=("last", "{task.fields[records]} states"),
    ) as progress:
        task = progress.add_task("t", total=10, method="iwm", last="step 3", records=12)
        progress.update(task, completed=3)
        progress.refresh()
    text = out.getvalue()
    assert "train iwm" in text and "3/10 updates" in text
    assert "step 3" in text and "12 states" in text
