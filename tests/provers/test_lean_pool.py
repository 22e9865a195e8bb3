"""The Lean REPL pool and the Kimina-style batch runner, through a real pipe to the replay
program (tests/lean_replay.py, a stand-in for `lake exe repl`) over the REPL's recorded
answers (shared/fixtures/lean-repl).

Each session is a script of (request, reply) pairs that the replay program enforces: a
request the pool sends that is not the next one in the script makes it exit, so every
test also pins what the pool sent. Replies are Lean's recorded words, taken from the
transcripts by file and position; the only composed ones are the answers to `#print axioms`
(no transcript has one; they are worded as Lean words them, as in test_lean_protocol) and
the env numbers noted where a composed session needs them.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED

from lemmata.provers.lean.kimina import (
    KiminaItem,
    KiminaResult,
    check_kimina,
    read_kimina,
    run_kimina,
)
from lemmata.provers.lean.pool import LeanPool, detect_toolchain, split_header
from lemmata.provers.lean.protocol import split_transcript
from lemmata.provers.lean.snippet import declared_theorems, screen_code, statement_problem

FIXTURES = SHARED / "fixtures" / "lean-repl"
REPLAY = Path(__file__).parents[1] / "lean_replay.py"
TOOLCHAIN = "leanprover/lean4:v4.33.0-rc2"  # the transcripts' toolchain (their README)


def recorded(name: str, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``index``-th request of transcript ``name`` and the real REPL's reply to it."""
    requests = split_transcript((FIXTURES / f"{name}.in").read_text(encoding="utf-8"))
    replies = split_transcript((FIXTURES / f"{name}.expected.out").read_text(encoding="utf-8"))
    return json.loads(requests[index], strict=False), json.loads(replies[index], strict=False)


MATHLIB = recorded("Mathlib/test/exact", 0)  # import Mathlib -> env 0
SORRY = recorded("Mathlib/test/exact", 1)  # theorem test : 0 < 1 := by sorry
PROVED = recorded("Mathlib/test/H20231020", 1)  # theorem mathd_numbertheory_188 ... norm_num
UNSOLVED = recorded("Mathlib/test/H20231115_3", 1)  # unsolved goals (an error)
SORRY_CODE = "import Mathlib\n" + SORRY[0]["cmd"]
PROVED_CODE = "import Mathlib\n" + PROVED[0]["cmd"]


def axioms_of(name: str, axioms: list[str] | None, env: int) -> tuple[dict, dict]:
    """`#print axioms NAME` in ``env`` and an answer in Lean's words (composed)."""
    text = (
        f"'{name}' does not depend on any axioms"
        if not axioms
        else f"'{name}' depends on axioms: [{', '.join(axioms)}]"
    )
    message = {
        "severity": "info",
        "pos": {"line": 1, "column": 0},
        "endPos": {"line": 1, "column": 13},
        "data": text,
    }
    return {"cmd": f"#print axioms {name}", "env": env}, {"messages": [message], "env": env + 1}


def session(tmp_path: Path, *pairs: tuple[dict, dict], extra: tuple[str, ...] = ()) -> list[str]:
    """The replay program over ``pairs``, strict about every request."""
    n = len(list(tmp_path.glob("s*.in")))
    requests, replies = tmp_path / f"s{n}.in", tmp_path / f"s{n}.out"
    requests.write_text("\n\n".join(json.dumps(q, ensure_ascii=False) for q, _ in pairs) + "\n")
    replies.write_text("\n\n".join(json.dumps(a, ensure_ascii=False) for _, a in pairs) + "\n")
    return [sys.executable, str(REPLAY), str(replies), "--requests", str(requests), *extra]


def make_pool(argv: list[str], **kw: Any) -> LeanPool:
    kw.setdefault("toolchain", TOOLCHAIN)
    kw.setdefault("size", 1)
    return LeanPool(argv, **kw)


def body(pair: tuple[dict, dict]) -> dict:
    return pair[0]


# -- pure parts ---------------------------------------------------------------------------------


def test_split_header_takes_the_leading_imports() -> None:
    code = "import Mathlib\n-- a comment\n\nimport Aesop\nopen Real\ntheorem t : True := trivial"
    header, rest, lines, offset = split_header(code)
    assert header == "import Mathlib\nimport Aesop"
    assert rest == "open Real\ntheorem t : True := trivial"
    assert lines == [1, 4] and offset == 4
    assert split_header("theorem t : True := trivial")[:2] == ("", "theorem t : True := trivial")


