"""PutnamBench's Lean files read as published (three real ones in tests/fixtures/putnam),
with and without the answer inlined; broken files reported by name and line."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from lemmata.provers.lean.kimina import check_kimina
from lemmata.provers.lean.pool import LeanPool
from lemmata.provers.lean.putnam import putnam_batch, read_putnam, read_putnam_file
from lemmata.provers.lean.snippet import statement_problem

PUTNAM = Path(__file__).parents[1] / "fixtures" / "putnam"
REPLAY = Path(__file__).parents[1] / "lean_replay.py"


def test_reads_the_published_files_keeping_the_answer() -> None:
    problems, bad = read_putnam(PUTNAM)
    assert bad == []
    by_id = {p.id: p for p in problems}
    assert sorted(by_id) == ["putnam_1962_a1", "putnam_1962_a2", "putnam_1965_a1"]
    a1 = by_id["putnam_1962_a1"]
    assert a1.header == "import Mathlib" and a1.solution_name is None and a1.line == 6
    assert a1.statement.startswith("theorem putnam_1962_a1\n(S : Set (ℝ × ℝ))")
    assert a1.statement.endswith("convexHull ℝ (T \\ {t})")
    geo = by_id["putnam_1965_a1"]
    assert (geo.solution_name, geo.solution_type, geo.solution) == (
        "putnam_1965_a1_solution",
        "ℝ",
        "Real.pi / 15",
    )
    assert geo.solution_head == "abbrev putnam_1965_a1_solution : ℝ"
    assert "open EuclideanGeometry Real" in geo.preamble and "abbrev" in geo.preamble
    doc = by_id["putnam_1962_a2"]
    assert doc.line == 10 and "Find every real-valued function" in doc.preamble
    for problem in problems:  # the file as published is the item's code, statement and all
        source = Path(problem.path).read_text(encoding="utf-8")
        item = problem.item()
        assert statement_problem(source, item.statements) is None
        assert statement_problem(item.code, item.statements) is None
        assert item.code.rstrip().endswith("sorry") and item.id == problem.id


def test_inlining_writes_the_answer_into_the_statement() -> None:
    problems, bad = read_putnam(PUTNAM, inline_solutions=True)
    assert bad == []
    geo = next(p for p in problems if p.id == "putnam_1965_a1")
    assert geo.inlined and geo.solution_head is None
    assert geo.statement.endswith(": ∠ C A B = ((Real.pi / 15) : ℝ)")
    assert "abbrev" not in geo.code() and "-- Real.pi / 15" not in geo.code()
    sets = next(p for p in problems if p.id == "putnam_1962_a2")
    assert sets.statement.count("(({f : ℝ → ℝ | ∃ a c : ℝ, a ≥ 0") == 3
    assert "putnam_1962_a2_solution" not in sets.code()


def test_keeping_the_answer_fixes_its_name_and_type_only() -> None:
    geo = read_putnam_file(PUTNAM / "putnam_1965_a1.lean")
    answered = geo.item("by\n  sorry", answer="Real.pi / 15")
    assert "abbrev putnam_1965_a1_solution : ℝ := Real.pi / 15" in answered.code
    assert statement_problem(answered.code, answered.statements) is None
    retyped = answered.code.replace("_solution : ℝ :=", "_solution : ℕ :=")
    assert "changed" in (statement_problem(retyped, answered.statements) or "")
    moved = answered.code.replace("∠ C A B = putnam", "∠ A B C = putnam")
    assert statement_problem(moved, answered.statements) is not None


def test_bad_files_are_reported_by_name_and_line_and_the_rest_read(tmp_path: Path) -> None:
    for name in ("putnam_1962_a1.lean", "putnam_1965_a1.lean"):
        shutil.copy(PUTNAM / name, tmp_path / name)
    good = (PUTNAM / "putnam_1962_a1.lean").read_text(encoding="utf-8")
    (tmp_path / "putnam_2000_a1.lean").write_text(good)  # the theorem has another name
    renamed = {n: good.replace("putnam_1962_a1", n) for n in ("putnam_2000_a2", "putnam_2000_a5")}
    (tmp_path / "putnam_2000_a2.lean").write_text(
        renamed["putnam_2000_a2"].replace("sorry", "by simp")
    )
    (tmp_path / "putnam_2000_a3.lean").write_text("import Mathlib\n\nopen Real\n")
    (tmp_path / "putnam_2000_a4.lean").write_bytes(b"import Mathlib\n\xff\xfe theorem")
    (tmp_path / "putnam_2000_a5.lean").write_text(
        renamed["putnam_2000_a5"].replace("import Mathlib\n", "")
    )
    problems, bad = read_putnam(tmp_path)
    assert [p.id for p in problems] == ["putnam_1962_a1", "putnam_1965_a1"]
    found = {Path(b.source).name: (b.line, b.message) for b in bad}
    assert found["putnam_2000_a1.lean"][0] == 6 and "named" in found["putnam_2000_a1.lean"][1]
    assert found["putnam_2000_a2.lean"][0] == 6 and "sorry" in found["putnam_2000_a2.lean"][1]
    assert "no `theorem" in found["putnam_2000_a3.lean"][1]
    assert "UTF-8" in found["putnam_2000_a4.lean"][1]
    assert found["putnam_2000_a5.lean"][0] == 1 and "import" in found["putnam_2000_a5.lean"][1]
    assert str(bad[0]).startswith(str(tmp_path / "putnam_2000_a1.lean") + ":6: ")
    # Inlining needs the answer comment: without it the file is reported, the rest still read.
    no_answer = (PUTNAM / "putnam_1965_a1.lean").read_text(encoding="utf-8")
    (tmp_path / "putnam_1965_a1.lean").write_text(no_answer.replace("-- Real.pi / 15\n", ""))
    inlined, bad = read_putnam(tmp_path, inline_solutions=True)
    assert "putnam_1962_a1" in [p.id for p in inlined]
    answer = next(b for b in bad if b.source.endswith("putnam_1965_a1.lean"))
    assert answer.line == 7 and "no answer to inline" in answer.message
    assert read_putnam(tmp_path / "missing")[1][0].message == "no such file or folder"


def test_batch_pairs_problems_with_proofs(tmp_path: Path) -> None:
    proofs = tmp_path / "proofs.jsonl"
    geo = read_putnam_file(PUTNAM / "putnam_1965_a1.lean")
    rewritten = geo.code("by\n  sorry").replace("∠ C A B = putnam", "∠ A B C = putnam")
    proofs.write_text(
        "\n".join(
            [
                json.dumps({"id": "putnam_1962_a1", "proof": "by\n  simp"}),
                json.dumps({"id": "putnam_1965_a1", "code": rewritten}),
                json.dumps({"id": "putnam_1999_b9", "proof": "by simp"}),
                "not json",
            ]
        )
    )
    items, bad = putnam_batch(PUTNAM, proofs)
    assert [i.id for i in items] == ["putnam_1962_a1", "putnam_1962_a2", "putnam_1965_a1"]
    assert items[0].code.endswith(":=\nby\n  simp\n")
    assert items[1].code.rstrip().endswith("sorry")  # no proof given: the statement as published
    assert {b.message.split(" ")[0] for b in bad} == {"not", "a"}
    # The rewritten statement is refused before any REPL is asked (the script has no replies).
    argv = [sys.executable, str(REPLAY), str(tmp_path / "none.out"), "--requests", str(proofs)]
    (tmp_path / "none.out").write_text("\n")
    with LeanPool(argv, size=1, toolchain="test") as pool:
        result = check_kimina(pool, items[2])
        assert result.status == "lean_error" and "statement changed" in result.reason
        assert pool.stats.started == 0


@pytest.mark.lean
def test_live_published_statements_elaborate() -> None:
    """Needs a Lean project with Mathlib and the REPL, named by MATHLIB_REPL_PROJECT."""
    project = os.environ.get("MATHLIB_REPL_PROJECT")
    if not project:
        pytest.skip("set MATHLIB_REPL_PROJECT to a Lean project with Mathlib and the REPL")
    items, _ = putnam_batch(PUTNAM, inline_solutions=True)
    with LeanPool(project=project, size=1, header_timeout_s=1200) as pool:
        results = [check_kimina(pool, item) for item in items]
    assert {r.status for r in results} == {"sorry"}, [r.messages for r in results]
    assert pool.stats.warmups == 1  # one `import Mathlib` for the three problems
