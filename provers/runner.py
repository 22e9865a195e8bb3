"""The batch proof runner behind ``lemmata prove``.

Input: JSONL, one theorem a line, ``{"id", "header", "statement", "proof"?}``. A line with a
``proof`` is checked; one without is searched with the backend's tactic portfolio
(:mod:`lemmata.provers.portfolio`). Output: one JSONL line per theorem,
``{"id", "status": "proved"|"failed"|"timeout"|"error", "proof", "failure_mode",
"elapsed_s", "attempts", "backend"}``, appended and flushed as each theorem finishes, so an
interrupted run leaves a valid file that ``resume=True`` continues.

Bad lines (not JSON, a missing field, a repeated id) are reported with their line numbers and
skipped; the rest runs. A header that does not load makes every theorem under it an
``error`` with that message, and is tried once.

:func:`read_problems` also reads Coq ``.v`` files and folders of them
(:mod:`lemmata.provers.coq.files`): each open theorem is one problem, and a header or
statement that fails names its file and line (``dir/foo.v:3: the header fails at ...``).
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lemmata.provers.base import Verifier
from lemmata.provers.portfolio import candidates
from lemmata.provers.process import stage_of
from lemmata.provers.result import FailureKind, FailureMode, Status, VerifyResult

__all__ = [
    "InputProblem",
    "LocalWorker",
    "Worker",
    "RunSummary",
    "Theorem",
    "TheoremResult",
    "prove_one",
    "read_done_ids",
    "read_problems",
    "read_theorems",
    "run_batch",
]

_STATUS = {
    Status.PASS: "proved",
    Status.FAIL: "failed",
    Status.TIMEOUT: "timeout",
    Status.CRASH: "error",
    Status.UNAVAILABLE: "error",
}


@dataclass(frozen=True)
class Theorem:
    """One theorem to check (``proof`` given) or to prove. ``source`` is the ``.v`` file it
    came from (``""`` for JSONL) and ``line`` the statement's line there, or its JSONL line."""

    id: str
    statement: str
    header: str = ""
    proof: str | None = None
    line: int = 0
    source: str = ""


@dataclass(frozen=True)
class InputProblem:
    """Input that was skipped, and why: ``line`` in the input file, or in ``source`` when
    the input is a folder of files (0: the whole file or folder)."""

    line: int
    message: str
    source: str = ""

    def __str__(self) -> str:
        if self.source:
            return f"{self.source}:{self.line}: {self.message}"
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class TheoremResult:
    """One theorem's line in the results file. ``details`` carries what a method adds (the
    refinement search: verifier calls, vacuity, header additions, the trace file); its keys
    are written beside the others."""

    id: str
    status: str
    proof: str | None
    failure_mode: dict[str, Any] | None
    elapsed_s: float
    attempts: int
    backend: str
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> str:
        record = {k: v for k, v in self.__dict__.items() if k != "details"}
        return json.dumps(record | self.details, ensure_ascii=False)


@dataclass
class RunSummary:
    total: int = 0
    skipped: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    problems: list[InputProblem] = field(default_factory=list)
    header_errors: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    interrupted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "skipped_already_done": self.skipped,
            "proved": self.counts["proved"],
            "failed": self.counts["failed"],
            "timeout": self.counts["timeout"],
            "error": self.counts["error"],
            "input_problems": [str(p) for p in self.problems],
            "header_errors": list(self.header_errors.values()),
            "elapsed_s": round(self.elapsed_s, 3),
            "interrupted": self.interrupted,
        }


def read_theorems(path: Path) -> tuple[list[Theorem], list[InputProblem]]:
    """Parse the input file; every bad line becomes an :class:`InputProblem`."""
    theorems: list[Theorem] = []
    problems: list[InputProblem] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip() or raw.lstrip().startswith("//"):
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                problems.append(InputProblem(number, f"not JSON ({exc.msg} at column {exc.colno})"))
                continue
            if not isinstance(data, dict):
                problems.append(InputProblem(number, "expected a JSON object"))
                continue
            missing = [k for k in ("id", "statement") if k not in data]
            if missing:
                problems.append(
                    InputProblem(number, f"missing field {', '.join(repr(m) for m in missing)}")
                )
                continue
            bad = [
                k
                for k in ("id", "statement", "header", "proof")
                if k in data and data[k] is not None and not isinstance(data[k], str | int)
            ]
            if bad or not str(data["statement"]).strip():
                problems.append(
                    InputProblem(
                        number, f"field {bad[0] if bad else 'statement'!r} must be non-empty text"
                    )
                )
                continue
            tid = str(data["id"])
            if tid in seen:
                problems.append(
                    InputProblem(number, f"id {tid!r} appears again; ids must be unique")
                )
                continue
            seen.add(tid)
            proof = data.get("proof")
            theorems.append(
                Theorem(
                    tid,
                    str(data["statement"]),
                    str(data.get("header") or ""),
                    None if proof is None or not str(proof).strip() else str(proof),
                    number,
                )
            )
    return theorems, problems


