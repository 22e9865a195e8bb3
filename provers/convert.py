"""Convert PutnamBench/miniF2F-style Lean 4 files into the batch runner's JSONL.

Such a file is a header (``import``, ``open``, ``set_option``, helper ``def``/``abbrev``
declarations) followed by theorems whose proofs are ``sorry``::

    import Mathlib
    open Real

    theorem mathd_algebra_10 : abs ((120 : ℝ) / 100 * 30 - 130) = 20 := by
      sorry

Each ``theorem``/``lemma`` becomes one line ``{"id", "header", "statement"}``: ``header`` is
everything in the file before it that is not another theorem, ``statement`` the declaration up
to its ``:=``. A theorem with a real proof keeps it as ``"proof"``.

>>> text = "import Mathlib\\n\\ntheorem t (n : ℕ) : n + 0 = n := by\\n  sorry\\n"
>>> lean_file_to_records(text, "demo")[0]["statement"]
'theorem t (n : ℕ) : n + 0 = n'
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["lean_file_to_records", "lean_files_to_jsonl"]

# A top-level declaration or command starts at column 0 (after its doc comment/attributes).
_TOP = re.compile(
    r"^(?=(?:/--|@\[|theorem\b|lemma\b|def\b|abbrev\b|noncomputable\b|open\b|namespace\b|end\b|"
    r"section\b|variable\b|universe\b|set_option\b|import\b|instance\b|example\b|private\b|"
    r"protected\b|macro\b|notation\b|local\b|attribute\b|structure\b|inductive\b|class\b|axiom\b|#))",
    re.M,
)
_THEOREM = re.compile(
    r"^(?:/--.*?-/\s*)?(?:@\[[^\]]*\]\s*)?(?:protected\s+|private\s+)?(theorem|lemma)\s+(\S+)", re.S
)
_SORRY_TAIL = re.compile(r"\s*:=\s*(?:by\s+)?sorry\s*$", re.S)


def _strip_comments(text: str) -> str:
    """Remove ``/- ... -/`` block comments (not doc comments) and ``--`` line comments."""
    text = re.sub(r"/-(?!-).*?-/", "", text, flags=re.S)
    return re.sub(r"(?m)--.*$", "", text)


def _split_assignment(decl: str) -> tuple[str, str] | None:
    """``(statement, proof)`` at the declaration's first top-level ``:=``."""
    depth = 0
    for i, ch in enumerate(decl):
        if ch in "([{⟨":
            depth += 1
        elif ch in ")]}⟩":
            depth -= 1
        elif ch == ":" and depth == 0 and decl.startswith(":=", i):
            return decl[:i].rstrip(), decl[i + 2 :].strip()
    return None


def lean_file_to_records(text: str, source: str = "") -> list[dict[str, Any]]:
    """The theorems of one Lean file as JSONL records; see the module docstring.

    Raises ``ValueError`` naming the declaration that has no ``:=``.
    """
    clean = _strip_comments(text)
    starts = [m.start() for m in _TOP.finditer(clean)]
    chunks = [clean[a:b].strip() for a, b in zip(starts, [*starts[1:], len(clean)], strict=True)]
    header_parts: list[str] = []
    records: list[dict[str, Any]] = []
    for chunk in chunks:
        if not chunk:
            continue
        m = _THEOREM.match(chunk)
        if m is None:
            header_parts.append(chunk)
            continue
        split = _split_assignment(chunk)
        if split is None:
            raise ValueError(f"{source or 'input'}: theorem {m.group(2)} has no ':='")
        statement, proof = split
        statement = re.sub(r"^/--.*?-/\s*", "", statement, flags=re.S)
        record: dict[str, Any] = {
            "id": m.group(2),
            "header": "\n\n".join(header_parts),
            "statement": statement,
        }
        if not _SORRY_TAIL.match(":= " + proof):
            record["proof"] = proof
        if source:
            record["source"] = source
        records.append(record)
    return records


def lean_files_to_jsonl(paths: list[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """Records from several files (ids prefixed by the file's stem when they clash), and a
    problem line for each file that could not be read or converted."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for path in paths:
        try:
            found = lean_file_to_records(path.read_text(encoding="utf-8"), str(path))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
            continue
        if not found:
            problems.append(f"{path}: no theorem or lemma found")
        for record in found:
            if record["id"] in seen:
                record["id"] = f"{path.stem}.{record['id']}"
            seen.add(record["id"])
            records.append(record)
    return records, problems
