"""The one-shot tactic portfolio, the baseline the refinement search is measured against.

Each candidate is a whole proof, checked from the header in one verifier call, cheapest and
most often useful first: the tactics of the search's own action set after ``intros`` (and
after ``intros; repeat split``), then the batch runner's portfolio. No candidate looks at
another's failure. The same trace records as the search, so the benchmark draws both curves
from the same files.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from lemmata.provers.base import Verifier
from lemmata.provers.portfolio import candidates as portfolio_candidates
from lemmata.provers.process import stage_of
from lemmata.provers.refine.backend import header_for, scope_of
from lemmata.provers.refine.goal import parse_goal
from lemmata.provers.refine.policy import action_set
from lemmata.provers.refine.search import SearchConfig, SearchResult
from lemmata.provers.refine.trace import TraceWriter, check_fields
from lemmata.provers.result import FailureKind, FailureMode, Status

__all__ = ["one_shot", "one_shot_candidates"]

# The order a careful user would try them in (the covering set measured on the test split
# leads: lra after splitting, then nra, nia, congruence, computation).
_COQ_FIRST = (
    "intros; repeat split; lra.",
    "intros; nra.",
    "intros; nia.",
    "intros; lia.",
    "intros; congruence.",
    "vm_compute; reflexivity.",
    "intros; field.",
    "intros; ring.",
    "intros; tauto.",
    "intros; firstorder.",
    "intros; auto.",
    "intros; easy.",
    "intros; subst; lra.",
    "intros; subst; lia.",
    "intros; subst; nra.",
    "intros; repeat split; lia.",
    "intros; repeat split; nra.",
)


def one_shot_candidates(
    backend: str, statement: str, header: str = "", automation: bool = True
) -> list[str]:
    """Whole proofs to try one by one: the fixed list above, then ``intros; <action>`` for
    each action the search could use on the statement's goal, then the runner's portfolio."""
    goal = parse_goal("⊢ " + statement.split(":", 1)[-1].rstrip(". "), scope_of(header))
    out: list[str] = list(_COQ_FIRST) if backend == "coq" else []
    for a in action_set(backend, goal, automation):
        if a.family in ("intro", "split"):
            continue
        if backend == "coq":
            out.append(f"intros; {a.tactic}.")
            out.append(f"intros; repeat split; {a.tactic}.")
        else:
            out.append(f"by\n  intros\n  {a.tactic}")
    out += portfolio_candidates(backend, statement)
    return list(dict.fromkeys(out))


def one_shot(
    verifier: Verifier,
    statement: str,
    header: str = "",
    *,
    id: str = "theorem",
    config: SearchConfig | None = None,
    trace: str | Path | TraceWriter | None = None,
) -> SearchResult:
    """Try :func:`one_shot_candidates` whole, one verifier call each, within the budget."""
    cfg = config or SearchConfig()
    started = time.monotonic()
    full, extra = header_for(verifier.backend, header, cfg.imports, cfg.automation)
    writer = trace if isinstance(trace, TraceWriter) else TraceWriter(trace)
    writer.write(
        {
            "type": "problem",
            "id": id,
            "backend": verifier.backend,
            "statement": statement,
            "header": header,
            "header_additions": extra,
            "policy": "one-shot",
            "scorer": None,
            "config": cfg.to_dict(),
        }
    )
    kinds: Counter[str] = Counter()
    calls = 0
    status, proof, failure = "failed", None, None
    for candidate in one_shot_candidates(verifier.backend, statement, header, cfg.automation):
        if calls >= cfg.budget_calls:
            break
        if time.monotonic() - started >= cfg.budget_seconds:
            status = "timeout"
            break
        calls += 1
        r = verifier.check(full, statement, candidate, cfg.tactic_timeout_s * 2)
        fm = r.failure_mode
        writer.write(
            {
                "type": "attempt",
                "problem": id,
                "node": 0,
                "child": None,
                "tactic": candidate,
                "family": "one-shot",
                **check_fields(r),
                "calls": calls,
                "t": round(time.monotonic() - started, 3),
            }
        )
        if r.ok:
            status, proof = "proved", candidate
            break
        if r.status is Status.UNAVAILABLE or stage_of(r) in ("header", "statement"):
            status, failure = "error", fm
            break
        if fm is not None:
            kinds[fm.kind.value] += 1
    if status != "proved" and failure is None and kinds:
        common = kinds.most_common(1)[0][0]
        failure = FailureMode(
            FailureKind(common),
            f"no proof among {calls} one-shot candidates; most common: {common}",
        )
    result = SearchResult(
        id=id,
        status=status,
        proof=proof,
        calls=calls,
        elapsed_s=time.monotonic() - started,
        backend=verifier.backend,
        failure=failure,
        header_additions=extra if proof else "",
        attempts=calls,
        failure_counts=dict(kinds),
    )
    writer.write({"type": "result", **result.to_dict(), "path": [calls - 1] if proof else []})
    if not isinstance(trace, TraceWriter):
        writer.close()
    return result
