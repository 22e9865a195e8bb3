"""The refinement search over Lean's REPL (``LeanRepl``, tactic mode), without a toolchain.

Two stand-ins for ``lake exe repl``, both real subprocesses behind a real pipe, so that
``LeanRepl``, ``LeanProcess`` and ``LeanSession`` run exactly as they do live:

- the replay program (``tests/lean_replay.py``) over a transcript of the real REPL
  (``shared/fixtures/lean-repl``), strict about every request;
- ``SCRIPTED_REPL`` below, a SCRIPTED DOUBLE of the REPL, for what the transcripts do not
  record (a Mathlib arithmetic goal that ``linarith`` fails on). It answers a tactic by
  looking up (first goal, tactic) in a table and keeps proof states as the REPL does; any
  request not in its table gets an error that says it comes from the double. Its JSON shapes
  are the transcripts'; message texts not in the transcripts are Mathlib's own (cited where
  used).

The test marked ``lean`` runs the search on the real REPL and skips without a toolchain.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED

from lemmata.errors import ToolNotFound
from lemmata.provers.lean import LeanRepl, split_transcript
from lemmata.provers.refine import SearchConfig, parse_goal, read_trace, search
from lemmata.provers.refine.backend import proof_text, scope_of, split_draft, statement_for
from lemmata.provers.result import FailureKind, Status

FIXTURES = SHARED / "fixtures" / "lean-repl"
REPLAY = Path(__file__).parents[1] / "lean_replay.py"


def transcript(name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The requests and the replies of a recorded session."""
    requests = split_transcript((FIXTURES / f"{name}.in").read_text(encoding="utf-8"))
    replies = split_transcript((FIXTURES / f"{name}.expected.out").read_text(encoding="utf-8"))
    return [json.loads(r, strict=False) for r in requests], [json.loads(r) for r in replies]


def recorded_goals() -> set[str]:
    """Every goal the real REPL printed in the transcripts: sorries' and tactic results'."""
    goals: set[str] = set()
    for path in FIXTURES.rglob("*.expected.out"):
        for block in split_transcript(path.read_text(encoding="utf-8")):
            reply = json.loads(block)
            goals.update(s["goal"] for s in reply.get("sorries", []) if "goal" in s)
            if isinstance(reply.get("goals"), list):
                goals.update(reply["goals"])
    return goals


# -- parse_goal on the goals Lean printed ------------------------------------------------


def test_parse_goal_on_recorded_lean_goals() -> None:
    goals = recorded_goals()
    cases = {
        # Mathlib/test/on_goal: Mathlib's ℝ, an absolute value, a disjunction
        "x : ℝ\nh0 : |x| > 1\n⊢ x < 0 ∨ 2 * x > 2": ("R", "\\/", ("x",), ["h0"]),
        # the same after `by_cases`: a case tag, two hypotheses on one line
        "case pos\nx : ℝ\nh0 : |x| > 1\nh1 h2 : x = x\nh3 : x < 0\n⊢ x < 0 ∨ 2 * x > 2": (
            "R",
            "\\/",
            ("x",),
            ["h0", "h1", "h2", "h3"],
        ),
        # Mathlib/test/induction: inaccessible names count, but no tactic can name them
        "case succ\nn✝ : ℕ\na✝ : n✝ = n✝\n⊢ n✝ + 1 = n✝ + 1": ("nat", "=", (), ["a✝"]),
        # core Lean spells the types out
        "x y z : Nat\nh1 : x = y\nh2 : y = z\n⊢ x = z": ("nat", "=", ("x", "y", "z"), ["h1", "h2"]),
        "x : Int\nh0 h : x > 0\n⊢ False": ("Z", "False", ("x",), ["h0", "h"]),
        "x : ℕ\nh : 2 * (2 * (2 * (2 * x))) = 48\n⊢ x = 3": ("nat", "=", ("x",), ["h"]),
        "p q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p ∧ r": (
            "Prop",
            "/\\",
            (),
            ["p", "q", "r", "h1", "h2"],
        ),
        "p q : Prop\n⊢ p ∧ q → q ∧ p": ("Prop", "->", (), ["p", "q"]),
        "case neg\nx : Int\nh : ¬x < 0\n⊢ x = x": ("Z", "=", ("x",), ["h"]),
    }
    for text, (domain, head, variables, hyps) in cases.items():
        assert text in goals, f"not a recorded goal: {text!r}"
        g = parse_goal(text)
        assert (g.domain, g.head, g.variables) == (domain, head, variables), text
        assert [h.name for h in g.hypotheses] == hyps, text
    both = parse_goal("p q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p ∧ r")
    assert both.features["hyp_conj"] == 1.0 and both.hypotheses[3].type == "p ∧ q"


