"""What may reach the Lean REPL: a file runs code while it elaborates, so input is screened.

Lean runs arbitrary ``IO`` during elaboration: ``#eval``, ``run_cmd``/``run_tac``/
``run_elab``/``run_meta``, custom elaborators (``elab``, ``elab_rules``, ``@[command_elab]``),
``initialize``, code bound by ``implemented_by``/``extern``, ``unsafe`` definitions; and
``set_option debug.skipKernelTC true`` lets declarations past the kernel unchecked. Those
words are looked for anywhere in the raw text, comments and strings included: a lexer of ours
that disagreed with Lean's about where a comment or a (raw, interpolated) string ends would
otherwise let code through, so a comment that merely mentions ``#eval`` is refused too.
Commands and ``sorry`` are looked for with comments taken out (:func:`strip_lean`); Lean
itself reports a ``sorry`` that slips past.

- :func:`screen_lean_proof`: a proof is a term or tactic block; any of the above is
  ``unsafe_input``, a command of its own (``theorem``, ``def``, ``#check``...) is
  ``statement_changed``, ``sorry``/``admit`` is ``uses_sorry``. ``set_option NAME VALUE in``
  is allowed for the options of :data:`SAFE_OPTIONS` (time and recursion limits, printing,
  linters, traces).
- :func:`screen_lean_header`: a header may import, open, declare and set the options above;
  the words above are ``unsafe_input`` unless the caller marks the header trusted.
- :func:`screen_lean_statement`: the statement is one declaration, with none of the above.

>>> screen_lean_proof("by\\n  simp\\n#eval IO.println 1").kind.value
'unsafe_input'
>>> screen_lean_proof("by\\n  set_option maxHeartbeats 400000 in\\n  simp") is None
True
>>> screen_lean_header("import Mathlib\\nset_option debug.skipKernelTC true").kind.value
'unsafe_input'
"""

from __future__ import annotations

import re

from lemmata.provers.result import FailureKind, FailureMode

__all__ = [
    "SAFE_OPTIONS",
    "screen_lean_header",
    "screen_lean_proof",
    "screen_lean_statement",
    "screen_lean_tactic",
    "strip_lean",
]

# Options a proof or an untrusted header may set: limits, printing, linters, traces.
SAFE_OPTIONS = re.compile(
    r"(maxHeartbeats|maxRecDepth|maxSynthPendingDepth|synthInstance\.[\w.]+|linter\.[\w.]+|"
    r"pp\.[\w.]+|trace\.[\w.]+|diagnostics(\.[\w.]+)?|autoImplicit|relaxedAutoImplicit|"
    r"exponentiation\.threshold|push_neg\.[\w.]+|simprocs|tactic\.[\w.]+|warningAsError)"
)
_RUNS_CODE = re.compile(
    r"(?<![\w.'#])(#eval!?|#guard|#exit|#run\w*|run_cmd|run_tac|run_elab|run_meta|by_elab|"
    r"elab|elab_rules|command_elab|term_elab|tactic_elab|initialize|builtin_initialize|"
    r"unsafe|implemented_by|extern|@\[\s*init)(?![\w'!?])"
)
_SET_OPTION = re.compile(r"(?<![\w.'])set_option\s+([^\s]+)")
_HASH_COMMAND = re.compile(r"(?<![\w.'])#[a-z_]\w*")
_COMMANDS = re.compile(
    r"^\s*(@\[|theorem|lemma|def|example|axiom|axioms|instance|end\b|namespace|section|open\b|"
    r"noncomputable|private|protected|attribute|mutual|structure|inductive|class|abbrev|opaque|"
    r"macro|elab|syntax|notation|infix|prefix|postfix|variable|universe|set_option\s+\S+\s+\S+\s*$|"
    r"#exit|#eval|#print|import|initialize|unsafe|partial)",
    re.M,
)
_SORRY = re.compile(r"\b(sorry|admit)\b")


