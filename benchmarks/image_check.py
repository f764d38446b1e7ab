"""Checking that bytes meant as an image are one, at load rather than as an API error mid-run.

The header must name a format PIL reads and `verify()` must pass. For PNG, verify() walks every
chunk and its CRC up to IEND, so a truncated or damaged PNG fails; for JPEG it reads the header
only, so a JPEG cut short after its header passes (decoding it all would cost a full decode per
image at load).
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from roadeval.benchmarks.item import Media, MediaKind

# What PIL raises on bad bytes besides UnidentifiedImageError: its plugins use all of these.
_DECODE_ERRORS = (OSError, SyntaxError, ValueError, EOFError, struct.error, IndexError)


@dataclass(frozen=True)
class ImageInfo:
    """What the header says: PIL's format name (PNG, JPEG, WEBP, ...) and (width, height)."""

    format: str
    size: tuple[int, int]

    @property
    def mime(self) -> str | None:
        """The MIME type a data URL of these bytes carries."""
        return Image.MIME.get(self.format)

    @property
    def suffix(self) -> str:
        """The usual file suffix for the format, e.g. for a materialized Parquet frame."""
        return ".jpg" if self.format == "JPEG" else f".{self.format.lower()}"


class NotAnImageError(ValueError):
    """Bytes or a file that should hold an image and do not; the message says why."""


def image_format(data: bytes) -> str | None:
    """PIL's format name read from the header alone, or None if the header is not an image's."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.format
    except (UnidentifiedImageError, *_DECODE_ERRORS, Image.DecompressionBombError):
        return None


def check_image(data: bytes) -> ImageInfo:
    """The image's format and size, or NotAnImageError with PIL's reason."""
    try:
        image = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        # PIL's own message names a BytesIO object, which helps no one.
        raise NotAnImageError(f"not an image (content starts {data[:8]!r})") from None
    except Image.DecompressionBombError as exc:
        raise NotAnImageError(f"image too large to open safely: {exc}") from None
    except _DECODE_ERRORS as exc:
        raise NotAnImageError(f"not a readable image: {exc}") from None
    with image:
        info = ImageInfo(image.format or "unknown", image.size)
        try:
            image.verify()
        except _DECODE_ERRORS as exc:
            raise NotAnImageError(f"not a readable {info.format} image: {exc}") from None
    return info


def image_media(
    kind: MediaKind, path: Path, *, role: str | None = None, index: int | None = None
) -> tuple[Media, ImageInfo]:
    """Media for an image file, checked and hashed from one read of its bytes."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NotAnImageError(f"image file {path} does not exist") from None
    except OSError as exc:
        raise NotAnImageError(f"image file {path} cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:  # a path no system call takes (a NUL byte)
        raise NotAnImageError(f"image file {path!r} cannot be read: {exc}") from None
    try:
        info = check_image(data)
    except NotAnImageError as exc:
        raise NotAnImageError(f"image file {path}: {exc}") from None
    return Media.from_bytes(kind, path, data, role=role, index=index, mime=info.mime), info