def test_every_recorded_goal_parses_into_names_and_a_conclusion() -> None:
    goals = recorded_goals()
    assert len(goals) >= 40
    for text in goals:
        g = parse_goal(text)
        names = [h.name for h in g.hypotheses] + list(g.variables)
        assert all(n and not any(c.isspace() or c == ":" for c in n) for n in names), text
        assert not any("✝" in v for v in g.variables), text
        assert g.conclusion == " ".join(text.rpartition("⊢ ")[2].split()), text
        assert not any(h.name == "case" for h in g.hypotheses), text


def test_numerals_are_natural_numbers_under_a_lean_header() -> None:
    # Mathlib/test/H20231215_2: `9! % 10 = 0` under `open Real` is about ℕ, not ℝ.
    assert "⊢ 9! % 10 = 0" in recorded_goals()
    header = "import Mathlib\nopen BigOperators\nopen Real\nopen Nat"
    assert scope_of(header) is None
    assert parse_goal("⊢ 9! % 10 = 0", scope_of(header)).domain == "nat"
    assert scope_of("Require Import Reals. Open Scope R_scope.") == "R"  # Coq: unchanged


# -- the texts the search sends ---------------------------------------------------------


def test_drafts_split_into_whole_tactics_and_join_back() -> None:
    draft = (
        "by\n  intro x\n  -- a comment\n  induction x with\n  | zero => rfl\n"
        "  | succ n ih =>\n    simp\n  calc 1 = 1 := rfl\n    _ = 1 := rfl\n  · linarith"
    )
    steps = split_draft("lean", draft)
    assert steps == (
        "intro x",
        "induction x with\n| zero => rfl\n| succ n ih =>\n  simp",
        "calc 1 = 1 := rfl\n  _ = 1 := rfl",
        "· linarith",
    )
    assert proof_text("lean", steps) == draft.replace("  -- a comment\n", "")
    assert split_draft("lean", ":= by simp") == ("simp",)
    # A tactic as the REPL transcripts send it (Mathlib/test/H20231214), indented.
    assert proof_text("lean", ("  intro x",)) == "by\n  intro x"


def test_statement_forms() -> None:
    plain = "theorem t (n : Nat) : n + 0 = n"
    for form in (plain, plain + " :=", plain + " := by", plain + " := by sorry", plain + ":=by"):
        assert statement_for("lean", form) == plain
    assert statement_for("coq", "Theorem t : 1 = 1.") == "Theorem t : 1 = 1."


# -- the search over the replay program and a real transcript ----------------------------


def composed_replay(tmp_path: Path, name: str, extra: list[tuple[dict, dict]]) -> list[str]:
    """The replay program over transcript ``name`` followed by ``extra`` (request, reply)
    pairs composed in the REPL's format, strict about every request."""
    requests, replies = transcript(name)
    requests += [q for q, _ in extra]
    replies += [a for _, a in extra]
    (tmp_path / "s.in").write_text("\n\n".join(json.dumps(q) for q in requests) + "\n")
    (tmp_path / "s.out").write_text("\n\n".join(json.dumps(a) for a in replies) + "\n")
    return [
        sys.executable,
        str(REPLAY),
        str(tmp_path / "s.out"),
        "--requests",
        str(tmp_path / "s.in"),
    ]


def info(line: int, text: str) -> dict[str, Any]:
    return {
        "severity": "info",
        "pos": {"line": line, "column": 0},
        "endPos": {"line": line, "column": 13},
        "data": text,
    }


def test_search_finds_the_recorded_proof(tmp_path: Path) -> None:
    """`proof_branching` as recorded: the draft's tactics go to the REPL one by one, each from
    the proof state the last one made, and the whole proof is checked once at the end."""
    statement = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r"
    proof = "by\n  apply And.intro\n  exact h1.left\n  apply h2\n  exact h1.right"
    check = {"cmd": f"{statement} := {proof}\n\n#print axioms complex_and"}
    # The check's reply is composed: `#print axioms` as Lean words it (test_lean_protocol).
    answer = {"messages": [info(7, "'complex_and' does not depend on any axioms")], "env": 1}
    repl = LeanRepl(composed_replay(tmp_path, "proof_branching", [(check, answer)]))
    trace = tmp_path / "trace.jsonl"
    try:
        r = search(
            repl,
            statement + " :=",
            id="complex_and",
            draft=proof,
            config=SearchConfig(vacuity_probe=False),
            trace=trace,
        )
    finally:
        repl.close()
    assert r.status == "proved", r.failure
    assert r.proof == proof and r.backend == "lean"
    assert r.calls == 6  # open, four tactics, the check: nothing else was sent
    assert repl.process.starts == 1
    (t,) = read_trace(trace)
    assert t.solved and t.problem["backend"] == "lean"
    steps = [a for a in t.attempts if a["family"] == "draft"]
    assert [a["tactic"] for a in steps] == proof.split("\n  ")[1:]
    assert [a["status"] for a in steps] == ["open", "open", "open", "finished"]
    assert [a["goals_after"] for a in steps] == [2, 1, 1, 0]
    assert steps[0]["domain"] == "Prop" and steps[0]["head"] == "/\\"
    assert t.attempts[-1]["family"] == "check" and t.attempts[-1]["status"] == "check"
    assert t.on_path() == {0, 1, 2, 3}


