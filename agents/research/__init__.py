"""lemmata.agents.research: deep data research, an agent that explores a database on its own
and reports verifiable insights.

>>> from lemmata.agents.research import research  # doctest: +SKIP
>>> report = research("shop.sqlite", "out/", entity="customer_id=42")  # doctest: +SKIP

The pieces: :mod:`~lemmata.agents.research.profile` (survey), :mod:`~.explore` (the statistical
explorer) and :mod:`~.checks` (its checks, one module per kind), :mod:`~.graph` (the LangGraph agent), :mod:`~.model` (the model's part),
:mod:`~.report` (report.json, report.md, figures), :mod:`~.synthetic` (generated databases with
planted insights), :mod:`~.score` (the checklist scorer and judge), :mod:`~.ddrbench`
(DDR-Bench checklists).
"""

from lemmata.agents.research.run import ResearchReport, research
from lemmata.agents.research.types import ChecklistItem, Hypothesis, Insight

__all__ = ["ChecklistItem", "Hypothesis", "Insight", "ResearchReport", "research"]
