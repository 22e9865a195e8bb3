"""``lemmata shell``: its commands through ``Shell.handle``, and the real REPL through a pty."""

from __future__ import annotations

import io
import json
import os
import sys
import textwrap
from pathlib import Path

import pexpect
import pytest
from rich.console import Console
from scripted_server import ScriptedOpenAIServer

from lemmata.commands import ShellCommand
from lemmata.llm import ScriptedModel
from lemmata.shell import Shell, load_commands


def make_shell(settings, **kw) -> tuple[Shell, io.StringIO]:
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None, force_terminal=False)
    return Shell(settings, console=console, **kw), buf


def test_help_lists_builtins_and_entry_point_commands(settings) -> None:
    shell, out = make_shell(settings)
    shell.handle("help")
    text = out.getvalue()
    for name in (":model", ":quit", ":usage", "doctor [--deep] [--ping]"):
        assert name in text
    out.truncate(0)
    shell.handle("help doctor")
    assert "installed" in out.getvalue()


def test_chat_with_a_scripted_model_is_labelled(settings) -> None:
    model = ScriptedModel(["Hello from the script"])
    shell, out = make_shell(settings, model=model, commands=[])
    shell.handle("hi there")
    assert "[scripted] Hello from the script" in out.getvalue()
    assert [m["role"] for m in shell.conversation] == ["system", "user", "assistant"]
    shell.handle(":usage")
    assert "1 calls" in out.getvalue() and "estimated" in out.getvalue()
    shell.handle(":reset")
    assert shell.conversation == []


def test_chat_without_a_model_says_how_to_set_one(settings) -> None:
    shell, out = make_shell(settings, commands=[])
    shell.handle("what is a lemma?")
    assert "error[model_not_configured]" in out.getvalue()
    assert "LEMMATA_MODEL" in out.getvalue()


def test_model_switch_is_checked_and_keeps_the_old_model_on_failure(settings) -> None:
    model = ScriptedModel(["x"])
    shell, out = make_shell(settings, model=model, commands=[])
    shell.handle(":model no-such-model-xyz")
    assert "error[unknown_model]" in out.getvalue()
    assert shell.model is model
    with ScriptedOpenAIServer([{"content": "real path"}]) as srv:
        shell.settings = shell.settings.with_overrides(api_base=srv.base_url)
        shell.handle(":model openai/scripted-model")
        assert shell.model is not None and shell.model.name == "openai/scripted-model"
        shell.handle("hello")
    assert "real path" in out.getvalue() and "[scripted] real path" not in out.getvalue()
    shell.handle(":model off")
    assert shell.model is None


def test_a_failing_command_does_not_end_the_session(settings) -> None:
    def boom(ctx, args):
        raise RuntimeError("bug")

    shell, out = make_shell(settings, commands=[ShellCommand("boom", "fails", boom)])
    shell.handle("boom now")
    assert "internal error" in out.getvalue() and shell.running
    shell.handle(":quit")
    assert not shell.running


def test_multi_line_input(settings) -> None:
    shell, _ = make_shell(settings, commands=[])
    lines = iter(["first \\", "second", '"""', "a", "b", '"""'])
    assert shell.read_input(lambda _p: next(lines)) == "first \nsecond"
    assert shell.read_input(lambda _p: next(lines)) == "a\nb"

    def eof(_p):
        raise EOFError

    assert shell.read_input(eof) is None


def test_plugin_commands_load_from_entry_points(tmp_path, monkeypatch) -> None:
    """A package that declares commands under `lemmata.shell_commands` adds them; a broken
    declaration is a warning, not a crash."""
    site = tmp_path / "site"
    (site / "demo_plugin").mkdir(parents=True)
    (site / "demo_plugin" / "__init__.py").write_text(
        textwrap.dedent("""
        from lemmata.commands import ShellCommand
        COMMANDS = [ShellCommand("greet", "say hello", lambda ctx, args: ctx.console.print("hello " + args))]
    """)
    )
    info = site / "demo_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[lemmata.shell_commands]\ngreet = demo_plugin:COMMANDS\nbroken = demo_plugin:MISSING\n"
    )
    monkeypatch.syspath_prepend(str(site))
    warnings: list[str] = []
    names = [c.name for c in load_commands(warnings.append)]
    assert "greet" in names and "doctor" in names
    assert len(warnings) == 1 and "broken" in warnings[0]