# -- the search over the scripted double -------------------------------------------------

SCRIPTED_REPL = r'''
"""SCRIPTED DOUBLE of the Lean 4 REPL, for tests only (no Lean toolchain here).

argv: TABLE.json LOG.jsonl. Requests and replies are framed as the REPL frames them. A
command is answered from table["commands"] (by its exact text; each sorry gets a new proof
state); a tactic from table["tactics"][first goal][tactic]: {"goals": [...]} for the goals it
leaves in place of the first, {"error": text} for what Lean threw, or "hang".
"""
import json
import sys
import time

table = json.load(open(sys.argv[1], encoding="utf-8"))
log = open(sys.argv[2], "a", encoding="utf-8")
states = {}
envs = 0
NOT_RECORDED = "scripted REPL double: no reply recorded for this "


def answer(request):
    global envs
    if "cmd" in request:
        reply = table["commands"].get(request["cmd"])
        if reply is None:
            reply = {"messages": [{"severity": "error", "pos": {"line": 1, "column": 0},
                                   "endPos": None, "data": NOT_RECORDED + "command"}]}
        reply = json.loads(json.dumps(reply))
        for sorry in reply.get("sorries", []):
            sorry["proofState"] = len(states)
            states[len(states)] = [sorry["goal"]]
        reply["env"] = envs
        envs += 1
        return reply
    goals = states.get(request.get("proofState"))
    if goals is None:
        return {"message": "Unknown proof state."}
    outcome = table["tactics"].get(goals[0], {}).get(request["tactic"])
    if outcome is None:
        return {"message": "Lean error:\n" + NOT_RECORDED + "tactic on this goal"}
    if outcome == "hang":
        time.sleep(3600)
    if "error" in outcome:
        return {"message": "Lean error:\n" + outcome["error"]}
    left = outcome["goals"] + goals[1:]
    states[len(states)] = left
    status = "Incomplete: open goals remain" if left else "Completed"
    return {"proofStatus": status, "proofState": len(states) - 1, "goals": left}


lines = []
for line in sys.stdin:
    if line.strip():
        lines.append(line)
        continue
    if not lines:
        continue
    request = json.loads("".join(lines), strict=False)
    lines = []
    log.write(json.dumps(request, ensure_ascii=False) + "\n")
    log.flush()
    sys.stdout.write(json.dumps(answer(request), ensure_ascii=False) + "\n\n")
    sys.stdout.flush()
'''

STATEMENT = "theorem sq_sum (x y : ℝ) : 2 * x * y ≤ x ^ 2 + y ^ 2"
GOAL = "x y : ℝ\n⊢ 2 * x * y ≤ x ^ 2 + y ^ 2"
HINT = "nlinarith [sq_nonneg (x - y), sq_nonneg x, sq_nonneg y]"


def linarith_failed(goal: str, negation: str) -> str:
    """linarith's (and nlinarith's) failure, as Mathlib words it:
    ``throwError "linarith failed to find a contradiction\\n{g}\\n{e.toMessageData}"`` in
    Mathlib/Tactic/Linarith/Frontend.lean, with ``g`` the goal after negating the conclusion."""
    hyps = goal.rpartition("⊢")[0]
    return (
        f"linarith failed to find a contradiction\ncase a\n{hyps}a✝ : {negation}\n⊢ False\nfailed"
    )


def sorry_reply(goal: str, column: int) -> dict[str, Any]:
    """The REPL's answer to ``... := by sorry`` (the shape of every transcript's)."""
    return {
        "sorries": [
            {
                "proofState": 0,
                "pos": {"line": 1, "column": column},
                "goal": goal,
                "endPos": {"line": 1, "column": column + 5},
            }
        ],
        "messages": [
            {
                "severity": "warning",
                "pos": {"line": 1, "column": 8},
                "endPos": {"line": 1, "column": 14},
                "data": "declaration uses `sorry`",
            }
        ],
    }


