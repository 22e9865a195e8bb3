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


def test_text_goes_to_the_agent_with_a_scripted_model_labelled(settings) -> None:
    model = ScriptedModel(["Hello from the script"])
    shell, out = make_shell(settings, model=model, commands=[])
    first = shell.thread
    shell.handle("hi there")
    assert "[scripted] Hello from the script" in out.getvalue()
    assert [m["role"] for m in shell.agent.history(first)] == ["user", "assistant"]
    shell.handle(":usage")
    assert "1 calls" in out.getvalue() and "estimated" in out.getvalue()
    shell.handle(":reset")  # a new thread; the old one is kept
    assert shell.thread != first and f"new thread {shell.thread}" in out.getvalue()
    assert shell.agent.history(shell.thread) == []
    assert len(shell.agent.history(first)) == 2


def test_offline_a_task_no_operation_serves_is_declined_with_the_reason(settings) -> None:
    shell, out = make_shell(settings, commands=[])
    shell.handle("Write a poem about the sea")
    text = out.getvalue()
    assert "I cannot route this task" in text and "no operation serves" in text
    assert "LEMMATA_MODEL" in text  # and how to get a model for open-ended requests


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


def spawn_shell(term: str = "dumb") -> tuple[pexpect.spawn, str]:
    """``lemmata shell`` in a pseudo-terminal, at its first prompt; and its thread's id."""
    exe = Path(sys.executable).with_name("lemmata")
    env = {**os.environ, "TERM": term, "NO_COLOR": "1", "COLUMNS": "120"}
    child = pexpect.spawn(
        str(exe),
        ["shell"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
        use_poll=True,  # the test process may hold descriptors past select's 1024
    )
    child.expect(r"thread (t-[0-9a-f]+)\. Type 'help'")
    thread = child.match.group(1)
    child.expect("lemmata> ")
    return child, thread


@pytest.fixture
def repl(tmp_path: Path):
    child, _thread = spawn_shell()
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
    repl.expect("I cannot route this task")
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


# -- plain text goes to the agent ---------------------------------------------------------------


def test_offline_a_coq_theorem_is_proved_by_the_agent(settings, coqtop_path) -> None:
    shell, out = make_shell(settings, commands=[])
    shell.handle("Prove in Coq: forall n : nat, n + 0 = n")
    text = out.getvalue()
    assert "Proved (refine, coq" in text and "proof:" in text
    history = shell.agent.history(shell.thread)
    assert history[0] == {"role": "user", "content": "Prove in Coq: forall n : nat, n + 0 = n"}
    assert history[-1]["role"] == "assistant" and "Proved" in history[-1]["content"]


def test_offline_a_statement_is_remembered_and_a_question_recalls_it(settings) -> None:
    shell, out = make_shell(settings, commands=[])
    shell.handle("Remember that my sister Ana lives in Porto.")
    assert "Remembered (episode ep_" in out.getvalue()
    out.truncate(0)
    out.seek(0)
    shell.handle("Where does Ana live?")
    text = out.getvalue()
    assert "Ana lives in Porto" in text
    assert "from ep_" in text  # the fact names the episode it came from


def test_a_destructive_operation_asks_first_and_no_leaves_memory_alone(settings) -> None:
    questions: list[str] = []
    answers = iter(["n", "y"])

    def ask(question: str) -> str:
        questions.append(question)
        return next(answers)

    shell, out = make_shell(settings, commands=[], ask=ask)
    shell.handle("Remember that my sister Ana lives in Porto.")
    shell.handle("Forget what I said about my sister.")
    assert questions == [
        "approve these destructive operations? memory_forget(about='my sister') [y/N] "
    ]
    assert "memory_forget was not approved" in out.getvalue()
    out.truncate(0)
    out.seek(0)
    shell.handle("Where does Ana live?")
    assert "Ana lives in Porto" in out.getvalue()  # denied: nothing was forgotten
    shell.handle("Forget what I said about my sister.")
    assert len(questions) == 2 and "Forgot " in out.getvalue()
    out.truncate(0)
    out.seek(0)
    shell.handle("Where does Ana live?")
    assert "Porto" not in out.getvalue()


def test_allow_lets_a_named_destructive_operation_run_without_asking(settings) -> None:
    questions: list[str] = []
    shell, out = make_shell(settings, commands=[], ask=lambda q: questions.append(q) or "n")
    shell.handle("Remember that my sister Ana lives in Porto.")
    shell.handle("Forget what I said about my sister.")
    assert "':allow memory_forget' in lemmata shell" in out.getvalue()  # the denial says how
    shell.handle(":allow memory_fetch")  # a typo is refused and changes nothing
    assert "not a destructive operation: memory_fetch" in out.getvalue()
    assert "memory_forget" in out.getvalue().rsplit("choose from", 1)[1]
    shell.handle(":allow memory_forget")
    assert "run without asking: memory_forget" in out.getvalue()
    shell.close()  # the agent made again on the next line keeps what was allowed
    shell.handle("Forget what I said about my sister.")
    assert len(questions) == 1 and "Forgot " in out.getvalue()
    shell.handle(":allow none")
    assert "every destructive operation asks first" in out.getvalue()


def test_approval_is_read_from_piped_input(run_cli) -> None:
    script = (
        "Remember that my sister Ana lives in Porto.\n"
        "Forget what I said about my sister.\n"
        "no\n"
        "Where does Ana live?\n"
    )
    result = run_cli("shell", input=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "memory_forget(about='my sister') [y/N]" in out
    assert "memory_forget was not approved" in out
    after = out.split("not approved", 1)[1]
    assert "Ana lives in Porto" in after


def test_threads_lists_them_and_resume_continues_one(settings) -> None:
    shell, out = make_shell(settings, commands=[])
    first = shell.thread
    shell.handle("Remember that the meeting is on Tuesday.")
    shell.handle(":new")
    second = shell.thread
    assert second != first
    shell.handle("Remember that the cat is called Miso.")
    out.truncate(0)
    out.seek(0)
    shell.handle(":threads")
    lines = out.getvalue().splitlines()
    assert any(
        line.startswith(f"* {second}") and "Remember that the cat is called Miso." in line
        for line in lines
    )
    assert any(
        line.startswith(f"  {first}") and "Remember that the meeting is on Tuesday." in line
        for line in lines
    )
    shell.handle(":resume t-")  # a prefix of both ids is ambiguous
    assert "could be" in out.getvalue() and shell.thread == second
    shell.handle(f":resume {first}")
    assert shell.thread == first and f"thread {first}" in out.getvalue()
    shell.handle("When is the meeting?")
    contents = [m["content"] for m in shell.agent.history(first) if m["role"] == "user"]
    assert contents == ["Remember that the meeting is on Tuesday.", "When is the meeting?"]
    assert "When is the meeting?" not in str(shell.agent.history(second))
    shell.handle(":resume t-nosuchthread")
    assert "no thread 't-nosuchthread'" in out.getvalue() and shell.thread == first


HARD = "Prove in Coq: forall a b c : nat, a > 0 -> b > 0 -> a*a*a + b*b*b <> c*c*c"


def test_ctrl_c_cancels_the_running_turn_only(coqtop_path) -> None:
    """In a real terminal: the status line shows the search; Ctrl-C cancels that turn (the
    shell says so and goes on), and the thread's history stays valid."""
    child, thread = spawn_shell(term="xterm")  # a terminal where rich draws the status line
    try:
        child.sendline(HARD)
        child.expect("provers_prove: refine: ")  # the status line follows the search
        child.sendintr()
        child.expect("cancelled", timeout=30)
        child.expect("lemmata> ")
        child.sendline("Remember that my sister Ana lives in Porto.")
        child.expect("Remembered")
        child.expect("lemmata> ")
        child.sendline(":threads")
        child.expect(rf"\* {thread} +\d+ messages  Prove in Coq")
        child.expect("lemmata> ")
        child.sendline(":quit")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
    from lemmata.agents.agent import Agent

    with Agent() as agent:
        history = agent.history(thread)
        messages = agent.graph.get_state({"configurable": {"thread_id": thread}}).values["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == [
        HARD,
        "Remember that my sister Ana lives in Porto.",
    ]
    cut = next(i for i, m in enumerate(history) if m["role"] == "user" and m["content"] != HARD)
    assert history[cut - 1] == {"role": "assistant", "content": "Cancelled."}
    assert "Remembered" in history[-1]["content"]
    # every tool call of the cancelled turn has its answer: the history can go to a model
    calls = [c["id"] for m in messages for c in getattr(m, "tool_calls", None) or []]
    answered = [getattr(m, "tool_call_id", None) for m in messages]
    assert calls and all(c in answered for c in calls)
