"""Lean batches in the Kimina Lean Server's terms, run on a :class:`~.pool.LeanPool`.

Input, one snippet each: ``{"id", "code"}`` (the Kimina server's ``snippets``; its older
``{"custom_id", "proof"}`` / ``{"custom_id", "code"}`` is read too), optionally with
``"statement"``: one declaration head, or a list of them (``theorem t (n : ℕ) : n = n``, up
to its ``:=``) that the code must contain unchanged. A file is JSONL, or a JSON object
``{"snippets": [...]}`` / ``{"codes": [...]}``, or a JSON list; bad entries are reported by
line (or index) and the rest runs.

Output, one result each: ``{"id", "status", "messages", "time", "toolchain", "axioms",
"sorries", "reason", "warm"}``. ``status`` is the Kimina client's: ``valid``, ``sorry``,
``lean_error``, ``repl_error`` or ``timeout_error``. ``messages`` are the REPL's (Kimina's
shape: ``severity``, ``pos``, ``endPos``, ``data``) with positions in the snippet's own
lines. ``toolchain`` is the Lean version the check ran under.

Stricter than the Kimina server, ``valid`` also needs the soundness checks (the ones that
need no Lean are in :mod:`lemmata.provers.lean.snippet`):

- every ``theorem``/``lemma`` the code declares depends on no axiom beyond ``propext``,
  ``Classical.choice`` and ``Quot.sound`` (``#print axioms``, asked as a separate command so
  that nothing the code prints can answer it; ``sorryAx`` makes the result ``sorry``);
- the code declares no ``axiom`` and runs nothing at elaboration that could change the
  environment unchecked (``#eval``, ``run_cmd``, ``unsafe``, ``implemented_by``/``extern``,
  ``set_option debug.skipKernelTC``);
- given ``statement``, each one appears in the code as written (comments and spacing aside),
  and the code adds nothing outside proofs that could change what a statement means
  (``variable``/``include``, notations, macros and syntax, instances).

A check that fails on soundness is ``lean_error`` with the reason in ``reason``: Kimina's
statuses have no other "not a proof" than an error, and no consumer counting ``valid`` may
count it.

>>> run = run_kimina([{"id": "t", "code": "theorem t : 1 + 1 = 2 := rfl"}])   # doctest: +SKIP
>>> run.results[0].status, run.results[0].axioms                             # doctest: +SKIP
('valid', {'t': []})
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.provers.lean.pool import LeanPool, PoolReply, split_header
from lemmata.provers.lean.protocol import CommandResponse, LeanMessage, ReplError
from lemmata.provers.lean.repl import parse_axioms
from lemmata.provers.lean.snippet import declared_theorems, screen_code, statement_problem
from lemmata.provers.runner import InputProblem, read_done_ids

__all__ = [
    "KIMINA_STATUSES",
    "KiminaItem",
    "KiminaResult",
    "KiminaRun",
    "check_kimina",
    "read_kimina",
    "run_kimina",
]

KIMINA_STATUSES = ("valid", "sorry", "lean_error", "repl_error", "timeout_error")

_SORRY_WARNING = ("declaration uses 'sorry'", "declaration uses `sorry`")


# -- items and results ------------------------------------------------------------------------


@dataclass(frozen=True)
class KiminaItem:
    """One snippet: ``id``, the Lean ``code``, the declaration heads it must keep unchanged
    (``statements``), and where it came from (``line`` of the input, 0 from the API)."""

    id: str
    code: str
    statements: tuple[str, ...] = ()
    line: int = 0

    @classmethod
    def from_dict(cls, data: Any, line: int = 0) -> KiminaItem:
        """Validate one input object; ``ValueError`` names the field to fix."""
        if not isinstance(data, Mapping):
            raise ValueError("expected a JSON object with 'id' and 'code'")
        ident = data.get("id", data.get("custom_id"))
        if ident is None or isinstance(ident, bool) or not isinstance(ident, str | int):
            raise ValueError("field 'id' (or Kimina's 'custom_id') must be text or a number")
        if not str(ident).strip():
            raise ValueError("field 'id' must not be empty")
        code = data.get("code", data.get("proof"))
        if not isinstance(code, str) or not code.strip():
            raise ValueError(f"snippet {ident!r}: field 'code' (or 'proof') must be Lean text")
        raw = data.get("statement", data.get("statements", ()))
        statements = (raw,) if isinstance(raw, str) else raw
        if not isinstance(statements, list | tuple) or not all(
            isinstance(s, str) and s.strip() for s in statements
        ):
            raise ValueError(
                f"snippet {ident!r}: field 'statement' must be a declaration head or a list of them"
            )
        return cls(str(ident), code, tuple(str(s) for s in statements), line)

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"id": self.id, "code": self.code}
        if self.statements:
            record["statement"] = list(self.statements)
        return record


@dataclass(frozen=True)
class KiminaResult:
    """One snippet's result; see the module docstring for the fields. ``axioms`` is what
    ``#print axioms`` reported for each declared theorem (``None``: not asked, because the
    check stopped earlier), ``warm`` whether the header's environment was found warm."""

    id: str
    status: str
    messages: tuple[dict[str, Any], ...] = ()
    time: float = 0.0
    toolchain: str = "unknown"
    axioms: dict[str, list[str]] | None = None
    sorries: int = 0
    reason: str = ""
    warm: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        record = {k: v for k, v in self.__dict__.items() if k != "extra"}
        record["messages"] = list(self.messages)
        return record | self.extra

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KiminaResult:
        if data.get("status") not in KIMINA_STATUSES:
            raise ValueError(f"not a result: status {data.get('status')!r}")
        names = set(cls.__dataclass_fields__) - {"extra"}
        known = {k: v for k, v in data.items() if k in names}
        known["messages"] = tuple(known.get("messages") or ())
        return cls(**known, extra={k: v for k, v in data.items() if k not in names})


