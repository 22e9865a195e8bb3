"""Heatmaps drawn over screenshots (PIL only): the fused map, or each anchor's, with the point,
the box and the score.

>>> from lemmata.gui.draw import draw_grounding  # doctest: +SKIP
>>> draw_grounding("shot.png", grounding).save("heat.png")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lemmata.gui.image import ImageInput, load_image

if TYPE_CHECKING:
    import torch
    from PIL import Image as PILImage

    from lemmata.gui.ground import Grounding

__all__ = ["colourise", "draw_grounding", "draw_heat"]

# A perceptually ordered ramp (dark blue -> teal -> yellow), sampled at 5 stops.
_STOPS = np.array(
    [[48, 18, 59], [50, 101, 222], [26, 189, 178], [164, 227, 54], [250, 230, 33]], np.float32
)


def colourise(heat: np.ndarray) -> np.ndarray:
    """H x W values in [0, 1] to H x W x 3 uint8 colours."""
    x = np.clip(heat, 0, 1) * (len(_STOPS) - 1)
    lo = np.floor(x).astype(int).clip(0, len(_STOPS) - 2)
    t = (x - lo)[..., None]
    out: np.ndarray = (_STOPS[lo] * (1 - t) + _STOPS[lo + 1] * t).astype(np.uint8)
    return out


def draw_heat(
    image: PILImage.Image, heat: torch.Tensor | np.ndarray, *, alpha: float = 0.55
) -> PILImage.Image:
    """``heat`` (any grid) stretched over ``image`` and blended where it is warm."""
    from PIL import Image

    h = heat.detach().cpu().numpy() if hasattr(heat, "detach") else np.asarray(heat)
    h = np.asarray(h, dtype=np.float32)
    colour = Image.fromarray(colourise(h)).resize(image.size, Image.Resampling.BILINEAR)
    weight = Image.fromarray((np.clip(h, 0, 1) * 255 * alpha).astype(np.uint8)).resize(
        image.size, Image.Resampling.BILINEAR
    )
    return Image.composite(colour, image.convert("RGB"), weight)


def draw_grounding(
    image: ImageInput, grounding: Grounding, *, anchor: str | None = None
) -> PILImage.Image:
    """The fused map (or ``anchor``'s) over the screenshot, with the box, the point and the
    score; an abstention is written across the top."""
    from PIL import ImageDraw

    img = load_image(image)
    heat: Any = grounding.maps.get(anchor) if anchor else grounding.heatmap
    out = draw_heat(img, heat) if heat is not None else img.copy()
    d = ImageDraw.Draw(out)
    width = max(2, img.width // 600)
    if grounding.bbox:
        d.rectangle(grounding.bbox, outline=(255, 64, 64), width=width)
    if grounding.point:
        x, y = grounding.point
        r = max(6, img.width // 200)
        d.ellipse((x - r, y - r, x + r, y + r), outline=(255, 255, 255), width=width)
        d.line((x - 2 * r, y, x + 2 * r, y), fill=(255, 64, 64), width=width)
        d.line((x, y - 2 * r, x, y + 2 * r), fill=(255, 64, 64), width=width)
    label = f"{anchor or 'fused'}: {grounding.score:.2f}" + (
        "  ABSTAINED" if grounding.abstained else ""
    )
    d.rectangle((0, 0, 12 + 7 * len(label), 22), fill=(0, 0, 0))
    d.text((6, 5), label, fill=(255, 255, 255))
    return out