def read_problems(path: Path) -> tuple[list[Theorem], list[InputProblem]]:
    """The theorems in ``path``: a Coq ``.v`` file or a folder of them
    (:func:`~lemmata.provers.coq.files.read_coq_files`), else JSONL (:func:`read_theorems`).

    >>> theorems, problems = read_problems(Path("minif2f/valid"))        # doctest: +SKIP
    """
    if path.is_dir() or path.suffix == ".v":
        from lemmata.provers.coq.files import read_coq_files

        return read_coq_files(path)
    return read_theorems(path)


def read_done_ids(path: Path) -> set[str]:
    """Ids already in a results file. A torn last line (a run killed mid-write) is dropped
    from the file so that appending goes on from a clean end."""
    if not path.exists():
        return set()
    done: set[str] = set()
    good_end = 0
    with path.open("rb") as fh:
        data = fh.read()
    offset = 0
    for line in data.splitlines(keepends=True):
        offset += len(line)
        try:
            record = json.loads(line)
            done.add(str(record["id"]))
            good_end = offset
        except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError):
            if line.strip():
                break
            good_end = offset
    if good_end < len(data):
        with path.open("r+b") as fh:
            fh.truncate(good_end)
    return done


def prove_one(verifier: Verifier, theorem: Theorem, timeout: float) -> TheoremResult:
    """Check the given proof, or search the portfolio within ``timeout`` seconds in all."""
    started = time.monotonic()
    if theorem.proof is not None:
        r = verifier.check(theorem.header, theorem.statement, theorem.proof, timeout)
        return _result(theorem, r, theorem.proof, 1, started, verifier.backend)
    attempts = 0
    kinds: Counter[FailureKind] = Counter()
    last: VerifyResult | None = None
    for proof in candidates(verifier.backend, theorem.statement):
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0.05:
            break
        attempts += 1
        r = verifier.check(
            theorem.header, theorem.statement, proof, min(remaining, max(2.0, timeout / 4))
        )
        last = r
        if r.status is Status.PASS:
            return _result(theorem, r, proof, attempts, started, verifier.backend)
        # A header or statement that fails fails every other candidate the same way: stop,
        # and say why.
        if r.status is Status.UNAVAILABLE or stage_of(r) in ("header", "statement"):
            return _result(theorem, r, None, attempts, started, verifier.backend)
        if r.failure_mode:
            kinds[r.failure_mode.kind] += 1
    if last is None:
        failure = FailureMode(FailureKind.TIMEOUT, "no time left for any attempt")
        return TheoremResult(
            theorem.id,
            "timeout",
            None,
            failure.to_dict(),
            round(time.monotonic() - started, 4),
            0,
            verifier.backend,
        )
    common = kinds.most_common(1)[0][0] if kinds else FailureKind.OTHER
    ran_out = time.monotonic() - started >= timeout - 0.05
    summary = FailureMode(
        FailureKind.TIMEOUT if ran_out and common is FailureKind.TIMEOUT else common,
        f"no proof among {attempts} portfolio attempts{' (time ran out)' if ran_out else ''}; "
        f"most common failure: {common.value}",
    )
    return TheoremResult(
        theorem.id,
        "timeout" if ran_out and common is FailureKind.TIMEOUT else "failed",
        None,
        summary.to_dict(),
        round(time.monotonic() - started, 4),
        attempts,
        verifier.backend,
    )


def _located(theorem: Theorem, result: TheoremResult) -> TheoremResult:
    """For a theorem read from a file, a header or statement failure names the file and
    line it is about (``dir/foo.v:3: the header fails at ...``)."""
    failure = result.failure_mode
    if not theorem.source.endswith(".v") or not failure:  # only Coq files carry a source
        return result
    from lemmata.provers.coq.files import failure_line

    line = failure_line(theorem, failure)
    if line is None:
        return result
    message = f"{theorem.source}:{line}: {failure.get('message') or ''}"
    return replace(result, failure_mode=failure | {"message": message})


