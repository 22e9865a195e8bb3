"""Turn Lean's and Coq's error messages into a :class:`FailureKind`, with the failing tactic.

The verifiers speak prose, not codes, so this is a table of patterns drawn from their real
messages (the Lean REPL transcripts in ``shared/fixtures/lean-repl`` and Coq 8.16's output);
the first pattern that matches wins, and anything unmatched is ``OTHER`` with the text kept
(``TACTIC_FAILED`` when a tactic raised it). The classes, with a real message of each:

====================  ==========================================  ===============================
kind                  Coq 8.16                                    Lean 4
====================  ==========================================  ===============================
structure             ``[Focus] Wrong bullet +: Expecting -.``    ``No goals to be solved``
name_clash            ``x is already used.``                      ``'t' has already been declared``
not_a_product         ``No product even after head-reduction.``   ``Tactic `introN` failed: There
                                                                  are no additional binders ...``
unknown_identifier    ``The reference foo was not found in the    ``Unknown identifier `g```
                      current environment.``
type_mismatch         ``Unable to unify "2" with "1".``           ``type expected, got ...``
tactic_failed         ``Tactic failure: Cannot find witness.``    ```exact?` could not close the
                                                                  goal. ...``
unsolved_goals        ``(in proof t): Attempt to save an          ``unsolved goals ...``
                      incomplete proof``
timeout               ``Timeout!``                                ``(deterministic) timeout ...``
header_error          ``Cannot find a physical path bound to      ``unknown module prefix 'Foo'``
                      logical path NoSuch.``
====================  ==========================================  ===============================

``vacuous`` is no message of either prover: the search sets it when the hypotheses contradict
each other. Nor are the soundness classes: ``assumed_guarded``, ``assumed_positive`` and
``unsafe_universes`` come from what Coq's ``Print Assumptions`` says of the finished proof
(:func:`~lemmata.provers.coq.output.read_assumptions`), ``unsafe_input`` from the screens that
refuse input before it reaches a prover (:mod:`lemmata.provers.coq.screen`,
:mod:`lemmata.provers.lean.screen`). :func:`failure_signature` names a failure for deduplication, with its numbers,
fresh names and positions normalised away.

>>> classify_lean("unsolved goals\\n⊢ Nat").kind.value
'unsolved_goals'
>>> classify_coq('Error: The reference foo was not found in the current environment.').kind.value
'unknown_identifier'
>>> failure_signature(classify_coq("H0 is already used.")) == failure_signature(
...     classify_coq("H3 is already used."))
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lemmata.provers.result import FailureKind, FailureMode

__all__ = ["classify_coq", "classify_lean", "failure_signature", "tactic_name"]

K = FailureKind
_Table = list[tuple[re.Pattern[str], FailureKind]]

# Order matters: the header and the proof's structure come before the generic classes, and
# "could not unify" (a ``Tactic `apply` failed`` message) before the generic "tactic failed".
_LEAN: _Table = [
    (re.compile(r"(deterministic\) )?timeout|maximum recursion depth", re.I), K.TIMEOUT),
    (re.compile(r"declaration uses .sorry.|contains sorry", re.I), K.USES_SORRY),
    (
        re.compile(
            r"unknown (module prefix|package)|object file .* does not exist|"
            r"invalid 'import' command|No directory .* in the search path",
            re.I,
        ),
        K.HEADER_ERROR,
    ),
    (
        re.compile(
            r"^no goals\b|no goals to be solved|case tag .* not found|not enough goals|"
            r"too many goals",
            re.I,
        ),
        K.STRUCTURE,
    ),
    (re.compile(r"has already been declared", re.I), K.NAME_CLASH),
    (
        re.compile(r"no additional binders|insufficient number of binders|.introN. failed", re.I),
        K.NOT_A_PRODUCT,
    ),
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
            r"don't know how to synthesize|failed to synthesize|motive is not type correct",
            re.I,
        ),
        K.TYPE_MISMATCH,
    ),
    (
        re.compile(
            r"tactic .* failed|failed to prove|could not close the goal|could not prove the goal|"
            r"made no progress|linarith failed|omega could not|"
            r"fail to show termination|rfl tactic|decide failed|failed to reduce to (true|false)|"
            r"norm_num failed|ring failed|ring_nf failed|positivity failed|"
            r"failed to find a contradiction|\w+ failed\b",
            re.I,
        ),
        K.TACTIC_FAILED,
    ),
]

_COQ: _Table = [
    (re.compile(r"^Timeout!|\btimed out\b", re.I), K.TIMEOUT),
    (re.compile(r"given up goals|\bAdmitted\b|\badmit\b"), K.USES_SORRY),
    (
        re.compile(
            r"Cannot find a physical path bound to logical path|Unable to locate library|"
            r"Cannot find library|Cannot load .*: no physical path|"
            r"makes inconsistent assumptions over library|contains library .* and not library|"
            r"Try to rebuild it|Can't find file .* on loadpath",
            re.I,
        ),
        K.HEADER_ERROR,
    ),
    (
        re.compile(
            r"Wrong bullet|No such goal|The proof is not focused|No focused proof|"
            r"cannot be unfocused|Incorrect number of goals",
            re.I,
        ),
        K.STRUCTURE,
    ),
    (re.compile(r"\S+ is already (used|declared)"), K.NAME_CLASH),
    (
        re.compile(
            r"No product even after head-reduction|No quantified hypothesis named|"
            r"\bnot a product\b",
            re.I,
        ),
        K.NOT_A_PRODUCT,
    ),
    (
        re.compile(
            r"was not found in the current environment|The variable .* was not found|"
            r"Unbound (value|reference|module)|No such hypothesis|No such bound variable",
            re.I,
        ),
        K.UNKNOWN_IDENTIFIER,
    ),
    (re.compile(r"Syntax error|Lexer error", re.I), K.SYNTAX_ERROR),
    (
        re.compile(
            r"incomplete proof|unfocused goals|Some goals? (are|is) left|"
            r"unresolved existential variables|Attempt to save|shelved goals",
            re.I,
        ),
        K.UNSOLVED_GOALS,
    ),
    (
        re.compile(
            r"Unable to unify|has type .* while it is expected to have type|Illegal application|"
            r"cannot be applied to|The term .* has type|Impossible to unify|"
            r"not the right number of|Found no subterm matching|"
            r"Cannot find a relation to rewrite",
            re.S | re.I,
        ),
        K.TYPE_MISMATCH,
    ),
    (
        re.compile(
            r"No applicable tactic|Tactic failure|Cannot find witness|lia failed|"
            r"No such contradiction|No such assumption|No matching clauses|not an inductive|"
            r"cannot solve|No progress|Failed to progress|nothing to rewrite|"
            r"not convertible|no hypothesis|No primitive equality|Nothing to inject|"
            r"Cannot find any non-recursive equality|has no constructors|"
            r"The command has not failed|\w+ failed\b",
            re.I,
        ),
        K.TACTIC_FAILED,
    ),
]

_TACTIC_WORD = re.compile(r"^\s*([A-Za-z_][\w'?!]*)")
# The REPL's wrapper around a tactic-mode error, and the parser's own position prefix.
_LEAN_PREFIX = re.compile(r"^\s*(Lean error:\s*)?(<input>:\d+:\d+:\s*)?")


def tactic_name(tactic: str | None) -> str | None:
    """The tactic's head word: ``"simp [foo] at h"`` -> ``"simp"``."""
    if not tactic:
        return None
    m = _TACTIC_WORD.match(tactic)
    return m.group(1) if m else tactic.strip()[:40] or None