def test_toolchain_comes_from_the_project_pin(tmp_path: Path) -> None:
    (tmp_path / "lean-toolchain").write_text(TOOLCHAIN + "\n")
    assert detect_toolchain(tmp_path) == TOOLCHAIN


def test_declared_theorems_follow_namespaces_and_skip_comments() -> None:
    code = (
        "namespace Foo\n-- theorem hidden : True := trivial\n/- lemma gone : True -/\n"
        "theorem a : True := trivial\nsection\nlemma b : True := trivial\nend\nend Foo\n"
        "@[simp] protected theorem _root_.c : True := trivial\nexample : True := trivial"
    )
    assert declared_theorems(code) == ["Foo.a", "Foo.b", "c"]


def test_the_screen_refuses_what_can_add_facts_unchecked() -> None:
    for code in (
        "axiom cheat : False\ntheorem t : False := cheat",
        "#eval IO.println \"'t' does not depend on any axioms\"",
        "theorem t : True := trivial #eval IO.println 1",  # a command needs no line of its own
        "set_option debug.skipKernelTC true\ntheorem t : False := sorry",
        "unsafe def f : Nat := 0",
        "@[implemented_by g] def f : Nat := 0",
        "run_cmd pure ()",
        'def s := "--" #eval 1',  # no comment can hide one: the raw text is searched
    ):
        assert screen_code(code) is not None, code
    assert screen_code("theorem t : True := by\n  trivial -- this is fine") is None
    shifting = "variable (h : False)\ninclude h\ntheorem t : False := h"
    assert screen_code(shifting) is None  # Lean decides it on its own ...
    assert "variable" in (screen_code(shifting, fixed_statements=True) or "")  # ... not here
    for hidden in (  # Lean reads these as code after a string or a character, not a comment
        'def s := "--" variable (h : False)',
        'def s := r#"" -- "# variable (h : False)',
        'def c := \'"\' def s := " -- " variable (h : False)',
    ):
        assert screen_code(hidden, fixed_statements=True) is not None, hidden
    prose = "/-- Let `x` be a variable and `p` a prefix. -/\ntheorem t : True := trivial"
    assert screen_code(prose, fixed_statements=True) is None  # words in doc comments are prose


def test_statement_must_stay_as_written() -> None:
    stated = "theorem t\n(π : ℝ := Real.pi) (x : ℕ) : x = x :=\nsorry"
    same = "theorem t (π : ℝ := Real.pi)\n    (x : ℕ) : x = x := by -- reformatted\n  rfl"
    assert statement_problem(same, [stated]) is None
    assert "changed" in (
        statement_problem("theorem t (x : ℕ) : x = x + 0 := by simp", [stated]) or ""
    )
    weaker = "theorem t (π : ℝ := Real.pi) (x : ℕ) (h : False) : x = x := h.elim"
    assert statement_problem(weaker, [stated]) is not None
    assert statement_problem("theorem tt (π : ℝ := Real.pi) (x : ℕ) : x = x := rfl", [stated])


def test_items_are_validated_with_what_to_fix() -> None:
    assert KiminaItem.from_dict({"custom_id": 7, "proof": "theorem t : True := trivial"}).id == "7"
    for bad, words in (
        ({"code": "x"}, "'id'"),
        ({"id": "a"}, "'code'"),
        ({"id": "a", "code": "  "}, "'code'"),
        ({"id": "a", "code": "x", "statement": 3}, "'statement'"),
        (["id", "code"], "JSON object"),
    ):
        with pytest.raises(ValueError, match=words):
            KiminaItem.from_dict(bad)


def test_pool_settings_are_validated() -> None:
    argv = [sys.executable, str(REPLAY), str(FIXTURES / "readme.expected.out")]
    settings: list[dict[str, Any]] = [
        {"size": 0},
        {"recycle_after": 0},
        {"memory_cap_mb": 0},
        {"crash_retries": -1},
    ]
    for bad in settings:
        with pytest.raises(ValueError, match=next(iter(bad))):
            LeanPool(argv, **bad)


# -- the pool over the replay program -----------------------------------------------------------