def sq_sum_table(tactics: dict[str, Any] | None = None) -> dict[str, Any]:
    found = f"{STATEMENT} := by\n  {HINT}\n\n#print axioms sq_sum"
    axioms = "'sq_sum' depends on axioms: [propext, Classical.choice, Quot.sound]"
    failed = {"error": linarith_failed(GOAL, "x ^ 2 + y ^ 2 < 2 * x * y")}
    return {
        "commands": {
            "import Mathlib": {},
            f"{STATEMENT} := by sorry": sorry_reply(GOAL, len(STATEMENT) + 7),
            found: {"messages": [info(4, axioms)]},
        },
        "tactics": {
            GOAL: {"linarith": failed, "nlinarith": failed, HINT: {"goals": []}, **(tactics or {})}
        },
    }


def scripted(tmp_path: Path, table: dict[str, Any], **kw: Any) -> tuple[LeanRepl, Path]:
    """A LeanRepl over the SCRIPTED DOUBLE, and the file it logs each request to."""
    program = tmp_path / "scripted_lean_repl.py"
    program.write_text(SCRIPTED_REPL, encoding="utf-8")
    (tmp_path / "table.json").write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    log = tmp_path / "requests.jsonl"
    return LeanRepl(
        [sys.executable, str(program), str(tmp_path / "table.json"), str(log)], **kw
    ), log


