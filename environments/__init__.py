"""lemmata.environments: the Environment protocol and the bundled environments.

This package is part of the design in ARCHITECTURE.md; its public names are added by the issue
that builds it, and listed in ``__all__``.
"""

__all__: list[str] = []