@dataclass
class KiminaRun:
    """A batch: its results in input order, the input that was skipped, and the counts."""

    results: list[KiminaResult] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    skipped: int = 0
    elapsed_s: float = 0.0
    pool: dict[str, int] = field(default_factory=dict)

    @property
    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)

    def summary(self) -> dict[str, Any]:
        return {
            "total": len(self.results) + self.skipped,
            "skipped_already_done": self.skipped,
            **{s: self.counts[s] for s in KIMINA_STATUSES},
            "input_problems": [str(p) for p in self.problems],
            "elapsed_s": round(self.elapsed_s, 3),
            "pool": self.pool,
        }


# -- judging one reply ------------------------------------------------------------------------


def _kimina_message(m: LeanMessage, line: int | None, end_line: int | None) -> dict[str, Any]:
    return {
        "severity": m.severity,
        "pos": {"line": line, "column": m.column},
        "endPos": None if end_line is None else {"line": end_line, "column": m.end_column},
        "data": m.text,
    }


def _body_messages(reply: CommandResponse, offset: int) -> tuple[dict[str, Any], ...]:
    def at(line: int | None) -> int | None:
        return line + offset if line else line

    return tuple(_kimina_message(m, at(m.line), at(m.end_line)) for m in reply.messages)


def _header_messages(reply: CommandResponse, lines: list[int]) -> tuple[dict[str, Any], ...]:
    def at(line: int | None) -> int | None:
        return lines[line - 1] if line and 0 < line <= len(lines) else line

    return tuple(_kimina_message(m, at(m.line), at(m.end_line)) for m in reply.messages)


