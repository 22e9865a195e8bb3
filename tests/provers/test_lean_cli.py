"""``lemmata lean-check``: Kimina snippets and PutnamBench files on a pool of Lean REPLs, from
the command line; the REPL is the replay program (tests/lean_replay.py) over the recorded
answers of the real one (shared/fixtures/lean-repl)."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED

from lemmata.cli import main
from lemmata.provers.lean.protocol import split_transcript

FIXTURES = SHARED / "fixtures" / "lean-repl"
REPLAY = Path(__file__).parents[1] / "lean_replay.py"
PUTNAM = Path(__file__).parents[1] / "fixtures" / "putnam"


def recorded(name: str, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    requests = split_transcript((FIXTURES / f"{name}.in").read_text(encoding="utf-8"))
    replies = split_transcript((FIXTURES / f"{name}.expected.out").read_text(encoding="utf-8"))
    return json.loads(requests[index], strict=False), json.loads(replies[index], strict=False)


MATHLIB = recorded("Mathlib/test/exact", 0)  # import Mathlib -> env 0
SORRY = recorded("Mathlib/test/exact", 1)  # theorem test : 0 < 1 := by sorry
SORRY_CODE = "import Mathlib\n" + SORRY[0]["cmd"]


def replay(tmp_path: Path, *pairs: tuple[dict, dict]) -> str:
    """The command line of a REPL that answers ``pairs`` and nothing else."""
    requests, replies = tmp_path / "s.in", tmp_path / "s.out"
    requests.write_text("\n\n".join(json.dumps(q, ensure_ascii=False) for q, _ in pairs) + "\n")
    replies.write_text("\n\n".join(json.dumps(a, ensure_ascii=False) for _, a in pairs) + "\n")
    return shlex.join([sys.executable, str(REPLAY), str(replies), "--requests", str(requests)])


def lean_check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(["lean-check", *args])
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def test_snippets_are_checked_into_a_results_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "snippets.jsonl"
    lines = [
        json.dumps({"id": "s1", "code": SORRY_CODE}),
        "{not json",
        json.dumps({"custom_id": "s2", "proof": SORRY_CODE}),  # the Kimina server's older form
    ]
    source.write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("LEMMATA_LEAN_REPL", replay(tmp_path, MATHLIB, SORRY, SORRY))
    out = tmp_path / "results.jsonl"
    code, stdout, stderr = lean_check(
        capsys, str(source), "--out", str(out), "--pool-size", "1", "--workers", "1", "--json"
    )
    assert code == 0, stderr
    assert "snippets.jsonl:2" in stderr  # the bad line, by number; the rest ran
    report = json.loads(stdout)
    assert report["sorry"] == 2 and report["valid"] == 0 and report["total"] == 2
    results = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(r["id"] for r in results) == ["s1", "s2"]
    assert all(r["status"] == "sorry" and r["toolchain"] for r in results)
    # A second run refuses to overwrite; --resume sends nothing for what is done.
    code, _, stderr = lean_check(capsys, str(source), "--out", str(out))
    assert code == 2 and "--resume" in stderr
    monkeypatch.setenv("LEMMATA_LEAN_REPL", replay(tmp_path))
    code, stdout, _ = lean_check(capsys, str(source), "--out", str(out), "--resume", "--json")
    assert code == 0 and json.loads(stdout)["skipped_already_done"] == 2
    assert len(out.read_text().splitlines()) == 2


def test_bad_input_and_a_missing_lean_exit_2_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "snippets.jsonl"
    source.write_text(json.dumps({"id": "s1", "code": SORRY_CODE}) + "\n")
    code, _, stderr = lean_check(capsys, str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in stderr
    code, _, stderr = lean_check(capsys, str(source), "--proofs", str(source))
    assert code == 2 and "PutnamBench" in stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("{not json\n")
    code, _, stderr = lean_check(capsys, str(empty), "--out", str(tmp_path / "r.jsonl"))
    assert code == 2 and "nothing to check" in stderr
    monkeypatch.setenv("LEMMATA_LEAN_REPL", "no-such-lean-repl")
    out = tmp_path / "r.jsonl"
    code, _, stderr = lean_check(capsys, str(source), "--out", str(out))
    assert code == 2 and "no-such-lean-repl" in stderr and "LEMMATA_LEAN_REPL" in stderr
    assert not out.exists()


def test_putnam_files_are_read_directly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    shutil.copy(PUTNAM / "putnam_1962_a1.lean", folder)  # as PutnamBench publishes it
    (folder / "putnam_2000_a1.lean").write_text("import Mathlib\n\n-- no theorem here\n")
    monkeypatch.setenv("LEMMATA_LEAN_REPL", "no-such-lean-repl")
    code, _, stderr = lean_check(capsys, str(folder), "--out", str(tmp_path / "r.jsonl"))
    # The broken file is named with its line; with no Lean here the run stops, exit 2.
    assert "putnam_2000_a1.lean" in stderr
    assert code == 2 and "LEMMATA_LEAN_REPL" in stderr
