"""Turn Lean's and Coq's error messages into a :class:`FailureKind`, with the failing tactic.

The verifiers speak prose, not codes, so this is a table of patterns drawn from their real
messages (the Lean REPL transcripts in ``shared/fixtures/lean-repl`` and Coq 8.16's output);
the first pattern that matches wins, and anything unmatched is ``OTHER`` with the text kept.

>>> classify_lean("unsolved goals\\n⊢ Nat").kind.value
'unsolved_goals'
>>> classify_coq('Error: The reference foo was not found in the current environment.').kind.value
'unknown_identifier'
"""

from __future__ import annotations

import re

from lemmata.provers.result import FailureKind, FailureMode

__all__ = ["classify_coq", "classify_lean", "tactic_name"]

K = FailureKind

_LEAN: list[tuple[re.Pattern[str], FailureKind]] = [
    (re.compile(r"(deterministic\) )?timeout|maximum recursion depth", re.I), K.TIMEOUT),
    (re.compile(r"declaration uses .sorry.|contains sorry", re.I), K.USES_SORRY),
    (
        re.compile(r"unknown (identifier|constant|namespace)|unknown declaration", re.I),
        K.UNKNOWN_IDENTIFIER,
    ),
    (
        re.compile(
            r"unexpected token|unexpected end of input|unknown tactic|expected (term|command)|"
            r"invalid (syntax|line break)",
            re.I,
        ),
        K.SYNTAX_ERROR,
    ),
    (
        re.compile(
            r"unsolved goals|open goals remain|contains metavariable|declaration has metavariables",
            re.I,
        ),
        K.UNSOLVED_GOALS,
    ),
    (
        re.compile(
            r"type mismatch|could not unify|failed to unify|type expected|"
            r"don't know how to synthesize|failed to synthesize",
            re.I,
        ),
        K.TYPE_MISMATCH,
    ),
    (
        re.compile(
            r"tactic .* failed|failed to prove|could not close the goal|could not prove the goal|"
            r"made no progress|linarith failed|omega could not|no goals to be solved|"
            r"case tag .* not found|fail to show termination|rfl tactic|decide failed|"
            r"norm_num failed|ring failed|positivity failed",
            re.I,
        ),
        K.TACTIC_FAILED,
    ),
]

_COQ: list[tuple[re.Pattern[str], FailureKind]] = [
    (re.compile(r"Timeout!|timed out", re.I), K.TIMEOUT),
    (re.compile(r"given up goals|Admitted|admit", re.I), K.USES_SORRY),
    (
        re.compile(
            r"was not found in the current environment|The variable .* was not found|"
            r"Unbound (value|reference|module)|No such hypothesis|Cannot find (library|a physical path)",
            re.I,
        ),
        K.UNKNOWN_IDENTIFIER,
    ),
    (re.compile(r"Syntax error|Lexer error|Syntax Error", re.I), K.SYNTAX_ERROR),
    (
        re.compile(
            r"incomplete proof|unfocused goals|Some goals? (are|is) left|"
            r"unresolved existential variables|Attempt to save",
            re.I,
        ),
        K.UNSOLVED_GOALS,
    ),
    (
        re.compile(
            r"Unable to unify|has type .* while it is expected to have type|Illegal application|"
            r"cannot be applied to|The term .* has type|Impossible to unify|"
            r"not the right number of|Found no subterm matching",
            re.S | re.I,
        ),
        K.TYPE_MISMATCH,
    ),
    (
        re.compile(
            r"No applicable tactic|Tactic failure|Cannot find witness|lia failed|"
            r"No matching clauses|not a (product|inductive)|Not an inductive|"
            r"cannot solve|Cannot solve|No progress|nothing to rewrite|Nothing to rewrite|"
            r"No focused proof|No such goal|not convertible|no hypothesis",
            re.I,
        ),
        K.TACTIC_FAILED,
    ),
]

_TACTIC_WORD = re.compile(r"^\s*([A-Za-z_][\w'?!]*)")


def tactic_name(tactic: str | None) -> str | None:
    """The tactic's head word: ``"simp [foo] at h"`` -> ``"simp"``."""
    if not tactic:
        return None
    m = _TACTIC_WORD.match(tactic)
    return m.group(1) if m else tactic.strip()[:40] or None


def _classify(
    table: list[tuple[re.Pattern[str], FailureKind]],
    text: str,
    line: int | None,
    column: int | None,
    tactic: str | None,
) -> FailureMode:
    for pattern, kind in table:
        if pattern.search(text):
            return FailureMode(kind, text.strip(), line, column, tactic_name(tactic))
    # A message without a known shape that was raised by a tactic is that tactic's failure.
    kind = K.TACTIC_FAILED if tactic else K.OTHER
    return FailureMode(kind, text.strip(), line, column, tactic_name(tactic))


def classify_lean(
    text: str, line: int | None = None, column: int | None = None, tactic: str | None = None
) -> FailureMode:
    """Classify a Lean error message."""
    return _classify(_LEAN, text, line, column, tactic)


def classify_coq(
    text: str, line: int | None = None, column: int | None = None, tactic: str | None = None
) -> FailureMode:
    """Classify a Coq error message."""
    return _classify(_COQ, text, line, column, tactic)
