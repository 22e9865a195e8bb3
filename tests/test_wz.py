"""WZ: Zeilberger's algorithm, checked proofs, the bundled suite's verdicts, Lean sketches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from lemmata.provers.wz.identity import (
    IdentityError,
    N,
    WZIdentity,
    parse_identity,
    read_identities,
)
from lemmata.provers.wz.lean_sketch import OBLIGATIONS, lean_expr, lean_sketch, obligation_report
from lemmata.provers.wz.prove import prove_identity
from lemmata.provers.wz.zeilberger import gosper, zeilberger

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "provers" / "suites" / "wz_identities.jsonl"
K = sp.Symbol("k", integer=True)
IDENTITIES, PROBLEMS = read_identities(SUITE)


def test_the_suite_is_large_and_mixed() -> None:
    assert PROBLEMS == []
    expected = [i.text["expect"] for i in IDENTITIES]
    assert expected.count("proved") >= 30
    assert {"refuted", "recurrence-only", "not-hypergeometric"} <= set(expected)


@pytest.mark.parametrize("ident", IDENTITIES, ids=lambda i: i.id)
def test_suite_verdicts(ident: WZIdentity) -> None:
    result = prove_identity(ident)
    assert result.verdict == ident.text["expect"], (result.reason, result.checks)
    if result.verdict == "proved":
        assert [c.name for c in result.checks] == [
            "spot-checks",
            "certificate",
            "telescoping",
            "rhs-recurrence",
            "initial-values",
        ]
        assert all(c.ok for c in result.checks)
        assert result.recurrence is not None and result.recurrence.certificate is not None
    if result.verdict == "refuted":
        assert result.counterexample is not None and ident.rhs is not None
        n0 = result.counterexample["n"]
        by_name = {str(p): p for p in ident.parameters}  # assumed ones are integer symbols
        params = {by_name[p]: v for p, v in result.counterexample.items() if p != "n"}
        lo, hi = int(ident.lo.subs(N, n0)), int(ident.hi.subs(N, n0))
        lhs = sum(ident.summand.subs({N: n0, **params}).subs(ident.k, j) for j in range(lo, hi + 1))
        assert sp.simplify(lhs - ident.rhs.subs({N: n0, **params})) != 0  # a real counterexample


def test_known_recurrences() -> None:
    franel = zeilberger(sp.binomial(N, K) ** 3, N, K)
    assert franel is not None and franel.order == 2
    a0, a1, a2 = franel.coeffs
    assert sp.expand(a2 / a0 * (-8 * (N + 1) ** 2) - (N + 2) ** 2) == 0
    assert sp.expand(a1 / a0 * (-8 * (N + 1) ** 2) - (-(7 * N**2 + 21 * N + 16))) == 0
    binom = zeilberger(sp.binomial(N, K), N, K)
    assert (
        binom is not None
        and binom.order == 1
        and sp.simplify(binom.coeffs[1] / binom.coeffs[0]) == sp.Rational(-1, 2)
    )


def test_gosper_indefinite_sums() -> None:
    assert sp.simplify(gosper(K * sp.factorial(K), K) - 1 / K) == 0
    assert gosper(1 / K, K) is None  # the harmonic numbers are not hypergeometric


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (
            {"id": "x", "lhs": "Sum(binomial(n, k), (k, 0, n)", "rhs": "2**n", "n_min": 0},
            "'lhs' does not parse",
        ),
        ({"id": "x", "lhs": "binomial(n, 2)", "rhs": "1", "n_min": 0}, "must be Sum"),
        ({"id": "x", "lhs": "Sum(k, (k, 0, n/2))", "rhs": "1", "n_min": 0}, "upper bound"),
        ({"id": "x", "lhs": "Sum(k, (k, 0, m))", "rhs": "1", "n_min": 0}, "upper bound"),
        ({"id": "x", "lhs": "Sum(k, (n, 0, 5))", "rhs": "1", "n_min": 0}, "integer variable"),
        (
            {"id": "x", "lhs": "Sum(k, (k, 0, n))", "rhs": "__import__('os')", "n_min": 0},
            "'rhs' uses syntax",
        ),
        ({"id": "x", "lhs": "Sum(k, (k, 0, n))", "rhs": "n.func", "n_min": 0}, "'rhs' uses syntax"),
        ({"id": "x", "lhs": "Sum(k, (k, 0, n))", "rhs": "1"}, "'n_min' is missing"),
        (
            {"id": "x", "lhs": "Sum(k, (k, 0, n))", "rhs": "1", "n_min": "0"},
            "'n_min' must be an integer",
        ),
        ({"lhs": "Sum(k, (k, 0, n))", "rhs": "1", "n_min": 0}, "'id' is missing"),
    ],
)
def test_bad_input_names_the_identity_and_field(line: dict[str, object], field: str) -> None:
    with pytest.raises(IdentityError, match=field):
        parse_identity(line)


def test_lean_rendering() -> None:
    n, k = sp.symbols("n k", integer=True, nonnegative=True)
    assert lean_expr(sp.binomial(n, k)) == "(Nat.choose n k : ℚ)"
    assert lean_expr(sp.factorial(n + 1)) == "(Nat.factorial (1 + n) : ℚ)"
    assert lean_expr(sp.Rational(1, 2) * n) in ("(((1 : ℚ) / 2) * (n : ℚ))", "((n : ℚ) / (2 : ℚ))")
    assert lean_expr(sp.binomial(n, n - k)) == "(Nat.choose n ((n - k)) : ℚ)"


def test_lean_sketch_and_which_obligations_closed() -> None:
    from lemmata.provers.lean.protocol import LeanMessage

    ident = next(i for i in IDENTITIES if i.id == "vandermonde")
    text = lean_sketch(ident, prove_identity(ident))
    assert text.startswith("import Mathlib")
    for name in OBLIGATIONS:
        assert f" {name}" in text
    assert "Finset.Icc 0 n" in text and "noncomputable def R" in text
    assert text.count("(") == text.count(")")
    line_of = {
        name: next(
            i
            for i, line in enumerate(text.splitlines(), 1)
            if f" {name}" in line and line.startswith(("lemma", "theorem"))
        )
        for name in OBLIGATIONS
    }
    # What Lean says of a file: messages in the REPL's format (composed, no toolchain here).
    msgs = [
        LeanMessage("warning", "declaration uses 'sorry'", line_of["telescope"], 6),
        LeanMessage("error", "unsolved goals\n⊢ False", line_of["main"] + 3, 4),
    ]
    report = obligation_report(text, msgs)
    assert report == {
        "wz_step": "closed",
        "telescope": "sorry",
        "rhs_recurrence": "closed",
        "initial_values": "closed",
        "main": "error",
    }


def lemmata(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lemmata")
    return subprocess.run(
        [str(exe), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def test_cli_runs_a_batch_with_bad_lines_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "row",
                        "lhs": "Sum(binomial(n, k), (k, 0, n))",
                        "rhs": "2**n",
                        "n_min": 0,
                    }
                ),
                "{not json",
                json.dumps({"id": "half", "lhs": "Sum(k, (k, 0, n/2))", "rhs": "n", "n_min": 0}),
                json.dumps({"id": "wrong", "lhs": "Sum(k, (k, 0, n))", "rhs": "n**2", "n_min": 0}),
            ]
        )
        + "\n"
    )
    out = tmp_path / "out"
    run = lemmata("prove", str(path), "--method", "wz", "--out-dir", str(out), "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert (summary["proved"], summary["refuted"]) == (1, 1)
    assert f"{path}:2" in run.stderr and "'half'" in run.stderr and "upper bound" in run.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["verdict"] for r in rows] == ["proved", "refuted"]
    assert Path(rows[0]["lean_file"]).read_text().startswith("import Mathlib")
    again = lemmata(
        "prove", str(path), "--method", "wz", "--out-dir", str(out), "--resume", "--json"
    )
    assert json.loads(again.stdout)["skipped_already_done"] == 2


def test_open_obligations_go_to_the_model_one_at_a_time(tmp_path: Path) -> None:
    """WZ-LLM with a ScriptedModel and the Lean replay program answering in the REPL's format."""
    from lemmata.llm import ScriptedModel
    from lemmata.provers.lean import LeanRepl
    from lemmata.provers.wz.discharge import discharge

    ident = next(i for i in IDENTITIES if i.id == "binomial_row_sum")
    sketch = lean_sketch(ident, prove_identity(ident))
    tele = next(
        i for i, line in enumerate(sketch.splitlines(), 1) if line.startswith("lemma telescope")
    )

    def warn(line: int, text: str, severity: str = "warning") -> dict:
        return {
            "severity": severity,
            "pos": {"line": line, "column": 0},
            "endPos": {"line": line, "column": 5},
            "data": text,
        }

    replies = tmp_path / "replies.expected.out"
    replies.write_text(
        "\n\n".join(
            json.dumps(o)
            for o in [
                {
                    "env": 0,
                    "messages": [warn(tele, "declaration uses 'sorry'")],
                },  # the sketch as written
                {
                    "env": 1,
                    "messages": [warn(tele + 2, "unknown identifier 'foo'", "error")],
                },  # after `exact foo`
                {"env": 2, "messages": []},  # after the good proof
            ]
        )
        + "\n"
    )
    repl = LeanRepl([sys.executable, str(Path(__file__).with_name("lean_replay.py")), str(replies)])
    model = ScriptedModel(
        ['{"proof": "sorry"}', '{"proof": "exact foo"}', '{"proof": "rw [Finset.sum_range_sub]"}'],
        label="wz-llm-test",
    )
    new_sketch, report = discharge(sketch, repl, model, budget=10)
    repl.close()
    assert report.before["telescope"] == "sorry" and report.after["telescope"] == "closed"
    assert report.closed_by_model == ["telescope"] and report.calls == 3
    assert any("refused" in note for note in report.notes)  # the `sorry` reply never reached Lean
    assert "rw [Finset.sum_range_sub]" in new_sketch and "exact foo" not in new_sketch
    asked = str(model.requests[1][-1]["content"])
    assert "lemma telescope" in asked and "declaration uses 'sorry'" in asked
    fed_back = str(model.requests[2][-1]["content"])
    assert "unknown identifier 'foo'" in fed_back  # Lean's words fed back


