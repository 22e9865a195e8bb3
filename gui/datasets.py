"""ScreenSpot, ScreenSpot-v2 and ScreenSpot-Pro: loading, and accuracy of a grounder on them.

A data folder holds ``annotations.json`` (a list of items) and ``images/``. The two formats
differ in the box, and the loader never guesses:

- ``screenspot`` (ScreenSpot and ScreenSpot-v2): ``bbox`` is ``[x, y, w, h]``; the type is
  ``data_type`` (or ``ui_type``): ``text`` or ``icon``.
- ``screenspot-pro``: ``bbox`` is ``[x1, y1, x2, y2]``; ``ui_type``; ``gt_type`` is
  ``positive`` or ``negative``, and a negative item has ``bbox: null`` (the instruction names
  something the screen does not have: the right answer is to abstain).

Every item is checked (image present, instruction non-empty, box inside the image with a
positive area); a bad one is reported with its index and what to fix. A point counts when it
lies inside the box (edges included); a negative counts when the grounder abstained. Sizes are
the target's share of the screen: ``tiny`` < 0.02 %, ``small`` < 0.1 %, ``medium`` < 0.5 %,
``large`` above.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lemmata.errors import UsageError
from lemmata.gui.boxes import Box

__all__ = ["FORMATS", "EvalResult", "GroundingItem", "evaluate", "load_annotations", "size_bucket"]

FORMATS = ("screenspot", "screenspot-pro")
SIZES = (("tiny", 0.0002), ("small", 0.001), ("medium", 0.005), ("large", float("inf")))


@dataclass(frozen=True)
class GroundingItem:
    id: str
    image: Path
    instruction: str
    bbox: Box | None  # x1, y1, x2, y2 in image pixels; None for a negative item
    ui_type: str  # text | icon
    negative: bool = False
    img_size: tuple[int, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def size_bucket(bbox: Box, img_size: tuple[int, int]) -> str:
    share = (bbox[2] - bbox[0]) * (bbox[3] - bbox[1]) / max(1, img_size[0] * img_size[1])
    return next(name for name, limit in SIZES if share < limit)


def _bad(i: int, what: str) -> UsageError:
    return UsageError(f"annotations.json item {i}: {what}")


def load_annotations(folder: str | Path, fmt: str) -> list[GroundingItem]:
    """The items of ``folder/annotations.json`` in format ``fmt`` (see the module docstring)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    root = Path(folder)
    path = root / "annotations.json"
    if not path.is_file():
        raise UsageError(f"{path} not found: DIR must hold annotations.json and images/")
    try:
        rows = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(rows, list):
        raise UsageError(f"{path} must hold a JSON list of items, not a {type(rows).__name__}")
    items = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise _bad(i, f"is a {type(row).__name__}, not an object")
        name = row.get("img_filename")
        if not isinstance(name, str) or not name:
            raise _bad(i, "needs img_filename (the image's name under images/)")
        image = root / "images" / name
        if not image.is_file():
            raise _bad(i, f"its image {image} does not exist")
        instruction = row.get("instruction")
        if not isinstance(instruction, str) or not instruction.strip():
            raise _bad(i, "needs a non-empty instruction")
        ui_type = row.get("ui_type", row.get("data_type"))
        if ui_type not in ("text", "icon"):
            raise _bad(i, f"ui_type (or data_type) must be 'text' or 'icon', not {ui_type!r}")
        gt_type = row.get("gt_type", "positive")
        if gt_type not in ("positive", "negative"):
            raise _bad(i, f"gt_type must be 'positive' or 'negative', not {gt_type!r}")
        negative = gt_type == "negative"
        if negative and fmt == "screenspot":
            raise _bad(
                i, "negative items are a ScreenSpot-Pro feature: use --format screenspot-pro"
            )
        size = row.get("img_size")
        img_size = (
            (int(size[0]), int(size[1])) if isinstance(size, list) and len(size) == 2 else None
        )
        raw = row.get("bbox")
        bbox: Box | None = None
        if negative:
            if raw is not None:
                raise _bad(i, "a negative item has bbox null")
        else:
            if (
                not isinstance(raw, list)
                or len(raw) != 4
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in raw)
            ):
                raise _bad(i, "bbox must be a list of four numbers")
            if fmt == "screenspot":
                x, y, w, h = (float(v) for v in raw)
                if w <= 0 or h <= 0:
                    raise _bad(i, f"bbox {raw} has no area as x, y, w, h")
                bbox = (x, y, x + w, y + h)
            else:
                x1, y1, x2, y2 = (float(v) for v in raw)
                if x2 <= x1 or y2 <= y1:
                    raise _bad(
                        i,
                        f"bbox {raw} is not x1, y1, x2, y2 (x2 <= x1 or y2 <= y1); "
                        "if it is x, y, w, h use --format screenspot",
                    )
                bbox = (x1, y1, x2, y2)
            if img_size and (bbox[2] > img_size[0] + 1 or bbox[3] > img_size[1] + 1):
                raise _bad(
                    i, f"bbox {raw} reaches outside the image ({img_size[0]} x {img_size[1]})"
                )
        extra = {
            k: v
            for k, v in row.items()
            if k not in {"img_filename", "instruction", "bbox", "ui_type", "data_type", "gt_type"}
        }
        items.append(
            GroundingItem(
                str(row.get("id", i)), image, instruction, bbox, ui_type, negative, img_size, extra
            )
        )
    return items