def _kind(table: _Table, *texts: str) -> FailureKind | None:
    for text in texts:
        for pattern, kind in table:
            if pattern.search(text):
                return kind
    return None


def _mode(
    kind: FailureKind | None,
    text: str,
    line: int | None,
    column: int | None,
    tactic: str | None,
    sentence: str | None,
    index: int | None,
    goals: Sequence[str],
) -> FailureMode:
    if kind is None:
        # A message without a known shape that was raised by a tactic is that tactic's failure.
        kind = K.TACTIC_FAILED if tactic else K.OTHER
    return FailureMode(
        kind, text.strip(), line, column, tactic_name(tactic), sentence, index, tuple(goals)
    )


def classify_lean(
    text: str,
    line: int | None = None,
    column: int | None = None,
    tactic: str | None = None,
    *,
    sentence: str | None = None,
    index: int | None = None,
    goals: Sequence[str] = (),
) -> FailureMode:
    """Classify a Lean error message.

    The first line decides when it can (Lean puts the verdict there and the goal after it,
    whose hypotheses may hold any word); the whole text only when the first line says nothing
    known. ``sentence``, ``index`` and ``goals`` are carried into the :class:`FailureMode`.
    """
    head = _LEAN_PREFIX.sub("", text, count=1).strip().split("\n", 1)[0]
    return _mode(_kind(_LEAN, head, text), text, line, column, tactic, sentence, index, goals)


def classify_coq(
    text: str,
    line: int | None = None,
    column: int | None = None,
    tactic: str | None = None,
    *,
    sentence: str | None = None,
    index: int | None = None,
    goals: Sequence[str] = (),
) -> FailureMode:
    """Classify a Coq error message; see :func:`classify_lean` for the keyword arguments."""
    return _mode(_kind(_COQ, text), text, line, column, tactic, sentence, index, goals)


_SIG_DROP = re.compile(
    r"^\s*Lean error:\s*|<input>:\d+:\d+:\s*|\bcharacters \d+-\d+:?|\bline \d+, column \d+|"
    r"\(ID \d+\)|\(in proof [^)]*\):?"
)
# Lean's inaccessible names (``n✝``, ``a✝¹``), metavariables (``?m.12``, Coq's ``?Goal0``).
_SIG_FRESH = re.compile(r"[^\s()\[\]{},;:`'\"⊢]+✝[⁰¹²³⁴⁵⁶⁷⁸⁹]*")
_SIG_META = re.compile(r"\?[A-Za-z_][\w.']*")
_SIG_NUMBER = re.compile(r"\d+|[₀₁₂₃₄₅₆₇₈₉]+")


def failure_signature(fm: FailureMode) -> str:
    """A key for "the same failure": the kind and the message, with numbers (so Coq's fresh
    ``H0``/``H1`` and ``n0`` too), Lean's inaccessible names (``n✝¹``), metavariables and
    positions normalised away. Two search nodes with equal signatures failed the same way.

    >>> failure_signature(FailureMode(FailureKind.TYPE_MISMATCH, 'Unable to unify "2" with "1".'))
    'type_mismatch: Unable to unify "0" with "0".'
    """
    text = _SIG_DROP.sub(" ", fm.message)
    text = _SIG_FRESH.sub("_✝", text)
    text = _SIG_META.sub("?_", text)
    text = _SIG_NUMBER.sub("0", text)
    return f"{fm.kind.value}: {' '.join(text.split())}"