def requests_sent(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_a_failed_linarith_is_classified_and_nlinarith_comes_next(tmp_path: Path) -> None:
    """A draft step fails; the repair at that position follows the failure: linarith ->
    nlinarith -> nlinarith with square hints (from the goal's variables x, y)."""
    repl, log = scripted(tmp_path, sq_sum_table())
    trace = tmp_path / "trace.jsonl"
    try:
        r = search(repl, STATEMENT + " :=", "import Mathlib", draft="by\n  linarith", trace=trace)
    finally:
        repl.close()
    assert r.status == "proved", r.failure
    assert r.proof == f"by\n  {HINT}"
    assert r.vacuous is False  # no hypotheses: nothing to probe
    (t,) = read_trace(trace)
    first, second = t.attempts[0], t.attempts[1]
    assert (first["tactic"], first["family"], first["status"]) == ("linarith", "draft", "error")
    assert first["failure"]["kind"] == FailureKind.TACTIC_FAILED.value
    assert first["failure"]["message"].startswith("Lean error:\nlinarith failed")
    assert (first["domain"], first["head"]) == ("R", "<=")
    assert (second["tactic"], second["reacting_to"]) == ("nlinarith", "linarith")
    assert second["status"] == "error" and second["condition"] == "tactic_failed"
    hint = next(a for a in t.attempts if a["tactic"] == HINT)
    assert hint["reacting_to"] == "nlinarith" and hint["status"] == "finished"
    assert t.solved and t.on_path() == {t.attempts.index(hint)}
    sent = requests_sent(log)
    assert sent[0] == {"cmd": "import Mathlib"}  # the header once, its env reused after
    assert sent[1] == {"cmd": f"{STATEMENT} := by sorry", "env": 0}
    assert sent[-1]["cmd"].startswith(f"{STATEMENT} := by\n  {HINT}") and sent[-1]["env"] == 0
    assert sum("tactic" in q for q in sent) == r.calls - 2  # all but the open and the check
    assert repl.process.starts == 1


def test_without_a_draft_the_cascade_still_follows_linarith(tmp_path: Path) -> None:
    repl, log = scripted(tmp_path, sq_sum_table())
    try:
        r = search(repl, STATEMENT + " :=", "import Mathlib", trace=tmp_path / "t.jsonl")
    finally:
        repl.close()
    assert r.status == "proved" and r.proof == f"by\n  {HINT}"
    (t,) = read_trace(tmp_path / "t.jsonl")
    tactics = [a["tactic"] for a in t.attempts]
    after = t.attempts[tactics.index("linarith") + 1]
    assert (after["tactic"], after["reacting_to"]) == ("nlinarith", "linarith")
    # Every tactic the double had no reply for was an error the search went past.
    assert r.calls == len([q for q in requests_sent(log) if "tactic" in q]) + 2


def test_a_proof_the_final_check_rejects_is_not_proved(tmp_path: Path) -> None:
    """Tactic mode may accept what the whole-proof check does not (here: the check's reply
    is not recorded, so the double answers with an error): the search must not report it."""
    table = sq_sum_table()
    del table["commands"][f"{STATEMENT} := by\n  {HINT}\n\n#print axioms sq_sum"]
    repl, _ = scripted(tmp_path, table)
    try:
        r = search(repl, STATEMENT + " :=", "import Mathlib", config=SearchConfig(budget_calls=12))
    finally:
        repl.close()
    assert r.status == "failed" and r.proof is None


def test_vacuity_probe_on_contradictory_hypotheses(tmp_path: Path) -> None:
    statement = "theorem odd (x : ℝ) (h₀ : 0 < x) (h₁ : x < 0) : x = 7"
    goal = "x : ℝ\nh₀ : 0 < x\nh₁ : x < 0\n⊢ x = 7"
    probe = f"{statement} := by\n  intros\n  exfalso\n  linarith\n\n#print axioms odd"
    found = f"{statement} := by\n  linarith\n\n#print axioms odd"
    axioms = "'odd' depends on axioms: [propext, Classical.choice, Quot.sound]"
    table = {
        "commands": {
            "import Mathlib": {},
            f"{statement} := by sorry": sorry_reply(goal, len(statement) + 7),
            found: {"messages": [info(4, axioms)]},
            probe: {"messages": [info(6, axioms)]},
        },
        "tactics": {goal: {"linarith": {"goals": []}}},
    }
    repl, log = scripted(tmp_path, table)
    try:
        r = search(repl, statement + " :=", "import Mathlib", draft="by linarith")
    finally:
        repl.close()
    assert r.status == "proved" and r.proof == "by\n  linarith"
    assert r.vacuous is True
    assert requests_sent(log)[-1]["cmd"] == probe


# -- a Lean REPL that restarts, a statement ending in `by`, a header that fails --


def test_a_statement_ending_in_by(tmp_path: Path) -> None:
    repl, _ = scripted(tmp_path, sq_sum_table())
    try:
        r = search(repl, STATEMENT + " := by", "import Mathlib", draft=f"by {HINT}")
    finally:
        repl.close()
    assert r.status == "proved"


def test_a_tactic_that_hangs_costs_the_repl_not_the_search(tmp_path: Path) -> None:
    """Past the tactic's time LeanRepl kills the REPL; its proof states die with it. The
    search must open the statement again and carry on, not run every later tactic into a
    dead session."""
    repl, log = scripted(tmp_path, sq_sum_table({"positivity": "hang"}))
    config = SearchConfig(tactic_timeout_s=0.5, budget_seconds=30)
    try:
        r = search(
            repl, STATEMENT + " :=", "import Mathlib", draft="by\n  positivity", config=config
        )
    finally:
        repl.close()
    assert repl.process.starts == 2
    assert r.status == "proved" and r.proof == f"by\n  {HINT}"
    assert [q for q in requests_sent(log) if q.get("cmd") == "import Mathlib"] == [
        {"cmd": "import Mathlib"}
    ] * 2


def test_a_header_that_does_not_compile_ends_the_search_with_an_error(tmp_path: Path) -> None:
    table = sq_sum_table()
    # The wording failure.py classifies as a header error (no transcript has one).
    bad = {"severity": "error", "pos": {"line": 1, "column": 0}, "endPos": None}
    table["commands"]["import Mathlb"] = {
        "messages": [{**bad, "data": "unknown module prefix 'Mathlb'"}]
    }
    repl, log = scripted(tmp_path, table)
    try:
        r = search(repl, STATEMENT + " :=", "import Mathlb")
    finally:
        repl.close()
    assert r.status == "error" and r.failure is not None
    assert r.failure.kind is FailureKind.HEADER_ERROR
    assert requests_sent(log) == [{"cmd": "import Mathlb"}]


# -- the real REPL ------------------------------------------------------------------------


@pytest.mark.lean
def test_live_search_on_a_mathlib_free_goal(tmp_path: Path) -> None:
    try:
        repl = LeanRepl(timeout_s=60)
    except ToolNotFound as exc:
        pytest.skip(f"needs the Lean REPL: {exc}")
    try:
        r = search(
            repl,
            "theorem t (n : Nat) : n + 0 = n := by",
            config=SearchConfig(tactic_timeout_s=20, budget_seconds=300),
            trace=tmp_path / "live.jsonl",
        )
        assert r.status == "proved", r.failure
        again = repl.check("", "theorem t (n : Nat) : n + 0 = n", r.proof or "")
        assert again.status is Status.PASS
    finally:
        repl.close()
    (t,) = read_trace(tmp_path / "live.jsonl")
    assert t.attempts[0]["domain"] == "nat"
