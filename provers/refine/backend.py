"""What differs between Coq and Lean for the search: the header it adds, the statement it
sends, how a draft splits into steps, how steps join into a proof, the vacuity probe's
proofs, and whether a session's states are still there.

>>> proof_text("coq", ("intros", "lra"))
'intros.\\nlra.'
>>> proof_text("lean", ("intro x", "linarith"))
'by\\n  intro x\\n  linarith'
>>> split_draft("lean", "by\\n  induction n with\\n  | zero => rfl\\n  | succ k ih => simp\\n  omega")
('induction n with\\n| zero => rfl\\n| succ k ih => simp', 'omega')
>>> statement_for("lean", "theorem t (n : Nat) : n + 0 = n := by")
'theorem t (n : Nat) : n + 0 = n'
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

__all__ = [
    "COQ_AUTOMATION",
    "COQ_IMPORTS",
    "header_for",
    "probe_proofs",
    "proof_text",
    "scope_of",
    "session_lost",
    "split_draft",
    "statement_for",
]

# Loaded before the problem's own header, so that the problem's scopes win. A proof found
# holds under the header with these added; the result says which were used.
COQ_IMPORTS = "From Coq Require Import Reals Lra Lia Psatz ZArith Arith Field."
COQ_AUTOMATION = "From Hammer Require Import Tactics. From Interval Require Import Tactic."


def header_for(backend: str, header: str, imports: bool, automation: bool) -> tuple[str, str]:
    """The header the search loads, and what it added to the problem's own."""
    if backend != "coq" or not imports:
        return header, ""
    extra = COQ_IMPORTS + (" " + COQ_AUTOMATION if automation else "")
    return f"{extra}\n{header}", extra


# A Lean header: ``import Mathlib``, ``open Real``, ``set_option ...`` (Coq capitalises).
_LEAN_HEADER = re.compile(r"^\s*(import|open|set_option)\s", re.M)


def scope_of(header: str) -> str | None:
    """The number domain the header opens (``R``, ``Z``, ``Q``, ``nat``), if any. A Lean
    header opens none: ``open Real`` opens names, and a numeral whose type the goal does not
    show is a natural number (``theorem t : (2 : ℝ) + 2 = 4`` prints as ``⊢ 2 + 2 = 4``, and
    its domain is then unknown from the goal alone)."""
    if _LEAN_HEADER.search(header):
        return None
    for scope, dom in (("R_scope", "R"), ("Z_scope", "Z"), ("Q_scope", "Q"), ("nat_scope", "nat")):
        if scope in header:
            return dom
    return "R" if re.search(r"\bReal\b", header) else None


def split_draft(backend: str, draft: str | None) -> tuple[str, ...]:
    """A draft proof as the steps the search runs one at a time."""
    if not draft or not draft.strip():
        return ()
    if backend == "coq":
        from lemmata.provers.coq.sentences import split_sentences

        parts = [s.text for s in split_sentences(draft)]
        return tuple(p for p in parts if p not in ("Proof.", "Qed.", "Defined."))
    return _lean_steps(draft)


def _lean_steps(draft: str) -> tuple[str, ...]:
    """Lean: one step per tactic line at the block's indentation, with the lines under it
    (deeper, or ``|`` alternatives of ``induction ... with``, or ``<;>``) kept with it, so that
    ``calc`` chains, ``·`` blocks and ``match`` arms reach the REPL whole."""
    body = re.sub(r"^\s*(:=\s*)?by\b", "", draft.strip(), count=1)
    first, _, rest = body.partition("\n")
    lines = [ln for ln in rest.splitlines() if ln.strip() and not ln.strip().startswith("--")]
    steps = [first.strip()] if first.strip() else []
    base = min((len(ln) - len(ln.lstrip()) for ln in lines), default=0)
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if steps and (indent > base or line.lstrip().startswith(("|", "<;>"))):
            steps[-1] += "\n" + line[base:].rstrip()
        else:
            steps.append(line.strip())
    return tuple(steps)


def proof_text(backend: str, tactics: tuple[str, ...]) -> str:
    """The proof a path of tactics spells, as the backend's ``check`` takes it. A Lean
    tactic over several lines keeps its own indentation, under the block's."""
    if backend == "coq":
        return "\n".join(t if t.endswith(".") or t in "{}-+*" else t + "." for t in tactics)
    return "by\n" + "\n".join(
        textwrap.indent(textwrap.dedent(t).strip("\n"), "  ") for t in tactics
    )


def statement_for(backend: str, statement: str) -> str:
    """The statement as the backend's ``open`` and ``check`` take it. Lean: without a
    trailing ``:=``, ``:= by`` or ``:= by sorry`` (the forms files and data sets write), since
    both add `` := ...`` themselves."""
    if backend != "lean":
        return statement
    return re.sub(r"\s*:=\s*(by\b\s*)?(sorry\s*)?$", "", statement.rstrip())


def session_lost(session: Any) -> bool:
    """Whether a session's states are gone although it was never closed: a Lean session
    whose REPL process died or was restarted (a tactic that ran past its time kills it)
    keeps numbers the new process does not know. Sessions of other backends: never."""
    repl = getattr(session, "repl", None)
    process = getattr(repl, "process", None)
    if process is None:
        return False
    # LeanSession keeps the process's start count from when it was opened.
    opened = getattr(session, "_starts", process.starts)
    return not process.alive or process.starts != opened


def probe_proofs(backend: str, statement: str) -> tuple[str, ...]:
    """Proofs of the statement from contradictory hypotheses alone (the vacuity probe);
    none when the statement has no hypotheses."""
    if not re.search(r"->|→|\(\s*\w+\s*:\s*[^()]*[<>=≤≥≠]", statement):
        return ()
    if backend == "coq":
        return ("intros; exfalso; lra.", "intros; exfalso; lia.", "intros; exfalso; tauto.")
    return ("by\n  intros\n  exfalso\n  linarith", "by\n  intros\n  exfalso\n  omega")
