"""The trap set: inputs that would prove ``False`` or reach outside the prover, none of which may
come out proved (issue 22, item 7).

Coq cases run the real coqtop. Each trap has a positive control beside it (the same verifier
proves an honest theorem), so a verifier that failed everything would not pass. Lean cases run
the replay program (tests/lean_replay.py) over transcripts composed here, whose replies would
make the theorem pass if the request were ever sent: a trap passes only when the verifier
refuses before sending anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lemmata.provers import CoqTop, LeanRepl, Status
from lemmata.provers.coq.files import read_coq_files
from lemmata.provers.coq.output import read_assumptions
from lemmata.provers.coq.screen import screen_header, unsafe_command
from lemmata.provers.lean.screen import screen_lean_header, screen_lean_proof
from lemmata.provers.result import FailureKind, FailureMode

K = FailureKind
SHARED = Path(__file__).resolve().parents[3] / "shared"
MINIF2F = SHARED / "data" / "minif2f-rocq" / "valid"
SUITE = Path(__file__).resolve().parents[2] / "provers" / "suites" / "coq_basic.jsonl"
REPLAY = Path(__file__).resolve().parents[1] / "lean_replay.py"

SPIN = "Fixpoint spin (n : nat) : False := spin n."
NEG = "Inductive neg := C : (neg -> False) -> neg."
NEG_PROOF = "assert (f : neg -> False) by (intros [h]; exact (h (C h))). exact (f (C f))."
HURKENS = "exact (TypeNeqSmallType.paradox Type eq_refl)."


@pytest.fixture(scope="module")
def coq(coqtop_path: str) -> Any:
    with CoqTop(coqtop_path, timeout_s=30) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def trusting(coqtop_path: str) -> Any:
    """A verifier that takes headers as trusted: Coq itself must then catch the trick."""
    with CoqTop(coqtop_path, timeout_s=30, trusted_header=True) as verifier:
        yield verifier


def _fm(result: Any) -> FailureMode:
    assert result.failure_mode is not None, result
    return result.failure_mode


def _not_proved(result: Any, kind: FailureKind) -> None:
    assert result.status is not Status.PASS, result
    assert result.failure_mode is not None and result.failure_mode.kind is kind, result


# -- Coq: switched-off checkers, caught in Print Assumptions (header trusted) -----------------


@pytest.mark.parametrize(
    ("header", "proof", "kind"),
    [
        (
            f"Unset Guard Checking.\n{SPIN}\nSet Guard Checking.",
            "exact (spin 0).",
            K.ASSUMED_GUARDED,
        ),
        (f"#[bypass_check(guard)] {SPIN}", "exact (spin 0).", K.ASSUMED_GUARDED),
        (
            "Unset Guard Checking.",
            "exact ((fix f (n : nat) : False := f n) 0).",
            K.ASSUMED_GUARDED,
        ),
        (f"Unset Positivity Checking.\n{NEG}", NEG_PROOF, K.ASSUMED_POSITIVE),
        (f"Local Unset Positivity Checking.\n{NEG}", NEG_PROOF, K.ASSUMED_POSITIVE),
        (f"#[bypass_check(positivity)] {NEG}", NEG_PROOF, K.ASSUMED_POSITIVE),
        (
            "Require Import Coq.Logic.Hurkens.\nUnset Universe Checking.",
            HURKENS,
            K.UNSAFE_UNIVERSES,
        ),
    ],
    ids=[
        "guard",
        "bypass_guard",
        "guard_inline_fix",
        "positivity",
        "local_positivity",
        "bypass_positivity",
        "type_in_type",
    ],
)
def test_false_is_never_proved_with_a_checker_off(
    trusting: Any, coq: Any, header: str, proof: str, kind: FailureKind
) -> None:
    _not_proved(trusting.check(header, "Theorem t : False.", proof), kind)
    # Untrusted (the default), the same header does not even reach Coq.
    _not_proved(coq.check(header, "Theorem t : False.", proof), K.UNSAFE_INPUT)
    # The control: the same verifiers prove an honest theorem.
    assert trusting.check("", "Theorem t : True.", "exact I.").ok
    assert coq.check("", "Theorem t : True.", "exact I.").ok


def test_every_theorem_under_universe_checking_off_is_untrusted(trusting: Any) -> None:
    r = trusting.check("Unset Universe Checking.", "Theorem t : True.", "exact I.")
    _not_proved(r, K.UNSAFE_UNIVERSES)
    assert "unsafe hierarchy" in r.failure_mode.message


def test_an_axiom_whose_type_spans_lines_is_still_counted(trusting: Any) -> None:
    # Coq prints a long axiom as "ax" on one line and ": type" indented below it.
    conj = " /\\ ".join(["n = n"] * 12)
    header = f"Axiom ax : forall n : nat, {conj} /\\ False."
    r = trusting.check(header, "Theorem t : False.", "apply (ax 0).")
    _not_proved(r, K.BAD_AXIOM)
    assert r.axioms == ("Top.ax",)


def test_print_assumptions_is_read_strictly() -> None:
    read = read_assumptions(
        "Axioms:\nspin is assumed to be guarded.\nneg is assumed to be positive.\n"
        "x relies on an unsafe hierarchy.\nTheory:\nType hierarchy is collapsed (logic is "
        "inconsistent)\n"
    )
    assert [k for _, k in read.unsafe] == [
        "assumed_guarded",
        "assumed_positive",
        "unsafe_universes",
        "unsafe_universes",
    ]
    assert read_assumptions("Closed under the global context\n").unknown == ()
    # What cannot be read is not trusted: silence, a new kind of line, an error.
    assert read_assumptions("\n").unknown
    assert read_assumptions("Axioms:\nt relies on definitional UIP.\n").unknown
    assert read_assumptions("Error: The reference t was not found.\n").unknown


# -- Coq: commands that reach outside, in proofs and headers ----------------------------------

OUTSIDE = {
    "redirect": 'Redirect "lemmata_trap" Print nat.',
    "declare_ml": 'Declare ML Module "lemmata_trap_plugin".',
    "add_loadpath": 'Add LoadPath "/tmp" as Trap.',
    "add_rec_loadpath": 'Add Rec LoadPath "/tmp" as Trap.',
    "add_ml_path": 'Add ML Path "/tmp".',
    "cd": 'Cd "/tmp".',
    "pwd": "Pwd.",
    "load": 'Load "/tmp/lemmata_trap.v".',
    "extraction_file": 'Extraction "lemmata_trap.ml" nat.',
    "separate_extraction": "Separate Extraction nat.",
    "set_uip": "Set Definitional UIP.",
    "commented": "Unset (* hidden *) Guard Checking.",
}


@pytest.mark.parametrize("sentence", OUTSIDE.values(), ids=OUTSIDE.keys())
def test_outside_commands_are_refused_in_proofs(coq: Any, sentence: str) -> None:
    for proof in (f"{sentence} exact I.", f"Fail {sentence} exact I.", f"exact I. {sentence}"):
        r = coq.check("", "Theorem t : True.", proof)
        _not_proved(r, K.UNSAFE_INPUT)
        assert r.failure_mode.sentence is not None and "exact" not in r.failure_mode.sentence
    assert coq.check("", "Theorem t : True.", "exact I.").ok


@pytest.mark.parametrize("sentence", OUTSIDE.values(), ids=OUTSIDE.keys())
def test_outside_commands_are_refused_in_headers(coq: Any, sentence: str) -> None:
    for header in (sentence, f"Require Import Arith.\nLocal {sentence}", f"Time {sentence}"):
        r = coq.check(header, "Theorem t : True.", "exact I.")
        _not_proved(r, K.UNSAFE_INPUT)
        assert "trusted_header" in r.failure_mode.message
    with pytest.raises(ValueError, match="refused"):
        coq.open(sentence, "Theorem t : True.")


def test_a_redirect_writes_no_file(coq: Any, trusting: Any) -> None:
    trusting.check("", "Theorem t : True.", "exact I.")  # a process and its folder exist
    scratch = Path(trusting.process._scratch)
    r = coq.check('Redirect "trap_out" Print nat.', "Theorem t : True.", "exact I.")
    _not_proved(r, K.UNSAFE_INPUT)
    r = trusting.check("", "Theorem t : True.", 'Redirect "trap_out" Print nat. exact I.')
    _not_proved(r, K.UNSAFE_INPUT)
    assert not list(scratch.glob("trap_out*"))


def test_the_proof_screen_is_an_allowlist(coq: Any) -> None:
    stmt = "Theorem t : forall n : nat, n + 0 = n /\\ 0 + n = n."
    allowed = (
        "Proof. intros n. split. all: simpl. 2: { reflexivity. } - Check nat. Search (_ + 0). "
        "Show. (induction n; simpl; auto). Qed."
    )
    assert coq.check("", stmt, allowed).ok
    for refused in (
        "Opaque plus. intros n. split; auto.",
        "Hint Resolve plus_n_O. intros n. split; auto.",
        "#[local] Hint Resolve plus_n_O : core. intros n. split; auto.",
        'Locate File "Init.v". intros n. split; auto.',
        "Print LoadPath. intros n. split; auto.",
        "Ltac t := auto. intros n. split; auto.",
        "Proof (fun n => conj eq_refl eq_refl). ",
    ):
        r = coq.check("", stmt, refused)
        assert r.status is Status.FAIL and r.failure_mode.kind in {
            K.STATEMENT_CHANGED,
            K.UNSAFE_INPUT,
        }, (refused, r)
        assert r.failure_mode.index == 0


def test_a_session_refuses_outside_commands(coq: Any) -> None:
    session = coq.open("", "Theorem t : True.")
    for sentence in ('Cd "/tmp"', "Pwd", 'Add LoadPath "/tmp" as X', "Fail Pwd"):
        step = session.run(sentence)
        assert step.failed and step.failure_mode.kind is K.UNSAFE_INPUT, step
    # A query is one read-only sentence: coqtop would run a second one sent on its line.
    assert "nat" in session.query("Check nat")
    for query in ('Check nat. Redirect "trap_out" Print nat.', 'Locate File "Init.v"'):
        with pytest.raises(ValueError, match="read-only query"):
            session.query(query)
    assert session.run("exact I").finished
    session.close()


def test_the_project_headers_pass_the_screen() -> None:
    theorems, problems = read_coq_files(MINIF2F)
    assert len(theorems) >= 240 and not problems
    refused = {t.id: screen_header(t.header) for t in theorems}
    assert {k: v for k, v in refused.items() if v is not None} == {}
    suite = [json.loads(line) for line in SUITE.read_text().splitlines() if line.strip()]
    assert suite and all(screen_header(p.get("header", "")) is None for p in suite)


def test_header_screen_reasons_name_the_command() -> None:
    assert "Declare ML Module" in (unsafe_command('Declare ML Module "x".') or "")
    assert "Guard Checking" in (unsafe_command("#[local] Unset Guard Checking.") or "")
    assert "Universe Checking" in (unsafe_command("Global Unset Universe Checking.") or "")
    for fine in (
        "Add Field Rfield : Rfield_theory.",
        "Declare Scope my_scope.",
        "Extraction nat.",
        "Set Guard Checking.",
        "Set Printing All.",
        "Axiom cheat : False.",  # Print Assumptions reports it
    ):
        assert unsafe_command(fine) is None, fine


# -- Lean: code that runs while Lean elaborates -----------------------------------------------

INFO = {"severity": "info", "pos": {"line": 3, "column": 0}, "endPos": {"line": 3, "column": 6}}
PASSING = {"messages": [{**INFO, "data": "'t' does not depend on any axioms"}], "env": 0}


def _would_pass(tmp_path: Path, *replies: dict[str, Any]) -> LeanRepl:
    """A REPL whose replies pass theorem ``t``: it proves any screen that lets input through."""
    script = tmp_path / "would_pass.expected.out"
    script.write_text("\n\n".join(json.dumps(r) for r in (replies or (PASSING,))) + "\n")
    return LeanRepl([sys.executable, str(REPLAY), str(script)])


LEAN_PROOFS = {
    "eval": 'by\n  trivial\n#eval IO.FS.writeFile "/tmp/lemmata_trap" "x"',
    "eval_after_comment": "by\n  trivial /- -/ #eval IO.Process.exit 0",
    "run_cmd": 'by\n  trivial\nrun_cmd do IO.FS.writeFile "/tmp/lemmata_trap" "x"',
    "run_tac": 'by\n  run_tac do IO.FS.writeFile "/tmp/lemmata_trap" "x"\n  trivial',
    "run_elab": "by\n  exact (by run_elab pure () ; trivial)",
    "skip_kernel": "by\n  set_option debug.skipKernelTC true in\n  trivial",
    "implemented_by": "by\n  trivial\n@[implemented_by foo] def bar : Nat := 0",
    "unsafe": "by\n  trivial\nunsafe def x : Nat := 0",
    "raw_string": 'by\n  exact (r#"x" -- "# ; by run_tac pure ()).elim',
    "exit": "by\n  trivial\n#exit",
}


@pytest.mark.parametrize("proof", LEAN_PROOFS.values(), ids=LEAN_PROOFS.keys())
def test_lean_code_in_a_proof_never_runs(tmp_path: Path, proof: str) -> None:
    repl = _would_pass(tmp_path)
    r = repl.check("", "theorem t : True", proof)
    assert r.status is Status.FAIL and _fm(r).kind is K.UNSAFE_INPUT, r
    assert repl.process.requests == 0 and repl.process.starts == 0  # never sent
    # The control: an honest proof is sent, and this transcript passes it.
    assert repl.check("", "theorem t : True", "by\n  trivial").ok
    repl.close()


@pytest.mark.parametrize(
    "header",
    [
        "import Lean\n#eval IO.println 1",
        'import Lean\nrun_cmd Lean.logInfo m!"hi"',
        "set_option debug.skipKernelTC true",
        'import Lean\nelab "trap" : term => do return Lean.mkConst ``True',
        'import Lean\ninitialize IO.println "x"',
        '@[extern "c_trap"] opaque trap : Nat',
    ],
)
def test_lean_code_in_a_header_never_runs_unless_trusted(tmp_path: Path, header: str) -> None:
    repl = _would_pass(tmp_path)
    r = repl.check(header, "theorem t : True", "by\n  trivial")
    assert r.status is Status.FAIL and _fm(r).kind is K.UNSAFE_INPUT, r
    assert "trusted_header" in _fm(r).message and repl.process.requests == 0
    with pytest.raises(ValueError, match="header"):
        repl.open(header, "theorem t : True")
    repl.close()
    trusted = _would_pass(tmp_path, {"env": 0}, {**PASSING, "env": 1})
    trusted.trusted_header = True
    assert trusted.check(header, "theorem t : True", "by\n  trivial").ok
    trusted.close()


def test_lean_statement_and_session_tactics_are_screened(tmp_path: Path) -> None:
    repl = _would_pass(tmp_path)
    r = repl.check("", "theorem t : True := trivial\n#eval 1\ntheorem t2 : True", "by trivial")
    assert _fm(r).kind is K.UNSAFE_INPUT and repl.process.requests == 0
    r = repl.check("", "theorem t : True := trivial\nexample : True", "by trivial")
    assert _fm(r).kind is K.STATEMENT_CHANGED
    repl.close()


def test_lean_screens_keep_what_proofs_need() -> None:
    assert (
        screen_lean_proof("by\n  set_option maxHeartbeats 400000 in\n  nlinarith [sq_nonneg x]")
        is None
    )
    assert screen_lean_proof("by\n  simp [h₀] -- elaborates fine\n  omega") is None
    assert (
        screen_lean_header(
            "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\n"
            "open BigOperators Real Nat Topology Rat"
        )
        is None
    )
    # A comment that names a refused word is refused too: the raw text is what is screened.
    refused = screen_lean_proof("by\n  trivial -- no #eval here")
    assert refused is not None and refused.kind is K.UNSAFE_INPUT
