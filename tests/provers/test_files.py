"""Coq ``.v`` files and folders as input to ``lemmata prove`` (provers/coq/files.py), with
real files, real miniF2F-rocq data and real Coq."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata.provers import read_problems
from lemmata.provers.coq import read_coq_files
from lemmata.provers.runner import InputProblem, Theorem, run_batch

ROOT = Path(__file__).resolve().parents[2]
MINIF2F = ROOT.parent / "shared" / "data" / "minif2f-rocq" / "valid"

needs_minif2f = pytest.mark.skipif(
    not MINIF2F.is_dir(), reason=f"needs the miniF2F-rocq valid split at {MINIF2F}"
)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def by_id(theorems: list[Theorem]) -> dict[str, Theorem]:
    return {t.id: t for t in theorems}


def results(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in (json.loads(line) for line in path.read_text().splitlines())}


# -- reading ------------------------------------------------------------------------------

SEVERAL = """\
Require Import Arith.
Open Scope nat_scope.

Definition double (n : nat) := n + n.

Lemma first (n : nat) (h : n > 0) :
  double n > n.
Proof.
  intros. unfold double. lia.
Admitted.

(* proved: context for the next one, not a problem itself *)
Lemma helper : forall n, double n = 2 * n.
Proof. intros. unfold double. lia. Qed.

Theorem last_one : forall n,
  double (double n) = 4 * n.