def test_warm_up_once_per_header_then_reuse(tmp_path: Path) -> None:
    name = "mathd_numbertheory_188"
    argv = session(tmp_path, MATHLIB, SORRY, PROVED, axioms_of(name, ["propext"], 1))
    with make_pool(argv) as pool:
        run = run_kimina(
            [{"id": "s", "code": SORRY_CODE}, {"id": "p", "code": PROVED_CODE}], pool=pool
        )
        assert [r.status for r in run.results] == ["sorry", "valid"]
        assert pool.stats.started == 1 and pool.stats.warmups == 1 and pool.stats.reused == 1
    s, p = run.results
    assert not s.warm and p.warm
    assert p.axioms == {name: ["propext"]} and s.axioms is None
    assert s.sorries == 1 and s.messages[0]["data"] == "declaration uses `sorry`"
    assert s.messages[0]["pos"]["line"] == 2  # the REPL's line 1 of the body is line 2 of the code
    assert {r.toolchain for r in run.results} == {TOOLCHAIN}


def test_each_header_warms_once_on_a_shared_repl(tmp_path: Path) -> None:
    lean = ({"cmd": "import Lean"}, {"env": 2})  # the reply as import_lean's, env composed
    in_lean = ({"cmd": SORRY[0]["cmd"], "env": 2}, {**SORRY[1], "env": 3})
    argv = session(tmp_path, MATHLIB, SORRY, lean, in_lean, SORRY)
    with make_pool(argv) as pool:
        for ident, code in (
            ("m1", SORRY_CODE),
            ("l1", "import Lean\n" + SORRY[0]["cmd"]),
            ("m2", SORRY_CODE),
        ):
            assert check_kimina(pool, {"id": ident, "code": code}).status == "sorry"
        assert pool.stats.warmups == 2 and pool.stats.reused == 1 and pool.stats.started == 1


def test_recycled_after_n_checks(tmp_path: Path) -> None:
    argv = session(tmp_path, MATHLIB, SORRY)  # each new process replays it from the start
    with make_pool(argv, recycle_after=1) as pool:
        run = run_kimina([{"id": str(i), "code": SORRY_CODE} for i in range(3)], pool=pool)
        assert [r.status for r in run.results] == ["sorry"] * 3
        assert pool.stats.recycled == 3 and pool.stats.started == 3 and pool.stats.warmups == 3
    assert run.pool["recycled"] == 3


def test_recycled_above_the_memory_cap(tmp_path: Path) -> None:
    argv = session(tmp_path, MATHLIB, SORRY, SORRY)
    with make_pool(argv, memory_cap_mb=10_000) as pool:
        for i in range(2):
            assert check_kimina(pool, {"id": str(i), "code": SORRY_CODE}).status == "sorry"
        assert pool.stats.recycled == 0 and pool.stats.started == 1
    with make_pool(argv, memory_cap_mb=0.01) as small:  # any live process is over 10 kB
        for i in range(2):
            assert check_kimina(small, {"id": str(i), "code": SORRY_CODE}).status == "sorry"
        assert small.stats.recycled == 2 and small.stats.started == 2


def test_a_crashed_repl_is_replaced_and_its_environments_dropped(tmp_path: Path) -> None:
    # The process exits on its third request (the second check). A retry that reused the dead
    # REPL's cached environment would send the body first, which the script refuses.
    argv = session(tmp_path, MATHLIB, SORRY, SORRY, extra=("--exit-at", "3"))
    with make_pool(argv, crash_retries=1) as pool:
        first, second = (check_kimina(pool, {"id": i, "code": SORRY_CODE}) for i in "ab")
        assert (first.status, second.status) == ("sorry", "sorry")
        assert pool.stats.crashes == 1 and pool.stats.started == 2 and pool.stats.warmups == 2
    with make_pool(argv, crash_retries=0) as pool:
        statuses = [check_kimina(pool, {"id": i, "code": SORRY_CODE}) for i in "abc"]
        assert [r.status for r in statuses] == ["sorry", "repl_error", "sorry"]
        assert "crash" in statuses[1].reason
        assert pool.stats.crashes == 1 and pool.stats.warmups == 2


def test_a_hung_check_is_a_timeout_and_the_next_gets_a_fresh_repl(tmp_path: Path) -> None:
    argv = session(tmp_path, MATHLIB, SORRY, SORRY, extra=("--hang-at", "3"))
    with make_pool(argv, timeout_s=1.0) as pool:
        results = [check_kimina(pool, {"id": i, "code": SORRY_CODE}) for i in "abc"]
        assert [r.status for r in results] == ["sorry", "timeout_error", "sorry"]
        assert results[1].time >= 1.0 and "1s" in results[1].reason
        assert pool.stats.timeouts == 1 and pool.stats.warmups == 2 and pool.stats.started == 2


