"""What a whole Lean snippet declares, and whether it may be ``valid`` whatever Lean says.

Checks that need no Lean, for :mod:`lemmata.provers.lean.kimina`:

- :func:`declared_theorems`: the full names of the theorems a snippet declares (for
  ``#print axioms``);
- :func:`screen_code`: words that run code at elaboration or add facts unchecked (``axiom``,
  ``#eval``, ``run_cmd``, ``unsafe``, ``implemented_by``/``extern``, ``initialize``,
  ``debug.skipKernelTC``), looked for in the raw text; and, against a fixed statement,
  commands that can change what it means without changing its text (``variable``/``include``,
  notations, macros, syntax, instances), looked for outside comments;
- :func:`statement_problem`: whether each fixed declaration head appears exactly once, as
  written (comments and spacing aside).

The statement check is textual: it cannot see a name the snippet shadows by an ``open`` of
its own. Elaborating the published statement beside the snippet's and comparing the two
types in Lean would close that.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["declared_theorems", "screen_code", "statement_problem", "strip_comments"]

_PREFIX = r"^[ \t]*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable|nonrec|partial|local|scoped)\s+)*"
_THEOREM = re.compile(_PREFIX + r"(?:theorem|lemma)\s+([^\s(:{\[⦃]+)", re.M)
_SCOPE = re.compile(r"^[ \t]*(namespace|section|end)\b[ \t]*([^\s-]*)", re.M)
# Words that can add facts unchecked or run code at elaboration. They are looked for in the
# raw text, comments and strings included, so that no disagreement between this module and
# Lean about where a comment ends can hide one.
_UNSOUND = re.compile(
    r"(?<![\w.'])(axiom|unsafe|initialize|builtin_initialize|#eval|#exec|run_cmd|run_elab"
    r"|run_meta|run_tac|implemented_by|extern|debug\.skipKernelTC)(?![\w.'])"
)
# Commands that can change what a statement means without changing its text. English words
# among them occur in doc comments (PutnamBench's informal statements), so these are looked
# for with comments taken out by a lexer that knows strings, raw strings and characters.
_SHIFTING = re.compile(
    r"(?<![\w.'])(variable|include|omit|notation|macro_rules|macro|syntax|elab_rules|elab"
    r"|infixl|infixr|infix|prefix|postfix|instance)(?![\w.'])"
)
_RAW_STRING = re.compile(r'r(#*)"')
_CHAR = re.compile(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'")


def strip_comments(code: str) -> str:
    """``code`` with its comments (doc comments too) taken out as Lean's lexer reads them:
    ``--`` to the end of the line, nested ``/- -/``, but not inside strings, raw strings
    (``r#"..."#``) or character literals. Line breaks are kept."""
    out: list[str] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("--", i):
            i = code.find("\n", i)
            i = n if i < 0 else i
        elif code.startswith("/-", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if code.startswith("/-", i):
                    depth, i = depth + 1, i + 2
                elif code.startswith("-/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if code[i] == "\n" else "")
                    i += 1
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append(code[i : j + 1])
            i = j + 1
        elif (raw := _RAW_STRING.match(code, i)) and not (i and _ident(code[i - 1])):
            close = '"' + raw.group(1)
            j = code.find(close, raw.end())
            j = n if j < 0 else j + len(close)
            out.append(code[i:j])
            i = j
        elif c == "'" and not (i and _ident(code[i - 1])) and (char := _CHAR.match(code, i)):
            out.append(char.group(0))
            i = char.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident(c: str) -> bool:
    return c.isalnum() or c in "_'!?.₀₁₂₃₄₅₆₇₈₉"


def _normal(text: str) -> str:
    return " ".join(strip_comments(text).split())


def declared_theorems(code: str) -> list[str]:
    """The full names of the ``theorem``s and ``lemma``s ``code`` declares, with the
    namespaces they are in (``namespace A`` ... ``end A``).

    >>> declared_theorems("namespace A\\ntheorem t : True := trivial\\nend A\\nlemma u : True := trivial")
    ['A.t', 'u']
    """
    text = strip_comments(code)
    events = [(m.start(), "decl", m.group(1)) for m in _THEOREM.finditer(text)]
    events += [(m.start(), m.group(1), m.group(2)) for m in _SCOPE.finditer(text)]
    scopes: list[str | None] = []
    names: list[str] = []
    for _, kind, arg in sorted(events):
        if kind == "namespace":
            scopes.append(arg)
        elif kind == "section":
            scopes.append(None)
        elif kind == "end":
            if scopes:
                scopes.pop()
        elif arg.startswith("_root_."):
            names.append(arg.removeprefix("_root_."))
        else:
            names.append(".".join([s for s in scopes if s] + [arg]))
    return names


def screen_code(code: str, *, fixed_statements: bool = False) -> str | None:
    """Why ``code`` cannot be ``valid`` whatever Lean says of it, or ``None``.

    >>> screen_code("theorem t : True := trivial -- no #eval here")
    'line 1: `#eval` is not allowed in a checked snippet (it can run code or add facts unchecked)'
    >>> screen_code("/-- a prefix of the list -/\\ntheorem t : True := trivial", fixed_statements=True)
    """
    found = _UNSOUND.search(code)
    if found:
        line = code.count("\n", 0, found.start()) + 1
        return (
            f"line {line}: `{found.group(1)}` is not allowed in a checked snippet "
            "(it can run code or add facts unchecked)"
        )
    if fixed_statements:
        text = strip_comments(code)
        found = _SHIFTING.search(text)
        if found:
            line = text.count("\n", 0, found.start()) + 1
            return (
                f"line {line}: `{found.group(1)}` can change what the statement means; "
                "a check against a fixed statement does not accept it"
            )
    return None


def _head(statement: str) -> str:
    """A declaration head without the ``:= ...`` that may follow it (``sorry``, ``by``)."""
    return re.sub(r"\s*:=\s*(?:by)?\s*(?:sorry)?\s*$", "", _normal(statement)).strip()


def statement_problem(code: str, statements: Iterable[str]) -> str | None:
    """Why ``code`` does not keep each of ``statements`` as written, or ``None``."""
    text = _normal(code)
    for statement in statements:
        head = _head(statement)
        found = [
            m.start()
            for m in re.finditer(re.escape(head) + r" ?:=", text)
            if m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_.'")
        ]
        if len(found) != 1:
            shown = head if len(head) <= 80 else head[:77] + "..."
            how = "not found as written" if not found else "found more than once"
            return f"the statement changed: `{shown}` {how}"
    return None