def strip_lean(text: str) -> str:
    """``text`` with comments (``--`` to the end of the line, ``/- ... -/``, which nest) and
    string and character literals blanked out; lines and columns are kept."""
    out = list(text)
    i, n, depth = 0, len(text), 0

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        if depth:
            if text.startswith("/-", i):
                depth += 1
                blank(i, i + 2)
                i += 2
            elif text.startswith("-/", i):
                depth -= 1
                blank(i, i + 2)
                i += 2
            else:
                blank(i, i + 1)
                i += 1
        elif text.startswith("/-", i):
            depth = 1
            blank(i, i + 2)
            i += 2
        elif text.startswith("--", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif text[i] == "'" and re.match(r"'(\\.|[^\\'])'", text[i : i + 4]):
            end = text.index("'", i + 2 if text[i + 1] != "\\" else i + 3) + 1
            blank(i + 1, end - 1)
            i = end
        else:
            i += 1
    return "".join(out)


def _where(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def _unsafe(text: str, what: str) -> FailureMode | None:
    """The first place in the raw ``text`` that runs code or sets an option outside
    :data:`SAFE_OPTIONS`."""
    m = _RUNS_CODE.search(text)
    if m:
        return FailureMode(
            FailureKind.UNSAFE_INPUT,
            f"{what} may not run code while Lean elaborates: {m.group(1)!r} is refused",
            *_where(text, m.start()),
            tactic=m.group(1),
        )
    for opt in _SET_OPTION.finditer(text):
        if not SAFE_OPTIONS.fullmatch(opt.group(1)):
            return FailureMode(
                FailureKind.UNSAFE_INPUT,
                f"{what} may not set option {opt.group(1)!r} (allowed: limits, pp.*, "
                "linter.*, trace.*)",
                *_where(text, opt.start()),
                tactic="set_option",
            )
    return None


def screen_lean_proof(proof: str) -> FailureMode | None:
    """Reject a proof text that runs code, declares things or gives up, before it reaches
    Lean; see the module docstring."""
    unsafe = _unsafe(proof, "a proof")
    if unsafe is not None:
        return unsafe
    text = strip_lean(proof)
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _COMMANDS.match(line) or _HASH_COMMAND.search(line)
        if m:
            return FailureMode(
                FailureKind.STATEMENT_CHANGED,
                f"the proof may not contain commands: {line.strip()[:60]!r}",
                lineno,
                0,
            )
        if _SORRY.search(line):
            return FailureMode(FailureKind.USES_SORRY, "the proof uses sorry/admit", lineno, 0)
    return None


def screen_lean_tactic(tactic: str) -> FailureMode | None:
    """Reject a tactic for a proof session that runs code or sets an unsafe option (a
    session may try ``sorry``: the session's proof is checked as a whole at the end)."""
    return _unsafe(tactic, "a tactic")


def screen_lean_header(header: str) -> FailureMode | None:
    """Reject a header that runs code or sets an unsafe option; see the module docstring."""
    unsafe = _unsafe(header, "the header")
    if unsafe is None:
        return None
    return FailureMode(
        unsafe.kind,
        unsafe.message + "; a header you wrote yourself can be marked trusted "
        "(trusted_header=True)",
        unsafe.line,
        unsafe.column,
        unsafe.tactic,
    )


def screen_lean_statement(statement: str) -> FailureMode | None:
    """Reject a statement that runs code or holds more than its one declaration."""
    unsafe = _unsafe(statement, "the statement")
    if unsafe is not None:
        return unsafe
    text = strip_lean(statement)
    for lineno, line in enumerate(text.splitlines()[1:], start=2):
        if _COMMANDS.match(line) or _HASH_COMMAND.search(line):
            return FailureMode(
                FailureKind.STATEMENT_CHANGED,
                f"the statement must be one declaration: {line.strip()[:60]!r}",
                lineno,
                0,
            )
    return None
