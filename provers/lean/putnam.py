"""PutnamBench's Lean 4 files, read as they are published (``lean4/src/putnam_*.lean``).

Each file is one problem: imports, maybe ``open`` lines, maybe an answer to find
(``abbrev putnam_1965_a1_solution : ℝ := sorry`` with the answer in the comment on the next
line, ``-- Real.pi / 15``), maybe a doc comment with the informal statement, and the
theorem, whose proof is ``sorry``:

.. code-block:: lean

    import Mathlib

    abbrev putnam_easy_solution : ℕ := sorry
    -- 2
    theorem putnam_easy : 1 + 1 = putnam_easy_solution := sorry

:func:`read_putnam` reads a folder of them (or one file) into :class:`PutnamProblem`\\ s. With
``inline_solutions=True`` the answer is written into the statement in place of its name
(``((2) : ℕ)``, as PutnamBench's own ``rewrite_solutions.py`` does) and the ``abbrev`` is
dropped; otherwise the ``abbrev`` stays for the prover to fill in, and only its name and
type are fixed. A file that does not have this shape is reported by name and line, and the
rest are read.

:meth:`PutnamProblem.item` turns a problem and a proof (or a whole answer file) into a
:class:`~lemmata.provers.lean.kimina.KiminaItem` whose statement must stay unchanged;
:func:`putnam_batch` pairs a folder with a proofs file for :func:`run_kimina`.

>>> problems, bad = read_putnam("PutnamBench/lean4/src", inline_solutions=True)  # doctest: +SKIP
>>> run = run_kimina([p.item() for p in problems], project="mathlib-repl")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemmata.provers.lean.kimina import KiminaItem
from lemmata.provers.lean.pool import split_header
from lemmata.provers.runner import InputProblem

__all__ = ["PutnamFileError", "PutnamProblem", "putnam_batch", "read_putnam", "read_putnam_file"]

_THEOREM = re.compile(r"^(?:theorem|lemma)\s+(putnam_\w+)", re.M)
_ABBREV = re.compile(
    r"^[ \t]*((?:noncomputable\s+)?abbrev\s+(putnam_\w+_solution)\s*:\s*(.+?))\s*:=\s*sorry[ \t]*$",
    re.M,
)
_ANSWER = re.compile(r"[ \t]*--(.*)")
_PROOF_IS_SORRY = re.compile(r":=\s*(?:by\s+)?sorry\s*$")


class PutnamFileError(ValueError):
    """A file that is not a PutnamBench problem; ``line`` is where it goes wrong (0: the
    whole file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class PutnamProblem:
    """One problem: ``header`` (its imports), ``preamble`` (the lines between the imports and
    the theorem: ``open``, the answer's ``abbrev`` unless inlined, the doc comment),
    ``statement`` (the theorem up to, not including, its ``:=``), and the answer: its
    ``abbrev`` name, type and text (``None`` when the problem has none, or the file gives no
    answer). ``line`` is the theorem's line in ``path``."""

    id: str
    path: str
    header: str
    preamble: str
    statement: str
    line: int
    solution_name: str | None = None
    solution_type: str | None = None
    solution: str | None = None
    inlined: bool = False

    @property
    def solution_head(self) -> str | None:
        """The answer's ``abbrev`` up to its ``:=``, fixed when the answer is not inlined."""
        if self.solution_name is None or self.inlined:
            return None
        return f"abbrev {self.solution_name} : {self.solution_type}"

    def code(self, proof: str = "sorry", answer: str | None = None) -> str:
        """The whole file with ``proof`` after the statement's ``:=`` and, when the answer is
        kept as an ``abbrev``, ``answer`` as its value (default ``sorry``)."""
        preamble = self.preamble
        if self.solution_head is not None and answer is not None:
            preamble = _ABBREV.sub(lambda m: f"{m.group(1)} := {answer}", preamble, count=1)
        parts = [self.header, preamble.strip("\n"), f"{self.statement} :=\n{proof.strip()}"]
        return "\n\n".join(p for p in parts if p) + "\n"

    def item(
        self, proof: str = "sorry", *, answer: str | None = None, code: str | None = None
    ) -> KiminaItem:
        """A snippet to check: this problem with ``proof`` (and ``answer``), or ``code``, a
        whole file written for it; either way the statement (and the answer's name and type)
        must stay as published."""
        statements = tuple(s for s in (self.statement, self.solution_head) if s)
        return KiminaItem(
            self.id, code if code is not None else self.code(proof, answer), statements
        )


def _inline(statement: str, name: str, type_: str, answer: str) -> str:
    value = answer.strip()
    if value.startswith("(") and value.endswith(")"):
        value = value[1:-1]
    return re.sub(rf"\b{re.escape(name)}\b", lambda _: f"(({value}) : {type_})", statement)


def read_putnam_file(path: str | Path, *, inline_solutions: bool = False) -> PutnamProblem:
    """One PutnamBench file; :class:`PutnamFileError` (with the line) when it is not one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PutnamFileError(0, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise PutnamFileError(0, f"cannot be read: {exc.strerror or exc}") from None
    header, body, _, offset = split_header(text)
    if not header:
        raise PutnamFileError(1, "no `import` lines: a PutnamBench file starts with its imports")
    theorems = list(_THEOREM.finditer(body))
    if not theorems:
        raise PutnamFileError(0, "no `theorem putnam_...` in the file")
    if len(theorems) > 1:
        line = offset + body.count("\n", 0, theorems[1].start()) + 1
        raise PutnamFileError(line, "a second theorem: a PutnamBench file holds one problem")
    found = theorems[0]
    line = offset + body.count("\n", 0, found.start()) + 1
    if found.group(1) != path.stem:
        raise PutnamFileError(
            line, f"the theorem is {found.group(1)!r} but the file is named {path.stem!r}"
        )
    rest = body[found.start() :].rstrip()
    proof = _PROOF_IS_SORRY.search(rest)
    if proof is None:
        raise PutnamFileError(line, "the theorem does not end with `:= sorry` (the open proof)")
    statement = rest[: proof.start()].rstrip()
    preamble = body[: found.start()]
    name = type_ = answer = None
    abbrevs = list(_ABBREV.finditer(preamble))
    if len(abbrevs) > 1:
        at = offset + preamble.count("\n", 0, abbrevs[1].start()) + 1
        raise PutnamFileError(at, "more than one answer `abbrev`")
    if abbrevs:
        abbrev = abbrevs[0]
        name, type_ = abbrev.group(2), abbrev.group(3).strip()
        at = offset + preamble.count("\n", 0, abbrev.start()) + 1
        if not re.search(rf"\b{re.escape(name)}\b", statement):
            raise PutnamFileError(line, f"the statement does not use its answer {name!r}")
        after = preamble[abbrev.end() :].lstrip("\n").split("\n", 1)[0]
        comment = _ANSWER.match(after)
        answer = comment.group(1).strip() if comment and comment.group(1).strip() else None
        if inline_solutions:
            if answer is None:
                raise PutnamFileError(
                    at + 1, f"no answer to inline: the line after {name!r} should be `-- ANSWER`"
                )
            start, end = abbrev.start(), abbrev.end()
            tail = preamble[end:].lstrip("\n")
            tail = tail.split("\n", 1)[1] if "\n" in tail else ""
            preamble = preamble[:start] + tail
            statement = _inline(statement, name, type_, answer)
    return PutnamProblem(
        path.stem,
        str(path),
        header,
        preamble,
        statement,
        line,
        name,
        type_,
        answer,
        inline_solutions and name is not None,
    )


def read_putnam(
    path: str | Path, *, inline_solutions: bool = False
) -> tuple[list[PutnamProblem], list[InputProblem]]:
    """Every ``putnam_*.lean`` in the folder ``path`` (or the one file ``path``), in name
    order, and the files that could not be read, each with its name and line."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("putnam_*.lean"))
        if not files:
            return [], [InputProblem(0, "no putnam_*.lean files in the folder", str(path))]
    elif path.is_file():
        files = [path]
    else:
        return [], [InputProblem(0, "no such file or folder", str(path))]
    problems: list[PutnamProblem] = []
    bad: list[InputProblem] = []
    for file in files:
        try:
            problems.append(read_putnam_file(file, inline_solutions=inline_solutions))
        except PutnamFileError as exc:
            bad.append(InputProblem(exc.line, exc.message, str(file)))
    return problems, bad


def putnam_batch(
    folder: str | Path,
    proofs: str | Path | Mapping[str, Mapping[str, Any]] | None = None,
    *,
    inline_solutions: bool = False,
) -> tuple[list[KiminaItem], list[InputProblem]]:
    """Snippets for :func:`~lemmata.provers.lean.kimina.run_kimina`: one per problem in
    ``folder``, with its proof from ``proofs`` (JSONL or a mapping, by id: ``{"id",
    "proof", "answer"?}`` or ``{"id", "code"}``, a whole file) or, without one, the
    statement as published (which checks that it elaborates: ``sorry`` is the good result).
    """
    problems, bad = read_putnam(folder, inline_solutions=inline_solutions)
    given: dict[str, Mapping[str, Any]] = {}
    if isinstance(proofs, str | Path):
        for number, raw in enumerate(Path(proofs).read_text(encoding="utf-8").splitlines(), 1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except json.JSONDecodeError as exc:
                bad.append(InputProblem(number, f"not JSON ({exc.msg})", str(proofs)))
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                bad.append(InputProblem(number, "expected an object with a text 'id'", str(proofs)))
                continue
            given[entry["id"]] = entry
    elif proofs is not None:
        given = dict(proofs)
    known = {p.id for p in problems}
    for ident in sorted(set(given) - known):
        bad.append(InputProblem(0, f"a proof for {ident!r}, which is not a problem read", ""))
    items = []
    for problem in problems:
        entry = given.get(problem.id, {})
        code, proof, answer = entry.get("code"), entry.get("proof"), entry.get("answer")
        for key, value in (("code", code), ("proof", proof), ("answer", answer)):
            if value is not None and not isinstance(value, str):
                bad.append(InputProblem(0, f"{problem.id}: {key!r} must be text", ""))
                code = proof = answer = None
        items.append(problem.item(proof or "sorry", answer=answer, code=code))
    return items, bad
