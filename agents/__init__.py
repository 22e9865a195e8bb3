"""lemmata.agents: LangGraph graphs (tool-use, prover, GUI and research agents), their tools, and the early-experience loop.

This package is part of the design in ARCHITECTURE.md; its public names are added by the issue
that builds it, and listed in ``__all__``.
"""

__all__: list[str] = []
