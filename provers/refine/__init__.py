"""lemmata.provers.refine: learning-to-refine, a proof search that repairs locally from the
verifier's failure modes.

>>> from lemmata.provers import CoqTop                                    # doctest: +SKIP
>>> from lemmata.provers.refine import search
>>> with CoqTop() as coq:                                                 # doctest: +SKIP
...     r = search(coq, "Theorem t (x : R) (h : 0 < x) : x / x = 1.",
...                header="Require Import Reals. Open Scope R_scope.", trace="t.jsonl")
"""

from __future__ import annotations

from lemmata.provers.refine.backend import COQ_AUTOMATION, COQ_IMPORTS, proof_text
from lemmata.provers.refine.goal import Goal, parse_goal
from lemmata.provers.refine.policy import (
    ASK,
    Action,
    Asking,
    FixedOrderPolicy,
    NodeView,
    OfflinePolicy,
    Policy,
    action_set,
)
from lemmata.provers.refine.search import Scorer, SearchConfig, SearchResult, search
from lemmata.provers.refine.trace import ProblemTrace, TraceWriter, read_trace

__all__ = [
    "COQ_AUTOMATION",
    "COQ_IMPORTS",
    "ASK",
    "Action",
    "Asking",
    "FixedOrderPolicy",
    "Goal",
    "NodeView",
    "OfflinePolicy",
    "Policy",
    "ProblemTrace",
    "Scorer",
    "SearchConfig",
    "SearchResult",
    "TraceWriter",
    "action_set",
    "parse_goal",
    "proof_text",
    "read_trace",
    "search",
]
