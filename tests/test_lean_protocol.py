"""The Lean REPL protocol layer against real transcripts (shared/fixtures/lean-repl), and the
process layer through a real pipe to a replay program (tests/lean_replay.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import SHARED

from lemmata.provers.failure import classify_lean
from lemmata.provers.lean import (
    CommandResponse,
    LeanCrashed,
    LeanProcess,
    LeanRepl,
    LeanTimeout,
    ReplError,
    ResponseReader,
    TacticResponse,
    parse_axioms,
    parse_response,
    screen_lean_proof,
    split_transcript,
)
from lemmata.provers.result import FailureKind, Status

FIXTURES = SHARED / "fixtures" / "lean-repl"
REPLAY = Path(__file__).with_name("lean_replay.py")
PAIRS = sorted(p for p in FIXTURES.rglob("*.expected.out"))


def replies(name: str) -> list:
    return [
        parse_response(json.loads(b))
        for b in split_transcript((FIXTURES / f"{name}.expected.out").read_text())
    ]


def test_fixtures_are_there() -> None:
    assert len(PAIRS) >= 50, f"expected the Lean REPL transcripts under {FIXTURES}"


@pytest.mark.parametrize("path", PAIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_transcript_parses(path: Path) -> None:
    requests = split_transcript(
        path.with_name(path.name.replace(".expected.out", ".in")).read_text()
    )
    answers = split_transcript(path.read_text())
    assert len(answers) == len(requests)
    for request, answer in zip(requests, answers, strict=True):
        req = json.loads(request, strict=False)
        reply = parse_response(json.loads(answer))
        if "tactic" in req:
            assert isinstance(reply, TacticResponse | ReplError)
        elif any(k in req for k in ("cmd", "path", "unpickleEnvFrom")):
            assert isinstance(reply, CommandResponse | ReplError)
        else:  # pickling a proof state answers like a tactic, an environment like a command
            assert isinstance(reply, TacticResponse | CommandResponse | ReplError)


def test_readme_session_gives_sorries_goals_and_completion() -> None:
    cmd, step1, step2 = replies("readme")
    assert isinstance(cmd, CommandResponse) and cmd.env == 0
    assert cmd.sorries[0].proof_state == 0 and cmd.sorries[0].goal == "x : Unit\n⊢ Nat"
    assert (cmd.sorries[0].line, cmd.sorries[0].column) == (1, 29)
    assert cmd.messages[0].severity == "warning" and "sorry" in cmd.messages[0].text
    assert (
        isinstance(step1, TacticResponse)
        and step1.goals == ("x : Unit\n⊢ Int",)
        and not step1.completed
    )
    assert isinstance(step2, TacticResponse) and step2.completed and step2.proof_state == 2


def test_errors_and_their_failure_modes() -> None:
    assert replies("unknown_proof_state")[1] == ReplError("Unknown proof state.")
    tactic_error = replies("unknown_tactic")[1]
    assert isinstance(tactic_error, ReplError)
    assert classify_lean(tactic_error.message).kind is FailureKind.SYNTAX_ERROR
    bad_premise = replies("invalid_tactic")[1]
    assert isinstance(bad_premise, TacticResponse) and not bad_premise.completed
    assert classify_lean(bad_premise.errors[0].text).kind is FailureKind.UNKNOWN_IDENTIFIER
    unfinished = replies("unfinished_tactic_block")[0]
    assert classify_lean(unfinished.errors[0].text).kind is FailureKind.UNSOLVED_GOALS
    assert (unfinished.errors[0].line, unfinished.errors[0].column) == (1, 15)
    mismatch = [
        r for r in replies("app_type_mismatch2") if isinstance(r, CommandResponse) and r.errors
    ][0]
    assert classify_lean(mismatch.errors[0].text).kind in (
        FailureKind.TYPE_MISMATCH,
        FailureKind.UNSOLVED_GOALS,
    )
    metavars = replies("app_type_mismatch")[-1]
    assert isinstance(metavars, TacticResponse) and not metavars.completed and metavars.goals == ()


def test_every_fixture_error_gets_a_known_kind() -> None:
    """No error message in the transcripts falls through to OTHER."""
    seen = 0
    for path in PAIRS:
        for block in split_transcript(path.read_text()):
            reply = parse_response(json.loads(block))
            texts = (
                [reply.message] if isinstance(reply, ReplError) else [m.text for m in reply.errors]
            )
            for text in texts:
                if text.startswith(("Unknown environment", "Unknown proof state")):
                    continue
                seen += 1
                assert classify_lean(text).kind is not FailureKind.OTHER, text
    assert seen >= 10


def test_reader_reassembles_replies_from_any_chunking() -> None:
    text = (FIXTURES / "proof_step.expected.out").read_text()
    whole = [json.loads(b) for b in split_transcript(text)]
    for size in (1, 7, 64, len(text)):
        reader = ResponseReader()
        got = []
        for i in range(0, len(text), size):
            got += list(reader.feed(text[i : i + size]))
        got += list(reader.close())
        assert got == whole


def test_axioms_and_screening() -> None:
    class M:
        def __init__(self, text):
            self.text = text

    # Lean's wording for `#print axioms` (composed here: the transcripts have no such reply).
    assert parse_axioms([M("'t' depends on axioms: [propext, Classical.choice]")], "t") == [
        "propext",
        "Classical.choice",
    ]
    assert parse_axioms([M("'t' does not depend on any axioms")], "t") == []
    assert parse_axioms([M("'u' does not depend on any axioms")], "t") is None
    assert (
        screen_lean_proof("by\n  simp\ntheorem other : False := sorry").kind
        is FailureKind.STATEMENT_CHANGED
    )
    assert screen_lean_proof("by\n  sorry").kind is FailureKind.USES_SORRY
    assert screen_lean_proof("by\n  simp -- no sorry here") is None


def replay(name: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        str(REPLAY),
        str(FIXTURES / f"{name}.expected.out"),
        "--requests",
        str(FIXTURES / f"{name}.in"),
        *extra,
    ]


@pytest.mark.parametrize(
    "name", ["readme", "proof_step", "pickle_environment", "app_type_mismatch", "invalid_tactic"]
)
def test_transcripts_through_a_real_pipe(name: str) -> None:
    proc = LeanProcess(replay(name))
    requests = [
        json.loads(b, strict=False) for b in split_transcript((FIXTURES / f"{name}.in").read_text())
    ]
    expected = [
        json.loads(b) for b in split_transcript((FIXTURES / f"{name}.expected.out").read_text())
    ]
    try:
        for request, want in zip(requests, expected, strict=True):
            assert proc.request(request, timeout=10) == want
    finally:
        proc.kill()


def test_hung_request_times_out_and_the_process_comes_back() -> None:
    proc = LeanProcess(replay("readme", "--hang-at", "2"))
    requests = [json.loads(b) for b in split_transcript((FIXTURES / "readme.in").read_text())]
    proc.request(requests[0], timeout=10)
    first_pid = proc.pid
    with pytest.raises(LeanTimeout):
        proc.request(requests[1], timeout=0.5)
    assert not proc.alive
    # The next request starts a fresh process, which replays from its first reply.
    assert proc.request(requests[0], timeout=10)["env"] == 0
    assert proc.pid != first_pid and proc.starts == 2
    proc.kill()


def test_a_dying_repl_is_a_crash() -> None:
    proc = LeanProcess(replay("readme", "--exit-at", "1"))
    with pytest.raises(LeanCrashed, match="exited"):
        proc.request({"cmd": "def f (x : Unit) : Nat := by sorry"}, timeout=10)


def test_session_on_recorded_replies() -> None:
    """LeanRepl.open/run, driven by the `proof_step` transcript through the replay program."""
    repl = LeanRepl([sys.executable, str(REPLAY), str(FIXTURES / "proof_step.expected.out")])
    session = repl.open("", "def f : Nat")
    assert session.root.goals == ("⊢ Nat",)
    a = session.run("apply Int.natAbs")
    assert a.goals == ("⊢ Int",) and a.status == "open"
    b = session.run("have t : Nat := 42", state=session.root.state)  # backtrack to the root
    assert b.goals == ("t : Nat\n⊢ Nat",)
    c = session.run("exact t", state=b.state)
    assert c.finished and session.proof_of(c.state) == ["have t : Nat := 42", "exact t"]
    repl.close()


def composed(tmp_path: Path, *objects: dict) -> Path:
    path = tmp_path / "composed.expected.out"
    path.write_text("\n\n".join(json.dumps(o) for o in objects) + "\n")
    return path


def test_check_verdicts(tmp_path: Path) -> None:
    """check() on replies in the REPL's format (composed from the transcripts' shapes)."""
    info = {
        "severity": "info",
        "pos": {"line": 3, "column": 0},
        "endPos": {"line": 3, "column": 13},
    }
    script = composed(
        tmp_path,
        {"env": 0},  # the header
        {"messages": [{**info, "data": "'t' depends on axioms: [propext]"}], "env": 1},
        {"messages": [{**info, "data": "'t' depends on axioms: [sorryAx]"}], "env": 2},
        {
            "messages": [
                {
                    "severity": "error",
                    "pos": {"line": 1, "column": 40},
                    "endPos": {"line": 1, "column": 42},
                    "data": "unsolved goals\nn : Nat\n⊢ n + 0 = n",
                }
            ],
            "env": 3,
        },
        {"messages": [{**info, "data": "'t' depends on axioms: [my_axiom]"}], "env": 4},
    )
    repl = LeanRepl([sys.executable, str(REPLAY), str(script)])
    stmt = "theorem t (n : Nat) : n + 0 = n"
    ok = repl.check("import Lean", stmt, "by simp")
    assert ok.status is Status.PASS and ok.axioms == ("propext",)
    assert repl.check("import Lean", stmt, "by exact?").failure_mode.kind is FailureKind.USES_SORRY
    unsolved = repl.check("import Lean", stmt, "by skip")
    assert (
        unsolved.status is Status.FAIL and unsolved.failure_mode.kind is FailureKind.UNSOLVED_GOALS
    )
    assert (
        repl.check("import Lean", stmt, "by exact my_axiom").failure_mode.kind
        is FailureKind.BAD_AXIOM
    )
    assert repl.process.starts == 1  # the header ran once, its environment reused
    assert repl.check("import Lean", stmt, "by sorry").failure_mode.kind is FailureKind.USES_SORRY
    repl.close()


def test_missing_repl_says_how_to_get_it() -> None:
    from lemmata.errors import ToolNotFound

    with pytest.raises(ToolNotFound, match="repl"):
        LeanRepl(["no-such-lean-repl"])


@pytest.mark.lean
def test_real_lean_toolchain_checks_a_proof() -> None:
    repl = LeanRepl()
    r = repl.check("", "theorem t (n : Nat) : n + 0 = n", "by simp")
    assert r.status is Status.PASS
    bad = repl.check("", "theorem t2 : 1 = 2", "by rfl")
    assert bad.status is Status.FAIL
    repl.close()


def strict_repl(name: str, **kw) -> LeanRepl:
    """A LeanRepl over the replay program, which rejects any request not in the transcript."""
    return LeanRepl(replay(name), **kw)


def test_pickling_proof_states_as_recorded() -> None:
    repl = strict_repl("pickle_proof_state_1")
    assert repl.command("import Lean").env == 0
    cmd = repl.command("def f : Nat := by sorry", env=0)
    assert cmd.sorries[0].proof_state == 0
    assert repl.pickle_proof_state(0, "test/c.olean").proof_state == 1
    restored = repl.unpickle_proof_state("test/c.olean")
    assert restored.proof_state == 2 and restored.goals == ("⊢ Nat",)
    step = repl.tactic("have t : Nat := 42", 2)
    assert step.goals == ("t : Nat\n⊢ Nat",)
    repl.pickle_proof_state(3, "test/d.olean")
    assert repl.unpickle_proof_state("test/d.olean").proof_state == 5
    assert repl.tactic("exact t", 5).completed
    repl.close()


def test_pickling_environments_and_file_mode_as_recorded() -> None:
    repl = strict_repl("pickle_environment")
    assert repl.command("def f := 42").env == 0
    repl.pickle_env(0, "test/a.olean")
    assert repl.unpickle_env("test/a.olean").env == 1
    assert repl.command("example : f = 42 := by rfl", env=1).errors == []
    repl.close()
    files = strict_repl("file")
    reply = files.run_file("test/file.lean", all_tactics=True)
    assert reply.tactics[0].tactic == "exact rfl" and reply.tactics[0].goals == "⊢ f + g = 39"
    assert "rfl" in reply.tactics[0].used_constants
    files.close()


def test_the_process_is_recycled_after_n_requests() -> None:
    repl = LeanRepl(
        [sys.executable, str(REPLAY), str(FIXTURES / "readme.expected.out")], recycle_after=1
    )
    assert repl.command("def f (x : Unit) : Nat := by sorry").env == 0
    assert repl.command("def f (x : Unit) : Nat := by sorry").env == 0  # a new process replays anew
    assert repl.process.starts == 2
    repl.close()
