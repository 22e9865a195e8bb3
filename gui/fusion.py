"""Consensus-SinglePeak fusion of anchor heatmaps, in torch.

Given maps ``H_a`` in [0, 1] on one grid and weights ``w_a``:

- **consensus**: the weighted mean of the *active* anchors (those whose map rises above
  ``active``), times ``1 + agreement * (k - 1)`` where ``k`` is the number of anchors above
  ``agree`` at that cell: where anchors agree the evidence adds up, and an anchor that sees
  nothing on this screen (no text, no icon) neither dilutes nor vetoes the others; nor does
  an anchor sure of nothing (its maximum below ``peak``) where it is silent, once another is
  sure of something (a glyph drawn twice, no single peak, keeps its height beside a text map
  woken only weakly by a title elsewhere);
- **single peak**: an anchor whose map has one sharp peak (its maximum at least ``peak`` and
  every other peak, outside the maximum's own blob, below ``ratio`` times the maximum) keeps
  that peak at full height even where the others disagree;
- the fused map is the cell-wise maximum of the two, clipped to [0, 1]. Its maximum is the
  grounding's score; below the calibrated threshold the grounder abstains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

__all__ = ["FusionConfig", "FusionResult", "consensus_single_peak", "peak_sharpness"]


@dataclass(frozen=True)
class FusionConfig:
    active: float = 0.3
    agree: float = 0.3
    agreement: float = 0.5
    peak: float = 0.55
    ratio: float = 0.8


@dataclass
class FusionResult:
    fused: torch.Tensor
    consensus: torch.Tensor
    single_peaks: list[str]  # anchors whose single peak was kept
    active: list[str]

    @property
    def score(self) -> float:
        return float(self.fused.max()) if self.fused.numel() else 0.0

    def argmax(self) -> tuple[int, int]:
        """(row, column) of the fused maximum."""
        idx = int(self.fused.argmax())
        return divmod(idx, self.fused.shape[1])


def peak_sharpness(heat: torch.Tensor, floor: float = 0.5) -> tuple[float, float]:
    """(maximum, highest value outside the maximum's own blob) of a map; the blob is the
    connected region around the maximum where the map stays above ``floor`` times it."""
    import cv2
    import numpy as np
    import torch

    if heat.numel() == 0:
        return 0.0, 0.0
    top = float(heat.max())
    if top <= 0:
        return 0.0, 0.0
    r, c = divmod(int(heat.argmax()), heat.shape[1])
    mask = (heat >= floor * top).numpy().astype(np.uint8)
    _, labels = cv2.connectedComponents(mask, connectivity=8)
    blob = torch.from_numpy(labels == labels[r, c])
    blob = torch.nn.functional.max_pool2d(blob[None, None].float(), 3, 1, 1)[0, 0] > 0
    rest = heat.masked_fill(blob, 0.0)
    return top, float(rest.max())


def consensus_single_peak(
    maps: dict[str, torch.Tensor],
    weights: dict[str, float] | None = None,
    config: FusionConfig | None = None,
) -> FusionResult:
    """Fuse ``maps`` (same shape) as the module docstring says."""
    import torch

    cfg = config or FusionConfig()
    if not maps:
        raise ValueError("no anchor maps to fuse")
    names = list(maps)
    shape = maps[names[0]].shape
    if any(m.shape != shape for m in maps.values()):
        raise ValueError(
            f"anchor maps differ in shape: { {n: tuple(m.shape) for n, m in maps.items()} }"
        )
    w = {n: (weights or {}).get(n, 1.0) for n in names}
    active = [n for n in names if float(maps[n].max()) >= cfg.active and w[n] > 0]
    if not active:
        zero = torch.zeros(shape)
        return FusionResult(zero, zero, [], [])
    stack = torch.stack([maps[n] for n in active])
    wt = torch.tensor([w[n] for n in active], dtype=stack.dtype)[:, None, None]
    sure = torch.tensor([float(maps[n].max()) >= cfg.peak for n in active])
    if bool(sure.any()) and not bool(sure.all()):
        # an anchor sure of nothing (its maximum below the peak) does not dilute a sure one
        # where it is silent: a weak text map woken by a title elsewhere leaves a sure icon
        # as it is, and still adds where it agrees
        speaks = sure[:, None, None] | (stack >= cfg.agree)
        cell = wt * speaks.to(stack.dtype)
        mean = (stack * cell).sum(0) / cell.sum(0).clamp(min=1e-6)
    else:
        mean = (stack * wt).sum(0) / wt.sum()
    agreeing = (stack >= cfg.agree).sum(0).clamp(min=1).to(stack.dtype)
    consensus = (mean * (1 + cfg.agreement * (agreeing - 1))).clamp(0, 1)
    fused = consensus.clone()
    peaks = []
    for n in active:
        top, second = peak_sharpness(maps[n])
        if top >= cfg.peak and second < cfg.ratio * top:
            peaks.append(n)
            fused = torch.maximum(fused, maps[n])
    return FusionResult(fused.clamp(0, 1), consensus, peaks, active)