def test_the_model_budget_is_respected(tmp_path: Path) -> None:
    from lemmata.llm import ScriptedModel
    from lemmata.provers.lean import LeanRepl
    from lemmata.provers.wz.discharge import discharge

    ident = next(i for i in IDENTITIES if i.id == "gauss")
    sketch = lean_sketch(ident, prove_identity(ident))
    starts = [
        i for i, line in enumerate(sketch.splitlines(), 1) if line.startswith(("lemma", "theorem"))
    ]
    msg = [
        {
            "severity": "warning",
            "pos": {"line": s, "column": 0},
            "endPos": {"line": s, "column": 1},
            "data": "declaration uses 'sorry'",
        }
        for s in starts
    ]
    replies = tmp_path / "r.expected.out"
    replies.write_text(
        "\n\n".join(json.dumps({"env": i, "messages": msg}) for i in range(10)) + "\n"
    )
    repl = LeanRepl([sys.executable, str(Path(__file__).with_name("lean_replay.py")), str(replies)])
    model = ScriptedModel({"*": '{"proof": "simp"}'})
    _, report = discharge(sketch, repl, model, budget=4, attempts_per_obligation=2)
    repl.close()
    assert report.calls == 4 and "budget of 4 model calls spent" in report.notes
    assert report.closed_by_model == []