def _result(
    theorem: Theorem,
    r: VerifyResult,
    proof: str | None,
    attempts: int,
    started: float,
    backend: str,
) -> TheoremResult:
    failure = None
    if r.failure_mode:
        # Which part of the input failed (header, statement, proof) travels with the failure.
        stage = stage_of(r)
        failure = r.failure_mode.to_dict() | ({"stage": stage} if stage else {})
    return TheoremResult(
        theorem.id,
        _STATUS[r.status],
        proof if r.status is Status.PASS or theorem.proof is not None else None,
        failure,
        round(time.monotonic() - started, 4),
        attempts,
        backend,
    )


@runtime_checkable
class Worker(Protocol):
    """Proves one theorem at a time: a local verifier, or an actor on a Ray cluster."""

    backend: str

    def prove(self, theorem: Theorem, timeout: float) -> TheoremResult: ...

    def close(self) -> None: ...


class LocalWorker:
    """A :class:`Worker` over a verifier in this process."""

    def __init__(self, verifier: Verifier) -> None:
        self.verifier = verifier
        self.backend = verifier.backend

    def prove(self, theorem: Theorem, timeout: float) -> TheoremResult:
        return prove_one(self.verifier, theorem, timeout)

    def close(self) -> None:
        self.verifier.close()


def run_batch(
    theorems: Iterable[Theorem],
    make_worker: Callable[[], Worker | Verifier],
    *,
    out: Path,
    workers: int = 1,
    timeout: float = 60.0,
    resume: bool = False,
    on_result: Callable[[TheoremResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> RunSummary:
    """Prove ``theorems`` with ``workers`` workers in parallel, appending to ``out``.

    ``make_worker`` returns a :class:`Worker`, or a :class:`Verifier` to run here.

    ``on_start(n)`` is called with the number of theorems to run, ``on_result`` after each.
    Ctrl-C stops the run after closing the verifiers; every finished theorem is in ``out``.
    """
    started = time.monotonic()
    items = list(theorems)
    summary = RunSummary(total=len(items))
    done = read_done_ids(out) if resume else set()
    if not resume and out.exists():
        out.unlink()
    todo = [t for t in items if t.id not in done]
    by_id = {t.id: t for t in todo}
    summary.skipped = len(items) - len(todo)
    if on_start:
        on_start(len(todo))
    out.parent.mkdir(parents=True, exist_ok=True)
    pool: queue.Queue[Worker] = queue.Queue()
    made: list[Worker] = []
    lock = threading.Lock()
    failed_headers: dict[str, TheoremResult] = {}

    def work(theorem: Theorem) -> TheoremResult:
        with lock:
            known = failed_headers.get(theorem.header)
        if known is not None:
            return _located(
                theorem,
                TheoremResult(theorem.id, "error", None, known.failure_mode, 0.0, 0, known.backend),
            )
        try:
            worker = pool.get_nowait()
        except queue.Empty:
            made_now = make_worker()
            worker = made_now if isinstance(made_now, Worker) else LocalWorker(made_now)
            with lock:
                made.append(worker)
        try:
            result = worker.prove(theorem, timeout)
        finally:
            pool.put(worker)
        fm = result.failure_mode or {}
        if result.status == "error" and fm.get("kind") == FailureKind.HEADER_ERROR.value:
            with lock:
                failed_headers.setdefault(theorem.header, result)
        return _located(theorem, result)

    executor = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="prove")
    with out.open("a", encoding="utf-8") as sink:
        pending: set[Future[TheoremResult]] = set()
        it = iter(todo)
        try:
            # Keep at most 2 * workers queued, so an interrupt leaves little half-done.
            for theorem in it:
                pending.add(executor.submit(work, theorem))
                if len(pending) >= 2 * max(1, workers):
                    break
            while pending:
                finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    result = fut.result()
                    sink.write(result.to_json() + "\n")
                    sink.flush()
                    os.fsync(sink.fileno())
                    summary.counts[result.status] += 1
                    fm = result.failure_mode or {}
                    if (
                        result.status == "error"
                        and fm.get("kind") == FailureKind.HEADER_ERROR.value
                    ):
                        header = by_id[result.id].header
                        summary.header_errors.setdefault(header, str(fm.get("message")))
                    if on_result:
                        on_result(result)
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(executor.submit(work, nxt))
        except KeyboardInterrupt:
            summary.interrupted = True
            for fut in pending:
                fut.cancel()
            raise
        finally:
            for worker in made:
                worker.close()
            executor.shutdown(wait=not summary.interrupted, cancel_futures=True)
            summary.elapsed_s = time.monotonic() - started
    return summary
