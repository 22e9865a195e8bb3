"""lemmata.provers.refine: learning-to-refine, a proof search that repairs locally from the
verifier's failure modes.

A node is a point in a proof (its goals, the failure there); its children are local edits at
that point, chosen by the failure class (:mod:`.policy`), run from the verifier's saved state
(:mod:`.search`), ordered by a learned value model (:mod:`.value`), recorded in a JSONL trace
(:mod:`.trace`) that can be replayed (:mod:`.replay`) and drawn (:mod:`.draw`). With a model,
it drafts proofs and proposes repairs from the failing sentence alone (:mod:`.model_policy`).

>>> from lemmata.provers import CoqTop                                    # doctest: +SKIP
>>> from lemmata.provers.refine import search
>>> with CoqTop() as coq:                                                 # doctest: +SKIP
...     r = search(coq, "Theorem t (x : R) (h : 0 < x) : x * x > 0.",
...                header="Require Import Reals. Open Scope R_scope.", trace="t.jsonl")
>>> r.status, r.proof, r.calls                                            # doctest: +SKIP
('proved', 'nra.', 4)
"""

from __future__ import annotations

from lemmata.provers.refine.backend import COQ_AUTOMATION, COQ_IMPORTS, proof_text
from lemmata.provers.refine.baselines import one_shot
from lemmata.provers.refine.draw import draw_tree, draw_trees
from lemmata.provers.refine.goal import Goal, parse_goal
from lemmata.provers.refine.model_policy import ModelPolicy, best_of_n
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
from lemmata.provers.refine.replay import replay, replay_path
from lemmata.provers.refine.search import Scorer, SearchConfig, SearchResult, search
from lemmata.provers.refine.trace import ProblemTrace, TraceWriter, read_trace
from lemmata.provers.refine.value import ValueScorer, default_scorer, load_scorer, train

__all__ = [
    "ASK",
    "COQ_AUTOMATION",
    "COQ_IMPORTS",
    "Action",
    "Asking",
    "FixedOrderPolicy",
    "Goal",
    "ModelPolicy",
    "NodeView",
    "OfflinePolicy",
    "Policy",
    "ProblemTrace",
    "Scorer",
    "SearchConfig",
    "SearchResult",
    "TraceWriter",
    "ValueScorer",
    "action_set",
    "best_of_n",
    "default_scorer",
    "draw_tree",
    "draw_trees",
    "load_scorer",
    "one_shot",
    "parse_goal",
    "proof_text",
    "read_trace",
    "replay",
    "replay_path",
    "search",
    "train",
]
