"""The explorer's checks, one module per kind of insight, in one registry.

=================  ========================================================================
module             kinds
=================  ========================================================================
``distribution``   distribution (skewness)
``share``          share (one level's share of the rows)
``group``          group_difference (one level's mean against the rest)
``correlation``    correlation (Pearson, not when both columns only follow time)
``temporal``       trend and change (period means over a date column)
``outlier``        outlier (extreme rows; outlying parents across a link)
``entity``         what one entity's rows say (its own row, outlier, trend, share)
``relationship``   relationship (a group difference across a link)
=================  ========================================================================

Each check is ``check(ctx, hypothesis) -> Outcome`` (:mod:`.base`); the statistics they share
live in :mod:`.stats`, and a confirmed finding becomes an insight in one place,
:meth:`.base.CheckContext.confirm`.
"""

from __future__ import annotations

from collections.abc import Callable

from lemmata.agents.research.checks import (
    correlation,
    distribution,
    entity,
    group,
    outlier,
    relationship,
    share,
    temporal,
)
from lemmata.agents.research.checks.base import (
    CheckContext,
    DataProblem,
    Finding,
    Outcome,
    TableData,
)
from lemmata.agents.research.types import Hypothesis

__all__ = [
    "CHECKS",
    "ENTITY_CHECK",
    "Check",
    "CheckContext",
    "DataProblem",
    "Finding",
    "Outcome",
    "TableData",
]

#: A check: tests one hypothesis over a database's data.
Check = Callable[[CheckContext, Hypothesis], Outcome]

#: The check of each kind of hypothesis about the whole database.
CHECKS: dict[str, Check] = {
    "distribution": distribution.check,
    "share": share.check,
    "group_difference": group.check,
    "correlation": correlation.check,
    "trend": temporal.check_trend,
    "change": temporal.check_change,
    "outlier": outlier.check,
    "relationship": relationship.check,
}

#: The check of hypotheses about the entity a run focuses on (kinds in ``entity.KINDS``).
ENTITY_CHECK: Check = entity.check