def _judge(
    out: PoolReply,
    names: list[str],
    header_lines: list[int],
    offset: int,
    allowed: frozenset[str],
) -> dict[str, Any]:
    """The fields of a result that the REPL's answers decide."""
    if out.outcome == "timeout":
        return {"status": "timeout_error", "reason": out.error}
    if out.outcome == "crash":
        return {"status": "repl_error", "reason": f"the REPL crashed: {out.error}"}
    reply = out.reply
    if isinstance(reply, ReplError) or reply is None:
        where = "the header" if out.outcome == "header_failed" else "the snippet"
        text = reply.message if reply is not None else "no reply"
        return {"status": "repl_error", "reason": f"the REPL refused {where}: {text}"}
    if out.outcome == "header_failed":
        return {
            "status": "lean_error",
            "messages": _header_messages(reply, header_lines),
            "reason": "the imports do not load",
        }
    fields: dict[str, Any] = {
        "messages": _body_messages(reply, offset),
        "sorries": len(reply.sorries),
        "warm": not out.warmed,
    }
    if reply.errors:
        return fields | {"status": "lean_error"}
    if reply.sorries or any(m.text in _SORRY_WARNING for m in reply.messages):
        return fields | {"status": "sorry"}
    if not names:
        return fields | {"status": "valid", "axioms": {}}
    answer = out.axioms
    if not isinstance(answer, CommandResponse) or answer.errors:
        text = (
            answer.message
            if isinstance(answer, ReplError)
            else "; ".join(m.text for m in answer.errors)
            if answer is not None
            else "no answer"
        )
        return fields | {
            "status": "lean_error",
            "reason": f"`#print axioms` failed ({text}): a theorem was not declared as written",
        }
    axioms: dict[str, list[str]] = {}
    for name in names:
        found = parse_axioms(answer.messages, name)
        if found is None:
            return fields | {
                "status": "lean_error",
                "reason": f"Lean did not report the axioms of {name!r}",
            }
        axioms[name] = found
    fields["axioms"] = axioms
    used = sorted({a for found in axioms.values() for a in found})
    if "sorryAx" in used:
        return fields | {"status": "sorry", "reason": "a theorem depends on sorryAx"}
    bad = [a for a in used if a not in allowed]
    if bad:
        return fields | {
            "status": "lean_error",
            "reason": f"depends on axioms beyond {', '.join(sorted(allowed))}: {', '.join(bad)}",
        }
    return fields | {"status": "valid"}


def check_kimina(
    pool: LeanPool, item: KiminaItem | Mapping[str, Any], timeout: float | None = None
) -> KiminaResult:
    """Check one snippet on ``pool``; every outcome is a :class:`KiminaResult`."""
    item = item if isinstance(item, KiminaItem) else KiminaItem.from_dict(item)
    started = time.monotonic()

    def result(**fields: Any) -> KiminaResult:
        return KiminaResult(
            item.id,
            time=round(time.monotonic() - started, 4),
            toolchain=pool.toolchain(),
            **fields,
        )

    refused = screen_code(item.code, fixed_statements=bool(item.statements))
    if refused is None and item.statements:
        refused = statement_problem(item.code, item.statements)
    if refused is not None:
        return result(status="lean_error", reason=refused)
    header, body, header_lines, offset = split_header(item.code)
    if not body.strip():
        return result(status="lean_error", reason="the snippet has imports and nothing else")
    names = declared_theorems(body)
    out = pool.run(header, body, timeout, axioms_of=names)
    return result(**_judge(out, names, header_lines, offset, pool.allowed_axioms))


# -- reading a batch and running it -----------------------------------------------------------


