"""A row's frames as files: embedded Parquet bytes are materialized, JSONL paths are resolved.

Every frame is checked to be a readable image (header only) so a broken row fails at load,
naming its file, row and frame, rather than as an API error mid-run.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from roadeval.benchmarks.item import Media, MediaKind
from roadeval.benchmarks.media_store import materialize
from roadeval.benchmarks.tbbench.rows import Layout, Row, row_error

IMAGE_FIELD = "image"


def image_format(data: bytes) -> str | None:
    """PIL's format name (PNG, JPEG, ...) read from the header, or None if not an image."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.format
    except (UnidentifiedImageError, OSError):
        return None


def image_mime(data: bytes) -> str:
    """The MIME type for a data URL; the bytes were checked at load, PNG is only a fallback."""
    name = image_format(data)
    return Image.MIME.get(name, "image/png") if name else "image/png"


def row_frames(path: Path, line: int, row: Row, item_id: str, layout: Layout) -> tuple[Media, ...]:
    """The row's frames in order: one IMAGE, or FRAME media indexed 0..n-1 for a sequence."""
    entries = row.get(IMAGE_FIELD)
    if entries is None:
        raise row_error(path, line, IMAGE_FIELD, "missing", item_id)
    # A single-image column may hold one entry rather than a list of one.
    listed = entries if isinstance(entries, list) else [entries]
    if not listed:
        raise row_error(path, line, IMAGE_FIELD, "empty frame list", item_id)
    files = [
        _frame_file(path, line, entry, index, item_id, layout) for index, entry in enumerate(listed)
    ]
    kind = MediaKind.FRAME if len(files) > 1 else MediaKind.IMAGE
    return tuple(Media.from_file(kind, file, index=index) for index, file in enumerate(files))


def _frame_file(
    path: Path, line: int, entry: Any, index: int, item_id: str, layout: Layout
) -> Path:
    where = f"frame {index}"
    if layout is Layout.PARQUET and isinstance(entry, dict) and entry.get("bytes") is not None:
        data = entry["bytes"]
        name = image_format(data)
        if name is None:
            raise row_error(path, line, IMAGE_FIELD, f"{where}: bytes are not an image", item_id)
        suffix = ".jpg" if name == "JPEG" else f".{name.lower()}"
        return materialize(data, suffix)
    # A JSONL path, or a Parquet struct that names a file instead of embedding it.
    relative = entry.get("path") if isinstance(entry, dict) else entry
    if not isinstance(relative, str) or not relative:
        raise row_error(path, line, IMAGE_FIELD, f"{where}: neither bytes nor a path", item_id)
    file = path.parent / relative
    if not file.is_file():
        raise row_error(path, line, IMAGE_FIELD, f"{where}: file not found: {file}", item_id)
    if image_format(file.read_bytes()) is None:
        raise row_error(path, line, IMAGE_FIELD, f"{where}: not an image: {file}", item_id)
    return file