def test_hung_imports_time_out_under_their_own_limit(tmp_path: Path) -> None:
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.9.0\n")
    argv = session(tmp_path, MATHLIB, SORRY, extra=("--hang-at", "1"))
    with make_pool(argv, header_timeout_s=1.0, project=tmp_path, toolchain=None) as pool:
        result = check_kimina(pool, {"id": "h", "code": SORRY_CODE})
    assert result.status == "timeout_error" and "the imports within 1s" in result.reason
    assert result.toolchain == "leanprover/lean4:v4.9.0"  # from the project's pin


def test_lean_errors_repl_errors_and_header_failures(tmp_path: Path) -> None:
    cases = recorded("Mathlib/test/H20231115_3", 0)  # import Mathlib.Tactic.Cases
    refused = (
        {"cmd": "example : True := trivial", "env": 0},
        recorded("unknown_environment", 0)[1],
    )
    argv = session(tmp_path, cases, UNSOLVED, refused)
    with make_pool(argv) as pool:
        header = cases[0]["cmd"] + "\n"
        bad = check_kimina(pool, {"id": "e", "code": header + UNSOLVED[0]["cmd"]})
        assert bad.status == "lean_error" and "unsolved goals" in bad.messages[0]["data"]
        assert bad.messages[0]["pos"] == {"line": 2, "column": 33}
        repl = check_kimina(pool, {"id": "r", "code": header + "example : True := trivial"})
        assert repl.status == "repl_error" and "Unknown environment" in repl.reason
    # A header Lean rejects. No transcript has one: a recorded error reply stands in for it.
    argv = session(tmp_path, ({"cmd": "import Nope"}, UNSOLVED[1]))
    with make_pool(argv) as pool:
        code = "\nimport Nope\ntheorem t : True := trivial"
        failed, again = (check_kimina(pool, {"id": i, "code": code}) for i in "hg")
        assert again.status == "lean_error" and again.messages == failed.messages
        assert failed.status == "lean_error" and failed.reason == "the imports do not load"
        assert failed.messages[0]["data"] == UNSOLVED[1]["messages"][0]["data"]
        assert failed.messages[0]["pos"]["line"] == 2  # the header's line 1 is the code's line 2
        assert pool.stats.warmups == 1  # the failed header was not sent again


@pytest.mark.parametrize(
    ("axioms", "status", "reason"),
    [
        (["propext", "Classical.choice", "Quot.sound"], "valid", ""),
        ([], "valid", ""),
        (["propext", "sorryAx"], "sorry", "sorryAx"),
        (["Lean.ofReduceBool"], "lean_error", "Lean.ofReduceBool"),
        (["cheat"], "lean_error", "cheat"),
    ],
)
def test_only_the_standard_axioms_are_valid(
    tmp_path: Path, axioms: list[str], status: str, reason: str
) -> None:
    name = "mathd_numbertheory_188"
    argv = session(tmp_path, MATHLIB, PROVED, axioms_of(name, axioms, 1))
    with make_pool(argv) as pool:
        result = check_kimina(pool, {"id": "x", "code": PROVED_CODE})
    assert result.status == status and reason in result.reason
    assert result.axioms == {name: axioms}


def test_axioms_not_reported_is_never_valid(tmp_path: Path) -> None:
    other = axioms_of("something_else", [], 1)
    argv = session(
        tmp_path,
        MATHLIB,
        PROVED,
        ({**other[0], "cmd": "#print axioms mathd_numbertheory_188"}, other[1]),
    )
    with make_pool(argv) as pool:
        result = check_kimina(pool, {"id": "x", "code": PROVED_CODE})
    assert result.status == "lean_error" and "did not report" in result.reason


def test_a_changed_statement_is_never_valid_and_never_sent(tmp_path: Path) -> None:
    statement = "theorem mathd_numbertheory_188 : Nat.gcd 180 168 = 12"
    name = "mathd_numbertheory_188"
    argv = session(tmp_path, MATHLIB, PROVED, axioms_of(name, ["propext"], 1))
    with make_pool(argv) as pool:
        ok = check_kimina(pool, {"id": "ok", "code": PROVED_CODE, "statement": statement})
        assert ok.status == "valid"
        changed = PROVED_CODE.replace("= 12", "≠ 13")
        for code in (
            changed,
            "import Mathlib\nvariable (h : False)\n" + PROVED[0]["cmd"],
            "import Mathlib\naxiom cheat : False\n" + PROVED[0]["cmd"],
        ):
            result = check_kimina(pool, {"id": "bad", "code": code, "statement": statement})
            assert result.status == "lean_error" and result.reason, code
        assert pool.stats.warmups == 1 and pool.stats.reused == 0  # nothing more was sent