Proof."""


def test_one_open_theorem_is_one_problem_named_after_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path / "plus.v",
        "Require Import Arith.\n\nTheorem plus_0 : forall n : nat, n + 0 = n.\nProof.\nAdmitted.\n",
    )
    theorems, problems = read_coq_files(path)
    assert problems == []
    [t] = theorems
    assert t.id == "plus" and t.line == 3 and t.source == str(path)
    assert t.statement == "Theorem plus_0 : forall n : nat, n + 0 = n."
    assert t.header == "Require Import Arith.\n\n"
    assert t.proof is None


def test_several_theorems_with_a_proved_lemma_between(tmp_path: Path) -> None:
    path = write(tmp_path / "many.v", SEVERAL)
    theorems, problems = read_coq_files(path)
    assert problems == []
    assert [t.id for t in theorems] == ["many:first", "many:last_one"]  # helper is proved
    first, last = theorems
    assert (first.line, last.line) == (6, 16)
    assert first.statement == "Lemma first (n : nat) (h : n > 0) :\n  double n > n."
    assert first.header == SEVERAL[: SEVERAL.index("Lemma first")]
    assert last.statement == "Theorem last_one : forall n,\n  double (double n) = 4 * n."
    # Everything before it, verbatim: the proved helper and the admitted first lemma too.
    assert last.header == SEVERAL[: SEVERAL.index("Theorem last_one")]
    assert "Proof. intros. unfold double. lia. Qed." in last.header
    assert "Admitted." in last.header


def test_a_folder_gives_relative_ids_in_sorted_order(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    write(folder / "b.v", "Lemma b : True.\nAdmitted.")
    write(folder / "a" / "x.v", SEVERAL)
    write(folder / "a" / "solved.v", "Lemma s : True.\nProof. exact I. Qed.\n")
    write(folder / ".git" / "hidden.v", "Lemma h : True.\nAdmitted.\n")
    write(folder / "notes.txt", "not Coq at all")
    theorems, problems = read_problems(folder)
    assert [t.id for t in theorems] == ["a/x:first", "a/x:last_one", "b"]
    assert by_id(theorems)["b"].source == str(folder / "b.v")
    # The fully proved file is reported (it holds nothing to prove); the rest is read.
    assert [(p.source, p.line) for p in problems] == [(str(folder / "a" / "solved.v"), 1)]
    assert "no open theorem" in problems[0].message


def test_bad_files_are_reported_by_file_and_line_and_the_rest_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    write(folder / "good.v", "Theorem good : 1 + 1 = 2.\nProof.\n")
    write(folder / "comment.v", "Require Import Arith.\nLemma a : True. Admitted.\n(* oops\n")
    write(folder / "unended.v", "Lemma a : True.\nAdmitted.\n\nLemma b : 1 = 1\n")
    write(folder / "binary.v", b"\x7fELF\x00\x01\x02")
    write(folder / "latin1.v", "Lemma a : True.\n(* caf\xe9 *)\nAdmitted.\n".encode("latin-1"))
    write(
        folder / "twice.v",
        "Lemma dup : True.\nAdmitted.\nLemma ok : 2 = 2.\nAdmitted.\n\nLemma dup : False.\nAdmitted.\n",
    )
    write(folder / "proved.v", "Lemma p : True.\nProof. exact I. Qed.\n")
    write(folder / "nothing.v", "Definition x := 1.\n")
    write(
        folder / "nested.v",
        "Lemma outer : True.\nProof.\n  intros.\n\nLemma inner : True.\nAdmitted.\n",
    )
    theorems, problems = read_coq_files(folder)

    assert [t.id for t in theorems] == ["good", "nested:outer", "twice:dup", "twice:ok"]
    found = {Path(p.source).name: p for p in problems}
    assert sorted(found) == [
        "binary.v",
        "comment.v",
        "latin1.v",
        "nested.v",
        "nothing.v",
        "proved.v",
        "twice.v",
        "unended.v",
    ]
    assert found["comment.v"].line == 3 and "never closed" in found["comment.v"].message
    assert found["unended.v"].line == 4 and "final '.'" in found["unended.v"].message
    assert "binary" in found["binary.v"].message
    assert found["latin1.v"].line == 2 and "not UTF-8" in found["latin1.v"].message
    assert found["twice.v"].line == 6
    assert "'dup'" in found["twice.v"].message and "line 1" in found["twice.v"].message
    assert "no open theorem" in found["proved.v"].message
    assert "no Corollary, Example, Fact, Lemma" in found["nothing.v"].message
    assert found["nested.v"].line == 5
    assert (
        "'inner'" in found["nested.v"].message and "'outer' (line 1)" in found["nested.v"].message
    )
    # What a user reads: FILE:LINE: message.
    assert str(found["twice.v"]).startswith(f"{folder / 'twice.v'}:6: theorem 'dup'")


def test_an_empty_folder_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    theorems, problems = read_problems(tmp_path / "empty")
    assert theorems == []
    assert problems == [
        InputProblem(0, "no Coq file (*.v) in this folder", str(tmp_path / "empty"))
    ]
    with pytest.raises(FileNotFoundError):
        read_coq_files(tmp_path / "missing.v")


def test_read_problems_reads_jsonl_as_before(tmp_path: Path) -> None:
    path = write(tmp_path / "in.jsonl", '{"id": "t", "statement": "Theorem t : True."}\n')
    theorems, problems = read_problems(path)
    assert problems == [] and [(t.id, t.line, t.source) for t in theorems] == [("t", 1, "")]


def test_locality_and_attributes_stay_out_of_the_statement(tmp_path: Path) -> None:
    path = write(
        tmp_path / "loc.v",
        "#[local] Lemma a : True.\nAdmitted.\nLocal Theorem b : True.\nAdmitted.\n"
        "Example e : nat := 3.\nExample f : 1 = 1.\nAdmitted.\n",
    )
    theorems, problems = read_coq_files(path)
    assert problems == []
    assert [(t.id, t.statement, t.line) for t in theorems] == [
        ("loc:a", "Lemma a : True.", 1),
        ("loc:b", "Theorem b : True.", 3),
        ("loc:f", "Example f : 1 = 1.", 6),
    ]


# -- real data ----------------------------------------------------------------------------


@needs_minif2f
def test_minif2f_files_of_each_shape() -> None:
    # `Proof.` alone at the end with no final newline; binders before the colon; an axiom.
    [t], problems = read_problems(MINIF2F / "aimeII_2001_p3.v")
    assert problems == [] and t.id == "aimeII_2001_p3" and t.line == 4
    assert t.header == "Require Import ZArith.\nRequire Import Nat.\n\n"
    assert t.statement.startswith("Theorem aimeII_2001_p3 :\n  forall (x : nat -> Z),")
    assert t.statement.endswith("= 898%Z.")

    [t], _ = read_problems(MINIF2F / "amc12a_2016_p3.v")
    assert "Axiom Rfloor_spec" in t.header and t.line == 11


@needs_minif2f
def test_the_whole_minif2f_valid_split_reads_cleanly() -> None:
    theorems, problems = read_problems(MINIF2F)
    assert problems == []
    assert len({Path(t.source).name for t in theorems}) == 244
    # 245 problems from 244 files: imo_1966_p5.v states the problem twice (imo_1966_p5 with
    # hypotheses as binders, and a reformulation imo_1966_p5'), both `Proof. Admitted.`.
    assert len(theorems) == 245
    twice = [t for t in theorems if t.id.startswith("imo_1966_p5")]
    assert [t.id for t in twice] == ["imo_1966_p5:imo_1966_p5", "imo_1966_p5:imo_1966_p5'"]
    assert twice[0].statement.startswith("Theorem imo_1966_p5 (x a : nat -> R)\n")
    assert "Admitted." in twice[1].header and twice[1].line == 27
    assert all(t.statement.startswith("Theorem ") and t.proof is None for t in theorems)


@needs_minif2f
def test_minif2f_statements_elaborate_in_coq(coq) -> None:
    # The header and statement the reader gives are what Coq accepts (stdlib-only files).
    for name in ("aimeII_2001_p3", "mathd_algebra_10", "imo_1966_p5"):
        for t in read_problems(MINIF2F / f"{name}.v")[0]:
            session = coq.open(t.header, t.statement)
            assert session.root.goals, t.id
            session.close()


# -- running ------------------------------------------------------------------------------


def test_failures_of_a_file_name_its_file_and_line(tmp_path: Path, coqtop_path: str) -> None:
    from lemmata.provers import CoqTop

    folder = tmp_path / "in"
    write(folder / "lib.v", "(* needs a library *)\nRequire Import NoSuchLib.\n\nLemma l : True.\n")
    write(folder / "also.v", "Require Import NoSuchLib.\nLemma m : True.\nAdmitted.\n")
    write(folder / "stmt.v", "Require Import Arith.\n\nTheorem s :\n  foo = 1.\nAdmitted.\n")
    theorems, problems = read_coq_files(folder)
    assert problems == []
    out = tmp_path / "out.jsonl"
    summary = run_batch(theorems, lambda: CoqTop(coqtop_path), out=out, timeout=20)
    rows = results(out)
    # Two files with the same failing header: each result names its own file.
    assert rows["lib"]["status"] == rows["also"]["status"] == "error"
    assert rows["lib"]["failure_mode"]["kind"] == "header_error"
    assert rows["lib"]["failure_mode"]["message"].startswith(f"{folder / 'lib.v'}:2: ")
    assert rows["also"]["failure_mode"]["message"].startswith(f"{folder / 'also.v'}:1: ")
    assert "NoSuchLib" in rows["also"]["failure_mode"]["message"]
    # A statement that does not elaborate is one attempt, not the whole portfolio.
    assert rows["stmt"]["status"] == "failed" and rows["stmt"]["attempts"] == 1
    assert rows["stmt"]["failure_mode"]["message"].startswith(
        f"{folder / 'stmt.v'}:3: the statement does not elaborate"
    )
    assert list(summary.header_errors.values())[0].startswith(str(folder))


def test_cli_proves_a_folder_of_v_files(tmp_path: Path, run_cli, coqtop_path: str) -> None:
    folder = tmp_path / "in"
    write(
        folder / "easy.v",
        "Theorem plus_0 : forall n : nat, n + 0 = n.\nProof.\nAdmitted.\n",
    )
    write(folder / "sub" / "broken.v", "Require Import NoSuchLib.\n\nLemma x : True.\nProof.\n")
    write(folder / "junk.v", "(* never closed\n")
    write(
        folder / "stmt.v",
        "(* a statement Coq cannot read *)\n\nTheorem y : no_such_thing = 0.\nAdmitted.\n",
    )
    out = tmp_path / "r.jsonl"
    run = run_cli("prove", str(folder), "--backend", "coq", "--out", str(out))
    assert run.returncode == 0, run.stderr
    rows = results(out)
    assert sorted(rows) == ["easy", "stmt", "sub/broken"]
    # A statement that does not elaborate is named by its file and line, from its stage.
    assert rows["stmt"]["failure_mode"]["stage"] == "statement"
    assert rows["stmt"]["failure_mode"]["message"].startswith(f"{folder / 'stmt.v'}:3: ")
    assert rows["easy"]["status"] == "proved"
    assert rows["sub/broken"]["status"] == "error"
    assert rows["sub/broken"]["failure_mode"]["message"].startswith(
        f"{folder / 'sub' / 'broken.v'}:1: the header fails"
    )
    assert f"{folder / 'junk.v'}:1: not Coq source" in run.stderr
    assert "broken.v:1" in run.stdout  # the summary's header error names the file

    single = run_cli("prove", str(folder / "easy.v"), "--out", str(tmp_path / "s.jsonl"), "--json")
    assert single.returncode == 0, single.stderr
    assert json.loads(single.stdout)["proved"] == 1


def test_cli_refuses_lean_for_v_files_and_budgets_below_one(tmp_path: Path, run_cli) -> None:
    path = write(tmp_path / "t.v", "Lemma t : True.\nAdmitted.\n")
    lean = run_cli("prove", str(path), "--backend", "lean", "--out", str(tmp_path / "o.jsonl"))
    assert lean.returncode == 2 and "use --backend coq" in lean.stderr
    budget = run_cli("prove", str(path), "--budget-calls", "0")
    assert budget.returncode == 2 and "--budget-calls" in budget.stderr
    assert "greater than or equal to 1" in budget.stderr or "x>=1" in budget.stderr
    method = run_cli("prove", str(path), "--method", "search")
    assert method.returncode == 2 and "'refine'" in method.stderr
