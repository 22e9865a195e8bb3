"""``lemmata prove --method refine``, ``lemmata prove-train`` and ``lemmata prove-draw`` as a
user runs them: the installed ``lemmata`` script in a subprocess, on real ``.v`` files and
real Coq, its files, output and exit codes.

The refinement batch runs once for the module (it loads Hammer and Interval, as users get by
default); the tests read what it left behind, and train and draw from its traces.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

GOOD = """\
Require Import Reals.
Open Scope R_scope.

Theorem square_pos : forall x : R, 0 < x -> x * x > 0.
Proof.
Admitted.
"""
BROKEN = """\
(* a library that is not installed *)
Require Import NoSuchLib.

Lemma needs_it : True.
Proof.
"""


@dataclass
class Batch:
    folder: Path
    traces: Path
    results: Path
    run: subprocess.CompletedProcess[str]
    env: dict[str, str]

    def rows(self) -> dict[str, dict]:
        lines = self.results.read_text(encoding="utf-8").splitlines()
        return {r["id"]: r for r in map(json.loads, lines)}


def lemmata(
    *args: str, env: dict[str, str], cwd: Path, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lemmata")
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )


@pytest.fixture(scope="module")
def batch(coqtop_path: str, tmp_path_factory: pytest.TempPathFactory) -> Batch:
    """``lemmata prove FOLDER --method refine ...`` once, with the same isolation the
    function-scoped set-up gives each test (no LEMMATA_* of the caller, a fresh HOME)."""
    base = tmp_path_factory.mktemp("refine")
    folder = base / "in"
    folder.mkdir()
    (folder / "good.v").write_text(GOOD, encoding="utf-8")
    (folder / "broken.v").write_text(BROKEN, encoding="utf-8")
    (base / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEMMATA_")}
    env |= {
        "HOME": str(base / "home"),
        "LEMMATA_DATA_DIR": str(base / "data"),
        "COLUMNS": "200",
        "NO_COLOR": "1",
    }
    traces, results = base / "traces", base / "results.jsonl"
    run = lemmata(
        "prove",
        str(folder),
        "--method",
        "refine",
        "--budget-calls",
        "20",
        "--trace-dir",
        str(traces),
        "--out",
        str(results),
        "--no-value",
        env=env,
        cwd=base,
    )
    return Batch(folder, traces, results, run, env)


def test_refine_proves_one_file_and_names_the_other_files_failing_line(batch: Batch) -> None:
    assert batch.run.returncode == 0, batch.run.stderr
    rows = batch.rows()
    assert sorted(rows) == ["broken", "good"]
    for row in rows.values():
        assert row["method"] == "refine" and row["backend"] == "coq"
        assert isinstance(row["calls"], int) and 1 <= row["calls"] <= 20
    good, broken = rows["good"], rows["broken"]
    assert good["status"] == "proved" and good["proof"] and good["vacuous"] is False
    assert "Lra" in good["header_additions"]
    assert broken["status"] == "error" and broken["failure_mode"]["kind"] == "header_error"
    message = broken["failure_mode"]["message"]
    assert message.startswith(f"{batch.folder / 'broken.v'}:2: the header fails")
    assert "NoSuchLib" in message
    # The human summary: the counts, the header error with its file, where things went.
    out = batch.run.stdout
    assert "broken.v:2" in out and f"results: {batch.results}" in out
    assert f"traces: {batch.traces}" in out and "lemmata prove-draw" in out


def test_each_theorem_leaves_its_trace(batch: Batch) -> None:
    rows = batch.rows()
    assert sorted(p.name for p in batch.traces.glob("*.jsonl")) == ["broken.jsonl", "good.jsonl"]
    for tid, row in rows.items():
        assert row["trace"] == str(batch.traces / f"{tid}.jsonl")
        lines = [json.loads(x) for x in Path(row["trace"]).read_text().splitlines()]
        assert lines[0]["type"] == "problem" and lines[0]["id"] == tid
        assert lines[-1]["type"] == "result" and lines[-1]["calls"] == row["calls"]
        assert lines[-1]["status"] == row["status"]


def test_the_progress_line_counts_the_verifier_calls_spent(batch: Batch) -> None:
    shown = re.findall(r"verifier calls (\d+)", batch.run.stderr)
    assert shown, batch.run.stderr
    assert int(shown[-1]) == sum(r["calls"] for r in batch.rows().values())


def test_json_output_parses(batch: Batch) -> None:
    # Resuming the finished batch runs nothing and reports it, as JSON for scripts.
    run = lemmata(
        "prove",
        str(batch.folder),
        "--method",
        "refine",
        "--out",
        str(batch.results),
        "--resume",
        "--no-value",
        "--json",
        env=batch.env,
        cwd=batch.folder.parent,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["method"] == "refine" and report["backend"] == "coq"
    assert report["total"] == 2 and report["skipped_already_done"] == 2
    assert report["budget_calls"] == 64 and report["value_model"] is None


def test_a_budget_of_no_calls_is_refused_naming_the_option(run_cli, tmp_path: Path) -> None:
    path = tmp_path / "t.v"
    path.write_text("Lemma t : True.\nAdmitted.\n", encoding="utf-8")
    run = run_cli("prove", str(path), "--method", "refine", "--budget-calls", "0")
    assert run.returncode == 2
    assert "--budget-calls" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "work" / "results.jsonl").exists()


def test_prove_train_learns_from_the_traces(batch: Batch, run_cli, tmp_path: Path) -> None:
    from lemmata.provers.refine.value import load_scorer

    model = tmp_path / "model.pt"
    run = run_cli("prove-train", str(batch.traces), "--out", str(model), "--epochs", "5")
    assert run.returncode == 0, run.stderr
    assert re.fullmatch(
        rf"trained on \d+ attempts \(\d+ on proofs\) from 2 searches, 5 epochs, "
        rf"loss [\d.]+ -> {re.escape(str(model))}\n",
        run.stdout,
    ), run.stdout
    load_scorer(model)  # the file it wrote is a model the search can use


def test_prove_train_refuses_a_missing_path_or_a_file_that_is_not_a_trace(
    run_cli, tmp_path: Path
) -> None:
    missing = run_cli("prove-train", str(tmp_path / "nothing"), "--out", str(tmp_path / "m.pt"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not a trace\n", encoding="utf-8")
    bad = run_cli("prove-train", str(garbage), "--out", str(tmp_path / "m.pt"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert f"{garbage}:1" in bad.stderr.replace("\n", "")
    assert not (tmp_path / "m.pt").exists()


def test_prove_draw_prints_the_png_it_wrote(batch: Batch, run_cli, tmp_path: Path) -> None:
    run = run_cli("prove-draw", str(batch.traces / "good.jsonl"), "--out", str(tmp_path / "pics"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(tmp_path / "pics" / "good.png")]
    with Image.open(tmp_path / "pics" / "good.png") as im:
        assert im.format == "PNG"
