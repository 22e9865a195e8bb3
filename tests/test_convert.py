"""The Lean file converter (PutnamBench and miniF2F styles)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lemmata.provers.convert import lean_file_to_records
from lemmata.provers.runner import read_theorems

PUTNAM_STYLE = """import Mathlib

open BigOperators Real Nat Topology Rat

/-- The answer, to be determined. -/
noncomputable abbrev putnam_demo_solution : ℝ := sorry

/--
Find the value of the limit. (A docstring with := inside.)
-/
theorem putnam_demo
    (f : ℕ → ℝ)
    (hf : ∀ n, f n = (n : ℝ) / (n + 1)) :
    Filter.Tendsto f Filter.atTop (nhds putnam_demo_solution) :=
sorry
"""

MINIF2F_STYLE = """import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

-- a comment with theorem in it
theorem mathd_algebra_10 : abs ((120 : ℝ) / 100 * 30 - 130) = 20 := by
  sorry

theorem mathd_numbertheory_3 : (∑ x in Finset.range 10, (x + 1) ^ 2) % 10 = 5 := by
  decide

lemma helper {a b : ℕ} (h : a = b) : b = a := by
  sorry
"""


def test_putnam_style() -> None:
    [rec] = lean_file_to_records(PUTNAM_STYLE)
    assert rec["id"] == "putnam_demo"
    assert rec["statement"].startswith("theorem putnam_demo\n") and rec["statement"].endswith(
        "(nhds putnam_demo_solution)"
    )
    assert "import Mathlib" in rec["header"] and "abbrev putnam_demo_solution" in rec["header"]
    assert "proof" not in rec


def test_minif2f_style_keeps_real_proofs() -> None:
    recs = {r["id"]: r for r in lean_file_to_records(MINIF2F_STYLE)}
    assert set(recs) == {"mathd_algebra_10", "mathd_numbertheory_3", "helper"}
    assert recs["mathd_numbertheory_3"]["proof"] == "by\n  decide"
    assert "proof" not in recs["mathd_algebra_10"]
    assert recs["helper"]["statement"] == "lemma helper {a b : ℕ} (h : a = b) : b = a"
    assert "set_option maxHeartbeats 400000" in recs["helper"]["header"]
    assert "mathd_algebra_10" not in recs["helper"]["header"]  # other theorems are not header


def test_cli_writes_jsonl_that_prove_reads(tmp_path: Path) -> None:
    a = tmp_path / "putnam_demo.lean"
    a.write_text(PUTNAM_STYLE)
    b = tmp_path / "minif2f.lean"
    b.write_text(MINIF2F_STYLE)
    empty = tmp_path / "empty.lean"
    empty.write_text("import Mathlib\n")
    out = tmp_path / "suite.jsonl"
    exe = Path(sys.executable).with_name("lemmata")
    run = subprocess.run(
        [str(exe), "convert-lean", str(a), str(b), str(empty), "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert run.returncode == 0, run.stderr
    assert "4 theorems" in run.stdout and "no theorem" in run.stderr
    theorems, problems = read_theorems(out)
    assert problems == [] and len(theorems) == 4
    assert all(json.loads(line)["header"] for line in out.read_text().splitlines())
