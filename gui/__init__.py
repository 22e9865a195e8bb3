"""lemmata.gui: Trifuse GUI grounding (attention, OCR and icon anchors, Consensus-SinglePeak fusion).

This package is part of the design in ARCHITECTURE.md; its public names are added by the issue
that builds it, and listed in ``__all__``.
"""

__all__: list[str] = []
