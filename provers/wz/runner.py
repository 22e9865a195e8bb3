"""The WZ batch: ``lemmata prove FILE --method wz``.

Each identity's result is appended to ``OUT_DIR/results.jsonl`` as soon as it is known (so an
interrupted run keeps what it finished, and ``resume`` skips it); each ``proved`` identity also
gets a Lean 4 sketch in ``OUT_DIR/lean/ID.lean``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.provers.wz.identity import WZIdentity
from lemmata.provers.wz.prove import WZResult, prove_identity

__all__ = ["WZSummary", "run_wz"]


@dataclass
class WZSummary:
    total: int = 0
    skipped: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    elapsed_s: float = 0.0
    lean_files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "skipped_already_done": self.skipped,
            **dict(self.counts),
            "elapsed_s": round(self.elapsed_s, 3),
            "lean_files": self.lean_files,
        }


def _safe_name(ident: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", ident)[:120] or "identity"


def _done_ids(path: Path) -> set[str]:
    done = set()
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                done.add(str(json.loads(line)["id"]))
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return done


class _InlineProver:
    def __init__(self, max_order: int, timeout_s: float, grace_s: float = 5.0) -> None:
        self.max_order, self.timeout_s, self.grace_s = max_order, timeout_s, grace_s

    def __enter__(self) -> _InlineProver:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def prove(self, ident: WZIdentity) -> WZResult:
        return prove_identity(ident, max_order=self.max_order, timeout_s=self.timeout_s)

    def placement(self, ident_id: str) -> dict[str, str]:
        """Where ``ident_id`` was proved, for its record (a Ray prover names node and actor)."""
        return {}


def _default_signals() -> None:
    # A handler the parent inherited from a library (Ray's turns SIGTERM into sys.exit) must not
    # run in the worker: stopping it after a time-out has to end it at once.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _prove_in_worker(ident: WZIdentity, max_order: int, timeout_s: float) -> WZResult:
    return prove_identity(ident, max_order=max_order, timeout_s=timeout_s)


class _IsolatedProver(_InlineProver):
    """One worker process (forked, so SymPy is loaded once), replaced after a time-out."""

    def __enter__(self) -> _IsolatedProver:
        self._pool: Any = None
        return self

    def _worker(self) -> Any:
        if self._pool is None:
            self._pool = multiprocessing.get_context("fork").Pool(
                processes=1, initializer=_default_signals
            )
        return self._pool

    def prove(self, ident: WZIdentity) -> WZResult:
        job = self._worker().apply_async(_prove_in_worker, (ident, self.max_order, self.timeout_s))
        try:
            # prove_identity watches the limit between steps; the margin covers one long step.
            return job.get(timeout=self.timeout_s + self.grace_s)
        except multiprocessing.TimeoutError:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
            return WZResult(
                ident.id,
                "failed",
                reason=f"no verdict within {self.timeout_s:g}s (worker stopped)",
                elapsed_s=self.timeout_s + 5,
            )

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()


def _lean_check(sketch: str, verifier: Any, model: Any, budget: int) -> tuple[str, dict[str, Any]]:
    from lemmata.provers.wz.discharge import _check, discharge

    if model is None:
        report, _ = _check(verifier, sketch)
        return sketch, {"checked": True, "obligations": report, "model": None}
    sketch, rep = discharge(sketch, verifier, model, budget=budget)
    label = f"{model.name} [scripted]" if getattr(model, "is_scripted", False) else model.name
    return sketch, {
        "checked": True,
        "obligations": rep.after,
        "model": label,
        "model_calls": rep.calls,
        "closed_by_model": rep.closed_by_model,
        "notes": rep.notes,
    }


def run_wz(
    identities: Iterable[WZIdentity],
    out_dir: Path,
    *,
    resume: bool = False,
    max_order: int = 3,
    timeout_s: float = 60.0,
    lean: bool = True,
    lean_verifier: Any = None,
    lean_unavailable: str = "no Lean verifier was given",
    model: Any = None,
    model_budget: int = 20,
    isolate: bool = True,
    grace_s: float = 5.0,
    on_result: Callable[[WZResult], None] | None = None,
    prover: Any = None,
) -> WZSummary:
    """Prove each identity; see the module docstring.

    With ``lean_verifier`` (a :class:`~lemmata.provers.lean.LeanRepl`) each sketch is checked
    and the record says which obligations Lean closed; with a ``model`` too, the open ones go
    to it (:func:`~lemmata.provers.wz.discharge.discharge`) within ``model_budget`` calls.
    With ``isolate`` (the default) each identity is proved in a worker process that is killed
    when it runs past ``timeout_s`` (SymPy can take unbounded time on some inputs); the
    identity is then ``failed`` with that reason and the batch goes on. ``prover`` replaces
    both with another one that has ``prove`` and ``placement``, used as a context manager
    (:meth:`lemmata.provers.ray_workers.RayCluster.wz_prover`: a Ray actor).
    """
    started = time.monotonic()
    items = list(identities)
    out_dir.mkdir(parents=True, exist_ok=True)
    results_path = out_dir / "results.jsonl"
    done = _done_ids(results_path) if resume else set()
    if not resume and results_path.exists():
        results_path.unlink()
    summary = WZSummary(total=len(items), skipped=sum(1 for i in items if i.id in done))
    if prover is None:
        prover = (_IsolatedProver if isolate else _InlineProver)(max_order, timeout_s, grace_s)
    with prover, results_path.open("a", encoding="utf-8") as sink:
        for ident in items:
            if ident.id in done:
                continue
            result = prover.prove(ident)
            record = result.to_dict() | prover.placement(ident.id)
            if lean and result.verdict == "proved":
                from lemmata.provers.wz.lean_sketch import lean_sketch

                path = out_dir / "lean" / f"{_safe_name(ident.id)}.lean"
                path.parent.mkdir(parents=True, exist_ok=True)
                sketch = lean_sketch(ident, result)
                record["lean"] = {"checked": False, "why": lean_unavailable}
                if lean_verifier is not None:
                    sketch, record["lean"] = _lean_check(sketch, lean_verifier, model, model_budget)
                path.write_text(sketch, encoding="utf-8")
                record["lean_file"] = str(path)
                summary.lean_files.append(str(path))
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            sink.flush()
            os.fsync(sink.fileno())
            summary.counts[result.verdict] += 1
            if on_result:
                on_result(result)
    summary.elapsed_s = time.monotonic() - started
    return summary