# -- the real REPL, through a pseudo-terminal ---------------------------------------------------


@pytest.fixture
def repl(tmp_path: Path):
    exe = Path(sys.executable).with_name("lemmata")
    env = {**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "120"}
    child = pexpect.spawn(
        str(exe), ["shell"], env=env, encoding="utf-8", timeout=60, dimensions=(40, 120)
    )
    child.expect("Type 'help'")
    child.expect("lemmata> ")
    yield child
    if child.isalive():
        child.terminate(force=True)


def test_repl_session_in_a_pty(repl, tmp_path: Path) -> None:
    repl.send("hel\t")  # Tab completes the command name
    repl.expect("help")
    repl.sendline("")
    repl.expect("leave the shell")  # the last line of the help table
    repl.expect("lemmata> ")
    repl.sendline(":model")
    repl.expect(r"model: none \(offline\)")
    repl.expect("lemmata> ")
    repl.send("doctor --\t\t")  # Tab Tab lists a command's arguments
    repl.expect("--deep +--ping")
    repl.sendcontrol("u")
    repl.sendline(":settings \\")  # a continued line is read as one input
    repl.expect(r"\.\.\.\.\.\.\. ")
    repl.sendline("")
    repl.expect("torch_threads")
    repl.expect("lemmata> ")
    repl.sendline("tell me a joke")
    repl.expect("model_not_configured")
    repl.expect("lemmata> ")
    repl.sendline(":quit")
    repl.expect(pexpect.EOF)
    repl.close()
    assert repl.exitstatus == 0
    history = Path(os.environ["LEMMATA_DATA_DIR"]) / "shell_history"
    assert ":model" in history.read_text()


def test_repl_ends_on_ctrl_d(repl) -> None:
    repl.sendeof()
    repl.expect(pexpect.EOF)
    repl.close()
    assert repl.exitstatus == 0


def test_prover_commands_in_the_shell(settings, coqtop_path, tmp_path) -> None:
    shell, out = make_shell(settings)
    shell.handle("check Theorem t : forall n, n + 0 = n. induction n; simpl; auto.")
    assert "proved" in out.getvalue()
    shell.handle("check Theorem u : 1 = 2. reflexivity.")
    assert "type_mismatch" in out.getvalue() and "⊢ 1 = 2" in out.getvalue()
    suite = tmp_path / "s.jsonl"
    suite.write_text('{"id": "a", "statement": "Theorem a : True."}\nnot json\n')
    shell.handle(f"prove {suite}")
    text = out.getvalue()
    assert "s.jsonl:2: not JSON" in text and "results:" in text
    assert (tmp_path / "s.results.jsonl").read_text().count('"proved"') == 1
    shell.handle(f"prove {suite}")  # again: the results are kept, not overwritten
    assert "already holds results" in out.getvalue()
    shell.handle("prove --workers 2")
    assert "error[usage]" in out.getvalue() and "required: file" in out.getvalue()


def test_prove_refine_in_the_shell_on_a_folder_of_v_files(settings, coqtop_path, tmp_path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "square.v").write_text(
        "Require Import Reals.\nOpen Scope R_scope.\n\n"
        "Theorem square_pos : forall x : R, 0 < x -> x * x > 0.\nProof.\nAdmitted.\n"
    )
    (folder / "junk.v").write_text("(* never closed\n")
    traces = tmp_path / "traces"
    shell, out = make_shell(settings)
    shell.handle(
        f"prove {folder} --method refine --budget-calls 20 --trace-dir {traces} --no-value"
    )
    text = out.getvalue()
    assert "junk.v:1: not Coq source" in text  # the bad file is named, the rest runs
    assert f"traces: {traces}" in text and "results:" in text
    rows = [json.loads(line) for line in (tmp_path / "in.results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["square"]
    assert rows[0]["status"] == "proved" and rows[0]["method"] == "refine"
    assert 1 <= rows[0]["calls"] <= 20
    assert (traces / "square.jsonl").is_file()
    shell.handle(f"prove {folder} --method refine --budget-calls 0 --overwrite")
    assert (
        "error[usage]" in out.getvalue() and "--budget-calls must be at least 1" in out.getvalue()
    )
    shell.handle(f"prove {folder / 'square.v'} --backend lean")
    assert "is Coq: use --backend coq" in out.getvalue()
    shell.handle(f"prove {folder} --method search")
    assert "invalid choice: 'search'" in out.getvalue()
