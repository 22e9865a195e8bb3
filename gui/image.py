"""Screenshots in: decoding, validation and the pixel limit.

Every image that reaches an anchor comes through :func:`load_image`: a path, bytes, a PIL image
or an ``H x W x 3`` uint8 array become one RGB PIL image, or an :class:`~lemmata.errors.ImageError`
that names what is wrong (missing file, not an image, truncated, empty, over the pixel limit).
The limit bounds memory: a 4K screenshot (8.3 MP) is well inside it; a decompression bomb is not.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lemmata.errors import ImageError

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["MAX_PIXELS", "ImageInput", "image_key", "load_image"]

# 8K UHD (7680 x 4320 = 33 MP) and then some; beyond it an image is refused, not resampled.
MAX_PIXELS = 40_000_000

ImageInput = Any  # str | Path | bytes | PIL.Image.Image | numpy.ndarray


def load_image(source: ImageInput, *, max_pixels: int = MAX_PIXELS) -> PILImage.Image:
    """Decode ``source`` into an RGB image, checking it fully, or raise :class:`ImageError`."""
    from PIL import Image, UnidentifiedImageError

    name = "the image"
    if isinstance(source, str | Path):
        path = Path(source)
        name = str(path)
        if not path.exists():
            raise ImageError(f"{path} does not exist: give the path of a PNG or JPEG screenshot")
        if path.is_dir():
            raise ImageError(f"{path} is a folder, not an image")
        data = path.read_bytes()
    elif isinstance(source, bytes | bytearray):
        data = bytes(source)
    elif isinstance(source, Image.Image):
        return _checked(source, name, max_pixels).convert("RGB")
    elif hasattr(source, "shape") and hasattr(source, "dtype"):
        return _from_array(source, max_pixels)
    else:
        raise ImageError(
            f"cannot read an image from a {type(source).__name__}: "
            "give a path, bytes, a PIL image or an H x W x 3 uint8 array"
        )
    if not data:
        raise ImageError(f"{name} is empty (0 bytes)")
    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None  # our own limit below, with a clearer message
    try:
        image = Image.open(io.BytesIO(data))
        _checked(image, name, max_pixels)
        image.load()
    except UnidentifiedImageError:
        raise ImageError(f"{name} is not an image PIL can decode (PNG, JPEG, WebP, ...)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"{name} is corrupt or truncated: {exc}") from None
    finally:
        Image.MAX_IMAGE_PIXELS = previous
    return image.convert("RGB")


def _checked(image: PILImage.Image, name: str, max_pixels: int) -> PILImage.Image:
    w, h = image.size
    if w == 0 or h == 0:
        raise ImageError(f"{name} has no pixels ({w} x {h})")
    if w * h > max_pixels:
        raise ImageError(
            f"{name} is {w} x {h} = {w * h / 1e6:.1f} MP, over the limit of {max_pixels / 1e6:.0f} MP: "
            "downscale it, or raise max_pixels"
        )
    return image


def _from_array(array: Any, max_pixels: int) -> PILImage.Image:
    import numpy as np
    from PIL import Image

    arr = np.asarray(array)
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4) or arr.dtype != np.uint8:
        raise ImageError(
            f"an image array must be H x W x 3 (or 4) uint8; got shape {arr.shape} {arr.dtype}"
        )
    return _checked(Image.fromarray(arr[..., :3]), "the image array", max_pixels)


def image_key(image: PILImage.Image) -> str:
    """A content hash of the pixels: the key of per-image caches (OCR, element detection)."""
    digest = hashlib.blake2b(image.tobytes(), digest_size=16)
    digest.update(f"{image.size}".encode())
    return digest.hexdigest()
