"""Coq ``.v`` files as a batch for ``lemmata prove``: every theorem left open is a problem.

A ``Theorem`` (or ``Lemma``, ``Fact``, ``Remark``, ``Corollary``, ``Proposition``,
``Example``) whose proof ends in ``Admitted.``, or has no end at all (``Proof.`` and then the
end of the file), becomes a :class:`~lemmata.provers.runner.Theorem`: its statement is the
theorem's sentence, its header everything before it in the file, verbatim (Requires, scopes,
definitions, earlier lemmas proved or admitted: ``Admitted`` is legal at top level, so later
theorems may use an admitted one). A theorem ending in ``Qed.``, ``Defined.`` or ``Save`` is
proved, and one ending in ``Abort.`` was given up on purpose; neither is a problem.

Ids: the file's stem when the file holds one open theorem, ``stem:name`` when it holds
several; under a folder, the path relative to it without ``.v`` (``sub/foo``,
``sub/foo:bar``). Anything that cannot be read (not UTF-8, binary, not Coq sentences, a name
declared twice, a theorem that starts inside an unfinished proof, a file with no open
theorem, a folder with no ``.v`` file) is an :class:`~lemmata.provers.runner.InputProblem`
naming the file and line, and the rest is read.

>>> theorems, problems = read_coq_files(Path("valid"))                    # doctest: +SKIP
>>> theorems[0].id, theorems[0].line                                      # doctest: +SKIP
('aimeII_2001_p3', 4)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lemmata.provers.coq.sentences import Sentence, SentenceError, head_word, split_sentences
from lemmata.provers.coq.verifier import THEOREM_KEYWORDS, _parse_statement
from lemmata.provers.runner import InputProblem, Theorem

__all__ = ["failure_line", "read_coq_files"]

# The sentences that end a proof; only ``Admitted`` leaves the theorem open.
_ENDS = frozenset({"Qed", "Defined", "Save", "Admitted", "Abort"})
# Attributes and locality may stand before the keyword; the statement starts at the keyword.
_THEOREM = re.compile(
    r"(?:#\[[^\]]*\]\s*|(?:Local|Global|Polymorphic|Monomorphic)\s+)*"
    rf"({'|'.join(sorted(THEOREM_KEYWORDS))})\b"
)
# Where a sentence can end (as split_sentences decides): a '.' before white space or the end.
_PERIOD = re.compile(r"(?<!\.)\.(?=\s|\Z)")
_MAX_MISSES = 200


@dataclass(frozen=True)
class _Found:
    """A theorem in a file: its statement, where it starts, and how its proof ends."""

    statement: Sentence  # from the keyword on, offsets in the file
    start: int  # where the whole sentence starts: the header ends here
    end: str | None  # the word that ends its proof, None when nothing does

    @property
    def open(self) -> bool:
        return self.end in (None, "Admitted")


def read_coq_files(path: Path) -> tuple[list[Theorem], list[InputProblem]]:
    """The open theorems of a ``.v`` file, or of every ``*.v`` under a folder (recursively,
    in sorted order, hidden folders left out), and the problems met on the way.

    Raises ``FileNotFoundError`` when ``path`` does not exist.
    """
    if path.is_dir():
        files = sorted(
            (
                p
                for p in path.rglob("*.v")
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            ),
            key=lambda p: p.relative_to(path).as_posix(),
        )
        if not files:
            return [], [InputProblem(0, "no Coq file (*.v) in this folder", str(path))]
        theorems: list[Theorem] = []
        problems: list[InputProblem] = []
        for file in files:
            found, bad = _read_file(file, file.relative_to(path).with_suffix("").as_posix())
            theorems += found
            problems += bad
        return theorems, problems
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    return _read_file(path, path.stem)


def failure_line(theorem: Theorem, failure: dict[str, Any]) -> int | None:
    """The line in ``theorem.source`` that a header or statement failure is about, or None
    when the failure is about the proof.

    The failure's ``stage`` says which part failed; a header failure names its sentence (the
    verifier's ``sentence`` field, or the sentence quoted in its message), and the header is
    the file's beginning, so its lines are the file's.
    """
    message = str(failure.get("message") or "")
    if failure.get("kind") != "header_error" and failure.get("stage") != "header":
        return theorem.line if failure.get("stage") == "statement" else None
    try:
        sentences = split_sentences(theorem.header)
    except SentenceError:
        return theorem.line
    named = failure.get("sentence")
    for s in sentences:
        if s.text == named or (named is None and repr(s.text) in message):
            return _line(theorem.header, s.start)
    return theorem.line


def _read_file(file: Path, base_id: str) -> tuple[list[Theorem], list[InputProblem]]:
    source = str(file)

    def problem(line: int, message: str) -> InputProblem:
        return InputProblem(line, message, source)

    try:
        data = file.read_bytes()
    except OSError as exc:
        return [], [problem(0, f"cannot read the file: {exc.strerror or exc}")]
    if b"\x00" in data:
        return [], [problem(1, "a binary file, not Coq source")]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return [], [problem(line, f"not UTF-8 text (byte {data[exc.start]:#04x}), not Coq source")]
    try:
        found = _theorems_in(split_sentences(text))
    except SentenceError as exc:
        return [], [problem(_break_line(text), f"not Coq source: {exc}")]
    opened = [f for f in found if f.open]
    if not opened:
        what = (
            f"all {len(found)} theorem(s) in it end in Qed., Defined. or Abort."
            if found
            else f"no {', '.join(sorted(THEOREM_KEYWORDS))} in it"
        )
        return [], [problem(1, f"no open theorem to prove: {what}")]
    theorems: list[Theorem] = []
    problems: list[InputProblem] = []
    declared: dict[str, int] = {}
    unfinished: tuple[str, int] | None = None
    for f in found:
        line = _line(text, f.statement.start)
        try:
            name, _ = _parse_statement(f.statement.text)
        except SentenceError as exc:
            problems.append(problem(line, f"{exc}: {' '.join(f.statement.text.split())[:60]!r}"))
            continue
        if unfinished is not None:
            problems.append(
                problem(
                    line,
                    f"theorem {name!r} starts inside the unfinished proof of {unfinished[0]!r} "
                    f"(line {unfinished[1]}): end that proof with Qed., Defined. or Admitted.",
                )
            )
            continue
        if name in declared:
            problems.append(
                problem(
                    line,
                    f"theorem {name!r} is declared again (first at line {declared[name]}); "
                    "Coq rejects a name used twice",
                )
            )
            continue
        declared[name] = line
        if f.open:
            theorems.append(
                Theorem(
                    id=base_id if len(opened) == 1 else f"{base_id}:{name}",
                    statement=f.statement.text,
                    header=text[: f.start],
                    line=line,
                    source=source,
                )
            )
        if f.end is None and f is not found[-1]:
            unfinished = (name, line)
    return theorems, problems


def _theorems_in(sentences: list[Sentence]) -> list[_Found]:
    """Each theorem and the word that ends its proof: the first ``Qed``/``Defined``/
    ``Admitted``/... after it, or None when the file or the next theorem comes first."""
    found: list[_Found] = []
    i, n = 0, len(sentences)
    while i < n:
        m = _THEOREM.match(sentences[i].text)
        if m is None or (m.group(1) == "Example" and ":=" in sentences[i].text):
            i += 1  # not a theorem; ``Example e : T := t.`` is a definition
            continue
        s = sentences[i]
        j = i + 1
        while j < n and head_word(sentences[j].text) not in _ENDS:
            if _THEOREM.match(sentences[j].text):
                break
            j += 1
        end = head_word(sentences[j].text) if j < n else None
        end = end if end in _ENDS else None
        found.append(_Found(Sentence(s.text[m.start(1) :], s.start + m.start(1)), s.start, end))
        i = j + 1 if end else j
    return found


def _break_line(text: str) -> int:
    """The line where ``text`` stops splitting into sentences: where the first sentence (or
    comment, or string) that never ends begins."""
    good = misses = 0
    for m in _PERIOD.finditer(text):
        if misses > _MAX_MISSES:
            break
        try:
            split_sentences(text[good : m.end()])
        except SentenceError:
            misses += 1  # a period inside a comment or a string, or the broken part
            continue
        good, misses = m.end(), 0
    rest = text[good:]
    return _line(text, good + len(rest) - len(rest.lstrip()))


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
