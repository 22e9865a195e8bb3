"""``lemmata experience ...`` run as a user runs it: collect, train and evaluate on the real
TextWorldExpress simulator, check reflection files, and the messages for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("textworld_express")


def test_collect_train_eval_from_the_command_line(run_cli, tmp_path: Path) -> None:
    run = tmp_path / "run"
    out = run_cli(
        "experience", "collect", "textworld-express", "--out", str(run),
        "--tasks", "simonsays", "--demos", "4", "--k", "2", "--json",
        timeout=300,  # a real collection: generous on a loaded machine
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["tasks"] == 4 and summary["records"] > 4 and not summary["failed"]
    counts = summary["export"]["counts"]
    assert counts["expert"] == summary["records"]
    assert counts["iwm"] > counts["expert"]  # the expert's transitions and the alternatives'
    assert summary["export"]["reflections_by"].startswith("template")
    for name in ("expert", "iwm", "reflection"):
        first = json.loads((run / f"{name}.jsonl").read_text().splitlines()[0])
        assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]

    out = run_cli(
        "experience", "train", str(run), "--method", "il,sr", "--updates", "60", timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert (run / "policy-il.pt").is_file() and (run / "policy-sr.pt").is_file()
    assert not (run / "policy-iwm.pt").exists()

    out = run_cli(
        "experience", "eval", "textworld-express", "-p", str(run / "policy-il.pt"),
        "--tasks", "simonsays", "--limit", "3", "--split", "test-id", "--json",
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)["policy-il"]["test-id"]
    assert len(result["tasks"]) == 3
    assert 0.0 <= result["success_rate"] <= 1.0 and result["invalid_rate"] == 0.0

    # the reflections written offline pass the checker; a leaky one does not
    out = run_cli(
        "experience",
        "check",
        str(run / "reflection.jsonl"),
        "--rollouts",
        str(run / "rollouts.jsonl"),
    )
    assert out.returncode == 0, out.stdout
    assert "clean" in out.stdout
    leaky = tmp_path / "leaky.jsonl"
    line = json.loads((run / "reflection.jsonl").read_text().splitlines()[0])
    line["messages"][-1]["content"] = line["messages"][-1]["content"].replace(
        "Thought:\n", "Thought:\nThe expert action is the right one; Action 2 was worse. ", 1
    )
    leaky.write_text(json.dumps(line) + "\n")
    out = run_cli("experience", "check", str(leaky))
    assert out.returncode == 1
    assert "line 1" in out.stdout and "expert" in out.stdout and "label" in out.stdout


def test_a_run_resumes_from_the_command_line_and_refuses_other_settings(
    run_cli, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    args = [
        "experience",
        "collect",
        "textworld-express",
        "--out",
        str(run),
        "--tasks",
        "coin",
        "--demos",
        "2",
    ]
    assert run_cli(*args, "--no-export").returncode == 0
    again = run_cli(*args)
    assert again.returncode == 2 and "already holds a collection run" in again.stderr
    other = run_cli(*args, "--k", "1", "--resume")
    assert other.returncode == 2 and "k (was 4, now 1)" in other.stderr
    resumed = run_cli(*args, "--resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert (run / "expert.jsonl").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["collect", "textworld-express", "--out", "o", "--k", "-1"], "must be 0 or more"),
        (["collect", "chess-world", "--out", "o"], "no environment called 'chess-world'"),
        (["collect", "textworld-express", "--out", "o", "--tasks", "golf"], "golf"),
        (["collect", "textworld-express", "--out", "o", "--option", "verbose"], "KEY=VALUE"),
        (["train", "nowhere"], "no rollouts at nowhere"),
        (["eval", "textworld-express"], "nothing to evaluate"),
        (["eval", "textworld-express", "--model"], "needs a configured model"),
        (["eval", "textworld-express", "-p", "x.pt", "--split", "dev"], "dev is not one of"),
        (["check", "missing.jsonl"], "missing.jsonl"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_what_to_fix(run_cli, args, message) -> None:
    out = run_cli("experience", *args)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_a_policy_file_that_is_not_one_is_refused(run_cli, tmp_path: Path) -> None:
    bogus = tmp_path / "policy.pt"
    bogus.write_bytes(b"not a policy")
    out = run_cli("experience", "eval", "textworld-express", "-p", str(bogus))
    assert out.returncode == 2
    assert str(bogus) in out.stderr