def test_threads_share_a_bounded_pool(tmp_path: Path) -> None:
    argv = session(tmp_path, MATHLIB, *[SORRY] * 8)
    seen: set[int] = set()
    lock = threading.Lock()
    with make_pool(argv, size=2) as pool:
        original = pool._checkout

        def counting(header: str) -> Any:
            worker = original(header)
            with lock:
                seen.add(pool._busy)
            return worker

        pool._checkout = counting  # type: ignore[method-assign]
        run = run_kimina(
            [{"id": str(i), "code": SORRY_CODE} for i in range(8)], pool=pool, workers=4
        )
        assert [r.status for r in run.results] == ["sorry"] * 8
        assert max(seen) <= 2 and pool._busy == 0  # never more REPLs out than the size
        assert pool.stats.started <= 2 and pool.stats.warmups == pool.stats.started


# -- the Kimina file format ---------------------------------------------------------------------


def test_kimina_jsonl_round_trip_and_resume(tmp_path: Path) -> None:
    source = tmp_path / "snippets.jsonl"
    source.write_text(
        "\n".join(
            [
                json.dumps({"id": "s1", "code": SORRY_CODE}),
                "{not json",
                json.dumps({"custom_id": "s2", "proof": SORRY_CODE}),  # Kimina's older form
                json.dumps({"id": "s1", "code": SORRY_CODE}),
                json.dumps({"id": "no-code"}),
            ]
        )
        + "\n"
    )
    items, problems = read_kimina(source)
    assert [i.id for i in items] == ["s1", "s2"]
    assert [(p.line, p.message.split(" ")[0]) for p in problems] == [
        (2, "not"),
        (4, "id"),
        (5, "snippet"),
    ]
    out = tmp_path / "results.jsonl"
    argv = session(tmp_path, MATHLIB, SORRY, SORRY)
    with make_pool(argv) as pool:
        run = run_kimina(source, pool=pool, out=out)
    lines = out.read_text().splitlines()
    assert len(lines) == 2
    back = sorted((KiminaResult.from_dict(json.loads(x)) for x in lines), key=lambda r: r.id)
    assert back == run.results
    record = json.loads(lines[0])
    assert set(record) >= {"id", "status", "messages", "time", "toolchain"}
    assert run.summary()["sorry"] == 2 and len(run.summary()["input_problems"]) == 3
    with make_pool(session(tmp_path)) as pool:  # nothing may be sent on resume
        again = run_kimina(source, pool=pool, out=out, resume=True)
    assert again.skipped == 2 and again.results == [] and len(out.read_text().splitlines()) == 2


def test_the_python_api_reports_bad_entries_and_runs_the_rest(tmp_path: Path) -> None:
    argv = session(tmp_path, MATHLIB, SORRY)
    entries: list[Any] = [{"id": "a", "code": SORRY_CODE}, {"id": "a", "code": "x"}, {"id": 1}]
    with make_pool(argv) as pool:
        run = run_kimina(entries, pool=pool)
    assert [r.id for r in run.results] == ["a"] and run.results[0].status == "sorry"
    assert ["appears again" in p.message for p in run.problems] == [True, False]
    assert "'code'" in run.problems[1].message


def test_kimina_request_body_is_read(tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    snippets = [{"id": "a", "code": SORRY_CODE}, {"id": "b", "code": PROVED_CODE}]
    path.write_text(json.dumps({"snippets": snippets, "timeout": 20}, indent=2))
    items, problems = read_kimina(path)
    assert [i.to_dict() for i in items] == snippets and problems == []
    path.write_text(json.dumps([{"id": "a", "code": SORRY_CODE}, {"id": 5}]))
    items, problems = read_kimina(path)
    assert [i.id for i in items] == ["a"] and "entry 2" in problems[0].message


@pytest.mark.lean
def test_live_pool_checks_core_lean() -> None:
    with LeanPool(size=1, timeout_s=120) as pool:
        run = run_kimina(
            [
                {"id": "ok", "code": "theorem t (n : Nat) : n + 0 = n := by simp"},
                {"id": "bad", "code": "theorem u : 1 = 2 := by decide"},
                {"id": "gap", "code": "theorem v : 2 = 2 := by sorry"},
                {"id": "nd", "code": "theorem w : 10 < 11 := by native_decide"},
            ],
            pool=pool,
        )
    assert [r.status for r in run.results] == ["valid", "lean_error", "sorry", "lean_error"]
    assert all(r.toolchain != "unknown" for r in run.results)
