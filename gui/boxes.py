"""Box geometry shared by the GUI modules: boxes are ``(x1, y1, x2, y2)`` in image pixels."""

from __future__ import annotations

__all__ = ["Box", "intersection", "iou", "overlap_of_smaller", "share_inside"]

Box = tuple[float, float, float, float]


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def intersection(a: Box, b: Box) -> float:
    """The area two boxes share.

    >>> intersection((0, 0, 10, 10), (5, 5, 20, 20))
    25.0
    """
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return float(ix * iy)


def iou(a: Box, b: Box) -> float:
    """Intersection over union (0 when both are empty)."""
    inter = intersection(a, b)
    union = _area(a) + _area(b) - inter
    return inter / union if union > 0 else 0.0


def overlap_of_smaller(a: Box, b: Box) -> float:
    """The share of the smaller box that the other covers."""
    small = min(_area(a), _area(b))
    return intersection(a, b) / small if small > 0 else 0.0


def share_inside(inner: Box, outer: Box) -> float:
    """The share of ``inner`` that lies inside ``outer``."""
    area = _area(inner)
    return intersection(inner, outer) / area if area > 0 else 0.0
