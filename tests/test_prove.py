"""The batch runner and `lemmata prove`, with real Coq."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from lemmata.provers import CoqTop, read_theorems, run_batch
from lemmata.provers.runner import Theorem, prove_one, read_done_ids

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "provers" / "suites" / "coq_basic.jsonl"
ARITH = "From Coq Require Import Arith Lia."


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def results(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in (json.loads(line) for line in path.read_text().splitlines())}


def test_the_bundled_suite_is_large_and_well_formed() -> None:
    theorems, problems = read_theorems(SUITE)
    assert problems == [] and len(theorems) >= 40
    text = SUITE.read_text()
    for topic in ("list", "nat", "Prop"):
        assert topic in text


def test_bad_lines_are_reported_with_their_numbers(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"id": "a", "statement": "Theorem a : True."},
            "this is not json",
            {"id": "b"},
            {"id": "a", "statement": "Theorem a2 : True."},
            "[1, 2]",
            {"id": "c", "statement": "   "},
            "",
            {"id": 7, "header": ARITH, "statement": "Theorem c : 1 + 1 = 2.", "proof": "lia."},
        ],
    )
    theorems, problems = read_theorems(path)
    assert [t.id for t in theorems] == ["a", "7"]
    assert [p.line for p in problems] == [2, 3, 4, 5, 6]
    assert "not JSON" in problems[0].message and "'statement'" in problems[1].message
    assert "appears again" in problems[2].message


def test_prove_checks_given_proofs_and_searches_the_rest(coq) -> None:
    checked = prove_one(coq, Theorem("c", "Theorem c : 2 + 2 = 5.", ARITH, "reflexivity."), 10)
    assert checked.status == "failed" and checked.attempts == 1 and checked.proof == "reflexivity."
    assert checked.failure_mode["kind"] == "type_mismatch"
    searched = prove_one(coq, Theorem("s", "Theorem s : forall n : nat, n + 0 = n.", ARITH), 20)
    assert searched.status == "proved" and searched.attempts >= 1
    assert coq.check(ARITH, "Theorem s : forall n : nat, n + 0 = n.", searched.proof).ok
    hopeless = prove_one(coq, Theorem("h", "Theorem h : forall n : nat, n = n + 1.", ARITH), 20)
    assert hopeless.status == "failed" and hopeless.proof is None and hopeless.attempts > 10


def test_run_batch_resume_and_a_torn_results_file(tmp_path: Path, coqtop_path: str) -> None:
    theorems = [Theorem(f"t{i}", f"Theorem t{i} : {i} + {i} = 2 * {i}.", ARITH) for i in range(6)]
    out = tmp_path / "out.jsonl"
    made = []

    def factory():
        made.append(CoqTop(coqtop_path))
        return made[-1]

    summary = run_batch(theorems[:3], factory, out=out, workers=2, timeout=20)
    assert summary.counts["proved"] == 3
    with out.open("a") as fh:
        fh.write('{"id": "t3", "status": "pro')  # a run killed mid-write
    assert read_done_ids(out) == {"t0", "t1", "t2"}
    summary = run_batch(theorems, factory, out=out, workers=2, timeout=20, resume=True)
    assert summary.skipped == 3 and summary.counts["proved"] == 3
    assert sorted(results(out)) == [f"t{i}" for i in range(6)]
    assert all(not v.process.alive for v in made)  # verifiers are closed at the end


def test_a_header_that_does_not_compile_is_tried_once(tmp_path: Path, coqtop_path: str) -> None:
    bad = "From Coq Require Import NotALibrary."
    theorems = [Theorem(f"b{i}", f"Theorem b{i} : True.", bad) for i in range(4)]
    theorems.append(Theorem("ok", "Theorem ok : True.", ARITH, "exact I."))
    calls = []

    class Counting(CoqTop):
        def check(self, header, statement, proof, timeout=None):
            calls.append(header)
            return super().check(header, statement, proof, timeout)

    out = tmp_path / "out.jsonl"
    summary = run_batch(theorems, lambda: Counting(coqtop_path), out=out, workers=1, timeout=20)
    rows = results(out)
    assert [rows[f"b{i}"]["status"] for i in range(4)] == ["error"] * 4
    assert all("NotALibrary" in rows[f"b{i}"]["failure_mode"]["message"] for i in range(4))
    assert rows["ok"]["status"] == "proved"
    assert calls.count(bad) == 1
    assert list(summary.header_errors) == [bad]


def lemmata(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lemmata")
    full = {**os.environ, **(env or {}), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=full, timeout=300)


def test_cli_proves_the_bundled_suite(tmp_path: Path, coqtop_path: str) -> None:
    out = tmp_path / "r.jsonl"
    run = lemmata(
        "prove", str(SUITE), "--backend", "coq", "--workers", "2", "--out", str(out), "--json"
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    rows = results(out)
    assert summary["total"] == len(rows) >= 40
    assert summary["proved"] >= 40
    for row in rows.values():
        assert set(row) == {
            "id",
            "status",
            "proof",
            "failure_mode",
            "elapsed_s",
            "attempts",
            "backend",
        }
        assert row["backend"] == "coq"
    again = lemmata("prove", str(SUITE), "--out", str(out), "--resume", "--json")
    assert json.loads(again.stdout)["skipped_already_done"] == summary["total"]


def test_cli_reports_bad_lines_and_runs_the_rest(tmp_path: Path, coqtop_path: str) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            "{broken",
            {
                "id": "x",
                "header": ARITH,
                "statement": "Theorem x : 3 * 3 = 9.",
                "proof": "reflexivity.",
            },
            {
                "id": "y",
                "header": ARITH,
                "statement": "Theorem y : 3 * 3 = 10.",
                "proof": "reflexivity.",
            },
        ],
    )
    out = tmp_path / "r.jsonl"
    run = lemmata("prove", str(path), "--out", str(out))
    assert run.returncode == 0
    assert f"{path}:1" in run.stderr and "not JSON" in run.stderr
    assert {k: v["status"] for k, v in results(out).items()} == {"x": "proved", "y": "failed"}
    assert "proved" in run.stdout


def test_cli_bad_arguments(tmp_path: Path) -> None:
    missing = lemmata("prove", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert lemmata("prove", str(SUITE), "--backend", "isabelle").returncode == 2
    assert lemmata("prove", str(SUITE), "--workers", "0").returncode == 2


def test_cli_lean_without_a_toolchain_says_how_to_get_one(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "l.jsonl", [{"id": "l", "statement": "theorem l : 1 = 1", "proof": "by rfl"}]
    )
    run = lemmata("prove", str(path), "--backend", "lean", env={"PATH": "/usr/bin:/bin"})
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "error[tool_not_found]" in run.stderr and "LEMMATA_LEAN_REPL" in run.stderr


def test_ctrl_c_leaves_a_valid_results_file(tmp_path: Path, coqtop_path: str) -> None:
    rows = [
        {
            "id": f"q{i}",
            "header": ARITH,
            "statement": f"Theorem q{i} : {i} <= {i} + 1.",
            "proof": "lia.",
        }
        for i in range(3)
    ]
    rows += [
        {
            "id": f"spin{i}",
            "header": ARITH,
            "statement": f"Theorem spin{i} : True.",
            "proof": "let rec spin := idtac; spin in spin.",
        }
        for i in range(3)
    ]
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "r.jsonl"
    exe = Path(sys.executable).with_name("lemmata")
    mark = f"ctrl-c-{uuid.uuid4().hex}"  # coqtop inherits it: this run's, not the machine's
    proc = subprocess.Popen(
        [str(exe), "prove", str(path), "--out", str(out), "--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LEMMATA_TEST_RUN": mark},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 3):
        time.sleep(0.2)
    assert _coqtop_pids(mark), "the marker finds this run's coqtop while it runs"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    done = results(out)  # every line parses
    assert {f"q{i}" for i in range(3)} <= set(done)
    resumed = lemmata("prove", str(path), "--out", str(out), "--resume", "--timeout", "1", "--json")
    assert json.loads(resumed.stdout)["skipped_already_done"] == len(done)
    final = results(out)
    assert len(final) == 6 and {final[f"spin{i}"]["status"] for i in range(3)} == {"timeout"}
    left = _coqtop_pids(mark)
    deadline = time.monotonic() + 5
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _coqtop_pids(mark)
    assert not left, "the interrupted run left coqtop processes behind"


def _coqtop_pids(mark: str) -> set[int]:
    """The coqtop processes started under the environment marker ``mark``."""
    out = subprocess.run(["ps", "-eo", "pid,comm"], capture_output=True, text=True).stdout
    pids = set()
    for line in out.splitlines()[1:]:
        pid, comm = line.split()[0], line.split()[-1]
        if not comm.startswith("coqtop"):
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if f"LEMMATA_TEST_RUN={mark}".encode() in environ.split(b"\0"):
            pids.add(int(pid))
    return pids


@pytest.mark.parametrize("workers", [1, 2])
def test_a_loop_is_a_timeout_within_the_limit_plus_a_second(
    tmp_path: Path, coqtop_path: str, workers: int
) -> None:
    theorems = [
        Theorem("loop", "Theorem loop : True.", ARITH, "let rec spin := idtac; spin in spin."),
        Theorem("next", "Theorem next : True.", ARITH, "exact I."),
    ]
    out = tmp_path / "out.jsonl"
    summary = run_batch(theorems, lambda: CoqTop(coqtop_path), out=out, workers=workers, timeout=2)
    rows = results(out)
    assert rows["loop"]["status"] == "timeout" and rows["loop"]["elapsed_s"] < 3
    assert rows["next"]["status"] == "proved"
    assert summary.counts == {"timeout": 1, "proved": 1}


def test_existing_results_are_not_overwritten_by_accident(tmp_path: Path, coqtop_path: str) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {
                "id": "x",
                "header": ARITH,
                "statement": "Theorem x : 1 + 1 = 2.",
                "proof": "reflexivity.",
            }
        ],
    )
    out = tmp_path / "r.jsonl"
    out.write_text('{"id": "kept", "status": "proved"}\n')
    refused = lemmata("prove", str(path), "--out", str(out))
    assert (
        refused.returncode == 2 and "--resume" in refused.stderr and "--overwrite" in refused.stderr
    )
    assert out.read_text() == '{"id": "kept", "status": "proved"}\n'  # nothing lost
    assert lemmata("prove", str(path), "--out", str(out), "--overwrite").returncode == 0
    assert set(results(out)) == {"x"}


def test_wz_time_limit_follows_the_settings(tmp_path: Path, monkeypatch, capsys) -> None:
    """`--method wz` without --timeout takes the settings' limit; --timeout overrides it."""
    from lemmata.cli import main

    path = write_jsonl(
        tmp_path / "ids.jsonl",
        [{"id": "franel", "lhs": "Sum(binomial(n, k)**3, (k, 0, n))", "rhs": None, "n_min": 0}],
    )

    def verdict(*extra: str) -> str:
        with pytest.raises(SystemExit) as done:
            main(["prove", str(path), "--method", "wz", "--out-dir", str(tmp_path / "o"),
                  "--overwrite", "--json", *extra])  # fmt: skip
        assert done.value.code == 0, capsys.readouterr().err
        capsys.readouterr()
        return json.loads((tmp_path / "o" / "results.jsonl").read_text())["verdict"]

    # A microsecond: the summand's shift ratios alone take longer, so no order is tried.
    monkeypatch.setenv("LEMMATA_VERIFIER_TIMEOUT_S", "0.000001")
    assert verdict() == "failed"  # no time for Zeilberger's recurrence
    assert verdict("--timeout", "60") == "recurrence-only"


def test_cli_untrusted_runs_confined_or_refuses_to_run(tmp_path: Path, coqtop_path: str) -> None:
    problems = tmp_path / "p.jsonl"
    problems.write_text(
        json.dumps({"id": "plus_0", "statement": "Theorem plus_0 : forall n : nat, n + 0 = n."})
        + "\n"
    )
    out = tmp_path / "r.jsonl"
    run = lemmata("prove", str(problems), "--backend", "coq", "--untrusted", "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert results(out)["plus_0"]["status"] == "proved"
    # Where bubblewrap is missing, untrusted input is refused, never run unconfined.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("coqtop", "prlimit"):
        found = shutil.which(program)
        assert found, program
        (bin_dir / program).symlink_to(found)
    refused = lemmata(
        "prove",
        str(problems),
        "--backend",
        "coq",
        "--untrusted",
        "--out",
        str(tmp_path / "r2.jsonl"),
        env={"PATH": str(bin_dir)},
    )
    assert refused.returncode != 0
    assert "confined" in refused.stderr and "bubblewrap" in refused.stderr
    assert not (tmp_path / "r2.jsonl").exists() or not results(tmp_path / "r2.jsonl")
