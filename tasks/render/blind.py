"""The vision ablation's images (`ablations: [blind]`): every image an item shows replaced by a
black image of the same width, height, mode and file format, so a blind request is the released
one with the pixels taken away and nothing else changed.

A black image is content-addressed by what decides its bytes (format, mode, size), so it is made
once per distinct size however many originals share it, and kept in the media cache beside the
run's other renders: the processes that send requests read it by path, as they read those.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from PIL import Image

from roadeval.benchmarks.media_store import cached_render
from roadeval.benchmarks.messages import ImageRef

# The variant of rows about blind requests (`AboutItem.variant`); '' is the items as released.
BLIND = "blind"
# Every ablation a panel may ask for (`ablations:` in the panel file).
ABLATIONS = (BLIND,)
# Bumped when the way black images are made changes (their keys, so their requests, change).
BLIND_VERSION = "1"
_FOLDER = "blind"
_SUFFIXES = {"PNG": ".png", "JPEG": ".jpg", "WEBP": ".webp", "GIF": ".gif", "BMP": ".bmp"}
# Black in modes whose zero is not black (opaque alpha; CMYK's black is its K channel).
_BLACK: dict[str, Any] = {
    "RGBA": (0, 0, 0, 255),
    "LA": (0, 255),
    "PA": (0, 255),
    "La": (0, 255),
    "RGBa": (0, 0, 0, 255),
    "CMYK": (0, 0, 0, 255),
}

Renders = Mapping[str, tuple[ImageRef, ...]]


class BlindImageError(ValueError):
    """An image whose black twin cannot be made (unreadable, or a format that cannot be written);
    the message names the file."""


@dataclass(frozen=True)
class ImageShape:
    """What a black twin keeps of an image: its file format, mode and size."""

    format: str
    mode: str
    width: int
    height: int

    @property
    def key(self) -> str:
        text = f"blind|{BLIND_VERSION}|{self.format}|{self.mode}|{self.width}x{self.height}"
        return hashlib.sha256(text.encode()).hexdigest()


def image_shape(image: ImageRef) -> ImageShape:
    """The image's format, mode and size, from its header (no pixel is decoded)."""
    try:
        source = io.BytesIO(image.data) if image.data is not None else image.path
        with Image.open(source) as opened:
            # A camera's JPEG may open as MPO (JPEG frames in one file): its twin is a JPEG.
            fmt = "JPEG" if opened.format == "MPO" else opened.format or "PNG"
            return ImageShape(fmt, opened.mode, *opened.size)
    except (OSError, SyntaxError) as exc:
        message = f"image {image.path}: cannot read it to black it out ({exc})"
        raise BlindImageError(message) from None


def black_bytes(shape: ImageShape) -> bytes:
    """A black image of `shape`, encoded in its format (lossless where the format allows, so
    every pixel decodes to black)."""
    black = Image.new(shape.mode, (shape.width, shape.height), _BLACK.get(shape.mode, 0))
    if shape.mode in ("P", "PA"):
        black.putpalette([0, 0, 0])
    buffer = io.BytesIO()
    options: dict[str, Any] = {"quality": 100} if shape.format == "JPEG" else {}
    if shape.format == "WEBP":
        options = {"lossless": True}
    try:
        black.save(buffer, format=shape.format, **options)
    except (OSError, KeyError, ValueError) as exc:
        raise BlindImageError(
            f"cannot write a black {shape.format} image in mode {shape.mode} ({exc})"
        ) from exc
    return buffer.getvalue()


class BlindImages:
    """Black twins of a run's images: one per distinct original (by digest), each made once per
    distinct shape and shared by every original of that shape."""

    def __init__(self) -> None:
        self._twins: dict[str, ImageRef] = {}
        self._lock = threading.Lock()

    def twin(self, image: ImageRef) -> ImageRef:
        """The black twin of `image`, of its size, mode and format, sent under its MIME type."""
        with self._lock:
            found = self._twins.get(image.sha256)
        if found is not None:
            return found
        shape = image_shape(image)
        suffix = _SUFFIXES.get(shape.format, f".{shape.format.lower()}")
        try:
            made = cached_render(_FOLDER, shape.key, suffix, image.mime, lambda: black_bytes(shape))
        except BlindImageError as exc:
            raise BlindImageError(f"image {image.path}: {exc}") from None
        with self._lock:
            return self._twins.setdefault(image.sha256, made)

    def renders(self, renders: Renders) -> dict[str, tuple[ImageRef, ...]]:
        """The blind renders of the items that show at least one image (a text-only item has
        no blind twin: it would be the same request); images read in threads."""
        shown = {item_id: images for item_id, images in renders.items() if images}
        distinct = {image.sha256: image for images in shown.values() for image in images}
        with ThreadPoolExecutor(max_workers=8, thread_name_prefix="blind") as pool:
            list(pool.map(self.twin, distinct.values()))
        return {
            item_id: tuple(self.twin(image) for image in images)
            for item_id, images in shown.items()
        }


def blind_renders(renders: Renders) -> dict[str, tuple[ImageRef, ...]]:
    """`renders` (one suite's, per item id) with every image replaced by its black twin, for
    the items that show one."""
    return BlindImages().renders(renders)