@dataclass
class EvalResult:
    n: int
    overall: float
    text: float | None
    icon: float | None
    negative: float | None
    by_size: dict[str, float]
    counts: dict[str, int]
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)
    seconds_per_query: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "overall": self.overall,
            "text": self.text,
            "icon": self.icon,
            "negative": self.negative,
            "by_size": self.by_size,
        }


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def evaluate(
    items: Iterable[GroundingItem],
    predict: Callable[[GroundingItem], Any],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Accuracy of ``predict(item) -> Grounding`` over ``items``."""
    import time

    items = list(items)
    rows = []
    elapsed = 0.0
    for k, item in enumerate(items):
        started = time.perf_counter()
        g = predict(item)
        elapsed += time.perf_counter() - started
        if item.negative:
            ok = bool(g.abstained)
            size = None
        else:
            assert item.bbox is not None
            ok = (
                not g.abstained
                and g.point is not None
                and item.bbox[0] <= g.point[0] <= item.bbox[2]
                and item.bbox[1] <= g.point[1] <= item.bbox[3]
            )
            size = size_bucket(item.bbox, item.img_size or g.size)
        rows.append(
            {
                "id": item.id,
                "instruction": item.instruction,
                "ui_type": item.ui_type,
                "negative": item.negative,
                "size": size,
                "correct": ok,
                "point": list(g.point) if g.point else None,
                "score": g.score,
                "abstained": g.abstained,
            }
        )
        if progress is not None:
            progress(k + 1, len(items))
    pos = [r for r in rows if not r["negative"]]
    by_size = {}
    counts = {"text": 0, "icon": 0, "negative": 0}
    for name, _ in SIZES:
        flags = [r["correct"] for r in pos if r["size"] == name]
        if flags:
            by_size[name] = sum(flags) / len(flags)
            counts[name] = len(flags)
    for r in rows:
        counts["negative" if r["negative"] else r["ui_type"]] += 1
    return EvalResult(
        n=len(rows),
        overall=_share([r["correct"] for r in rows]) or 0.0,
        text=_share([r["correct"] for r in pos if r["ui_type"] == "text"]),
        icon=_share([r["correct"] for r in pos if r["ui_type"] == "icon"]),
        negative=_share([r["correct"] for r in rows if r["negative"]]),
        by_size=by_size,
        counts=counts,
        rows=rows,
        seconds_per_query=elapsed / len(rows) if rows else 0.0,
    )
