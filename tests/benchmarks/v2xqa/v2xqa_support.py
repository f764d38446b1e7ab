"""Builders shared by the V2X-QA tests: release-shaped rows and tiny images."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from PIL import Image

RowFactory = Callable[..., dict[str, Any]]
WriteSource = Callable[..., Path]


def image_bytes(shade: int, format: str = "PNG") -> bytes:
    """A distinct tiny image per shade, so order can be checked by bytes."""
    buffer = io.BytesIO()
    Image.new("RGB", (6, 4), (shade, 255 - shade, 40)).save(buffer, format=format)
    return buffer.getvalue()


def make_row(task_id: str = "VS1", sample_id: str = "000001", /, **changes: Any) -> dict[str, Any]:
    """A valid row of the release's shape; `changes` override fields (the value `...` removes
    one). Image ids follow the view: VS a vehicle id, IS an infrastructure id, CO both."""
    view = task_id[:2]
    row: dict[str, Any] = {
        "sample_id": sample_id,
        "task_id": task_id,
        "question_id": f"{task_id}_Q1",
        "question": "Which lane is free?",
        "options": {"A": "The left lane.", "B": "The right lane.", "C": "Both.", "D": "Neither."},
        "selected_option_id": "B",
        "canonical_answer": "The right lane is free.",
        "image_id_vs": f"v{sample_id}" if view in ("VS", "CO") else None,
        "image_id_is": f"i{sample_id}" if view in ("IS", "CO") else None,
    }
    for key, value in changes.items():
        if value is ...:
            row.pop(key, None)
        else:
            row[key] = value
    return row


def write_images(folder: Path, names: Iterable[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for shade, name in enumerate(sorted(names)):
        fmt = "JPEG" if name.endswith((".jpg", ".jpeg")) else "PNG"
        (folder / name).write_bytes(image_bytes(shade * 7 % 256, fmt))
