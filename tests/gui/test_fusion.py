"""Consensus-SinglePeak fusion: an anchor sure of nothing does not dilute a sure one."""

from __future__ import annotations

import torch


def _blob(shape: tuple[int, int], centre: tuple[int, int], height: float) -> torch.Tensor:
    """A 5 x 5 plateau of ``height`` at ``centre`` (a candidate's box drawn on the grid)."""
    out = torch.zeros(shape)
    r, c = centre
    out[r - 2 : r + 3, c - 2 : c + 3] = height
    return out


def test_a_sure_icon_drawn_twice_is_not_halved_by_a_weak_title_elsewhere() -> None:
    """One glyph drawn at two places (two reset arrows): no single peak, but sure (0.675); a
    text map woken only weakly (0.37) by a title elsewhere keeps the icon's height, not half
    of it, so the grounder does not abstain on it."""
    from lemmata.gui.fusion import consensus_single_peak

    shape = (40, 60)
    icons = _blob(shape, (10, 50), 0.675) + _blob(shape, (30, 50), 0.675)
    text = _blob(shape, (5, 10), 0.37)
    out = consensus_single_peak({"ocr": text, "icons": icons})
    assert out.single_peaks == []
    assert abs(out.score - 0.675) < 1e-6
    # where the weak map speaks alone it is still halved by the sure one's silence
    assert float(out.fused[5, 10]) < 0.2


def test_two_unsure_maps_still_dilute_each_other() -> None:
    """Neither sure of anything: the mean of both, as before (a negative stays refused)."""
    from lemmata.gui.fusion import consensus_single_peak

    shape = (40, 60)
    icons = _blob(shape, (10, 50), 0.5) + _blob(shape, (30, 50), 0.5)
    text = _blob(shape, (5, 10), 0.4)
    out = consensus_single_peak({"ocr": text, "icons": icons})
    assert abs(out.score - 0.25) < 1e-6