def test_batch_checks_sketches_with_lean_and_labels_a_scripted_model(tmp_path: Path) -> None:
    from lemmata.llm import ScriptedModel
    from lemmata.provers.lean import LeanRepl
    from lemmata.provers.wz.runner import run_wz

    ident = next(i for i in IDENTITIES if i.id == "gauss")
    replies = tmp_path / "r.expected.out"
    replies.write_text(json.dumps({"env": 0, "messages": []}) + "\n")  # Lean accepts the sketch
    repl = LeanRepl([sys.executable, str(Path(__file__).with_name("lean_replay.py")), str(replies)])
    summary = run_wz(
        [ident], tmp_path / "out", lean_verifier=repl, model=ScriptedModel([], label="t")
    )
    repl.close()
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text())
    assert record["lean"]["checked"] is True and record["lean"]["model"] == "scripted:t [scripted]"
    assert (
        set(record["lean"]["obligations"].values()) == {"closed"}
        and record["lean"]["model_calls"] == 0
    )
    assert summary.lean_files == [record["lean_file"]]


def test_wz_pairs_are_the_fast_path() -> None:
    by_id = {i.id: i for i in IDENTITIES}
    methods = {
        name: getattr(prove_identity(by_id[name]).recurrence, "method", None)
        for name in ("binomial_squares", "vandermonde", "franel")
    }
    assert methods == {
        "binomial_squares": "wz-pair",
        "vandermonde": "wz-pair",
        "franel": "zeilberger",  # no rhs: no pair
    }


def test_an_identity_past_its_time_limit_is_stopped_and_the_batch_goes_on(tmp_path: Path) -> None:
    from lemmata.provers.wz.runner import run_wz

    by_id = {i.id: i for i in IDENTITIES}
    # Dixon's identity in factorials (not in the suite, so nothing of it is cached yet), under
    # a limit no proof can meet: the worker is stopped, a new one takes the next identity.
    dixon = parse_identity(
        {
            "id": "dixon_factorials",
            "n_min": 0,
            "lhs": "Sum((-1)**k*factorial(2*n)**3/(factorial(n + k)**3*factorial(n - k)**3), (k, -n, n))",
            "rhs": "factorial(3*n)/factorial(n)**3",
        }
    )
    summary = run_wz(
        [dixon, by_id["gauss"]], tmp_path / "a", timeout_s=0.001, grace_s=0.0, lean=False
    )
    rows = [
        json.loads(line) for line in (tmp_path / "a" / "results.jsonl").read_text().splitlines()
    ]
    assert [r["id"] for r in rows] == ["dixon_factorials", "gauss"]
    assert "worker stopped" in rows[0]["reason"] and summary.counts["failed"] >= 1
    # With time enough, the same batch gets its verdicts.
    run_wz([by_id["apery"], by_id["gauss"]], tmp_path / "b", timeout_s=60, lean=False)
    rows = [
        json.loads(line) for line in (tmp_path / "b" / "results.jsonl").read_text().splitlines()
    ]
    assert [r["verdict"] for r in rows] == ["recurrence-only", "proved"]
