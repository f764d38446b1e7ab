"""The images a request carries: the released files as they are, or (option `image_max_side`)
the release eval script's thumbnail, RGB and shrunk with LANCZOS to fit the square, as PNG,
cached on disk by content so that each is made once."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from PIL import Image

from roadeval.benchmarks.item import Item, Media, MediaKind
from roadeval.benchmarks.media_store import media_cache_root
from roadeval.benchmarks.messages import ImageRef
from roadeval.storage.store import write_atomic

# Bump when the thumbnail or its encoding changes, so that old renders are not reused.
RENDER_VERSION = "v2xqa-thumbnail-1"


def item_images(item: Item, max_side: int | None) -> tuple[ImageRef, ...]:
    """The item's images in media order (CO: vehicle, then infrastructure)."""
    media = sorted(
        (m for m in item.media if m.kind is MediaKind.IMAGE),
        key=lambda m: m.index if m.index is not None else 0,
    )
    if max_side is None:
        return tuple(ImageRef(m.path, m.sha256, m.mime or "image/png") for m in media)
    return tuple(thumbnail(m, max_side) for m in media)


def thumbnail_bytes(path: Path, max_side: int) -> bytes:
    """The release's load_image_cached: convert("RGB"), thumbnail((s, s), LANCZOS); as PNG."""
    with Image.open(path) as opened:
        image = opened.convert("RGB")
    image.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def thumbnail(media: Media, max_side: int) -> ImageRef:
    key = hashlib.sha256(f"{RENDER_VERSION}|{media.sha256}|{max_side}".encode()).hexdigest()
    target = media_cache_root() / "v2xqa-renders" / key[:2] / f"{key}.png"
    if target.is_file():
        data = target.read_bytes()
    else:
        data = thumbnail_bytes(Path(media.path), max_side)
        write_atomic(target, data)
    return ImageRef(str(target), hashlib.sha256(data).hexdigest(), "image/png")
