"""A row's frames as files: embedded Parquet bytes are materialized, JSONL paths are resolved.

Every frame is checked to be a readable image (`image_check`) so a broken row fails at load,
naming its file, row and frame, rather than as an API error mid-run. Each frame's bytes are read
once, for the check and the hash together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roadeval.benchmarks.image_check import (
    NotAnImageError,
    check_image,
    image_media,
)
from roadeval.benchmarks.item import Media, MediaKind
from roadeval.benchmarks.media_store import materialize
from roadeval.benchmarks.tbbench.rows import Layout, Row, row_error

IMAGE_FIELD = "image"


def row_frames(path: Path, line: int, row: Row, item_id: str, layout: Layout) -> tuple[Media, ...]:
    """The row's frames in order: one IMAGE, or FRAME media indexed 0..n-1 for a sequence."""
    entries = row.get(IMAGE_FIELD)
    if entries is None:
        raise row_error(path, line, IMAGE_FIELD, "missing", item_id)
    # A single-image column may hold one entry rather than a list of one.
    listed = entries if isinstance(entries, list) else [entries]
    if not listed:
        raise row_error(path, line, IMAGE_FIELD, "empty frame list", item_id)
    kind = MediaKind.FRAME if len(listed) > 1 else MediaKind.IMAGE
    return tuple(
        _frame(path, line, entry, index, item_id, layout, kind)
        for index, entry in enumerate(listed)
    )


def _frame(
    path: Path, line: int, entry: Any, index: int, item_id: str, layout: Layout, kind: MediaKind
) -> Media:
    where = f"frame {index}"
    if layout is Layout.PARQUET and isinstance(entry, dict) and entry.get("bytes") is not None:
        data = entry["bytes"]
        try:
            info = check_image(data)
        except NotAnImageError as exc:
            raise row_error(
                path, line, IMAGE_FIELD, f"{where}: embedded bytes: {exc}", item_id
            ) from None
        file = materialize(data, info.suffix)
        return Media.from_bytes(kind, file, data, index=index, mime=info.mime)
    # A JSONL path, or a Parquet struct that names a file instead of embedding it.
    relative = entry.get("path") if isinstance(entry, dict) else entry
    if not isinstance(relative, str) or not relative:
        raise row_error(path, line, IMAGE_FIELD, f"{where}: neither bytes nor a path", item_id)
    try:
        media, _ = image_media(kind, path.parent / relative, index=index)
    except NotAnImageError as exc:
        raise row_error(path, line, IMAGE_FIELD, f"{where}: {exc}", item_id) from None
    return media