def read_kimina(path: str | Path) -> tuple[list[KiminaItem], list[InputProblem]]:
    """The snippets in ``path`` (see the module docstring); every bad entry becomes an
    :class:`~lemmata.provers.runner.InputProblem` naming its line, or its index in a JSON
    list, and repeated ids after the first are skipped."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the snippets file {path}: {exc}") from None
    entries: list[tuple[int, Any]] = []
    problems: list[InputProblem] = []
    stripped = text.lstrip()
    whole: Any = None
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped.strip()):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
    if isinstance(whole, Mapping) and isinstance(whole.get("snippets", whole.get("codes")), list):
        whole = whole.get("snippets", whole.get("codes"))
    if isinstance(whole, list):
        entries = [(i + 1, e) for i, e in enumerate(whole)]
        where = "entry"
    else:
        where = "line"
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip() or raw.lstrip().startswith("//"):
                continue
            try:
                entries.append((number, json.loads(raw)))
            except json.JSONDecodeError as exc:
                problems.append(InputProblem(number, f"not JSON ({exc.msg} at column {exc.colno})"))
    items: list[KiminaItem] = []
    seen: set[str] = set()
    for number, data in entries:
        try:
            item = KiminaItem.from_dict(data, number)
        except ValueError as exc:
            problems.append(
                InputProblem(number, str(exc) if where == "line" else f"entry {number}: {exc}")
            )
            continue
        if item.id in seen:
            problems.append(
                InputProblem(number, f"id {item.id!r} appears again; ids must be unique")
            )
            continue
        seen.add(item.id)
        items.append(item)
    return items, problems


def run_kimina(
    items: Iterable[KiminaItem | Mapping[str, Any]] | str | Path,
    *,
    pool: LeanPool | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    timeout: float | None = None,
    workers: int | None = None,
    on_result: Callable[[KiminaResult], None] | None = None,
    **pool_options: Any,
) -> KiminaRun:
    """Check a batch of snippets on a pool of REPLs.

    ``items``: snippet objects, or a file (:func:`read_kimina`). ``pool``: the pool to use
    (kept open); without one, a :class:`LeanPool` is made from ``pool_options`` and closed
    at the end. ``out``: a JSONL file that gets each result as it finishes (flushed, so an
    interrupted run leaves a valid file); ``resume=True`` skips ids already in it.
    ``workers`` threads run at once (default: the pool's size).
    """
    started = time.monotonic()
    run = KiminaRun()
    if isinstance(items, str | Path):
        todo, run.problems = read_kimina(items)
    else:
        todo = []
        seen: set[str] = set()
        for index, entry in enumerate(items, start=1):
            try:
                item = entry if isinstance(entry, KiminaItem) else KiminaItem.from_dict(entry)
            except ValueError as exc:
                run.problems.append(InputProblem(index, f"entry {index}: {exc}"))
                continue
            if item.id in seen:
                message = f"entry {index}: id {item.id!r} appears again; ids must be unique"
                run.problems.append(InputProblem(index, message))
                continue
            seen.add(item.id)
            todo.append(item)
    sink_path = Path(out) if out is not None else None
    if sink_path is not None:
        done = read_done_ids(sink_path) if resume else set()
        if not resume and sink_path.exists():
            sink_path.unlink()
        sink_path.parent.mkdir(parents=True, exist_ok=True)
        run.skipped = sum(1 for item in todo if item.id in done)
        todo = [item for item in todo if item.id not in done]
    own_pool = pool is None
    pool = pool or LeanPool(**pool_options)
    lock = threading.Lock()
    results: dict[str, KiminaResult] = {}
    sink = sink_path.open("a", encoding="utf-8") if sink_path is not None else None

    def one(item: KiminaItem) -> None:
        assert pool is not None
        result = check_kimina(pool, item, timeout)
        with lock:
            results[item.id] = result
            if sink is not None:
                sink.write(result.to_json() + "\n")
                sink.flush()
                os.fsync(sink.fileno())
            if on_result is not None:
                on_result(result)

    try:
        with ThreadPoolExecutor(max_workers=max(1, workers or pool.size)) as executor:
            futures = [executor.submit(one, item) for item in todo]
            try:
                for future in futures:
                    future.result()
            except BaseException:  # Ctrl-C or a bug: what has not started does not start
                for future in futures:
                    future.cancel()
                raise
    finally:
        if sink is not None:
            sink.close()
        run.pool = pool.stats.to_dict()
        if own_pool:
            pool.close()
    run.results = [results[item.id] for item in todo if item.id in results]
    run.elapsed_s = time.monotonic() - started
    return run
