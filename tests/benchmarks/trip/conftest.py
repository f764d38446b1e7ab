"""Fixtures for the TRIP tests: row factories and a writer for small item files with an image."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

RowFactory = Callable[..., dict[str, Any]]
WriteSource = Callable[[Iterable[dict[str, Any] | str]], Path]


def _text_row(item_id: str = "M_b_1", **changes: Any) -> dict[str, Any]:
    """A valid text row; `changes` override fields, and a value of None removes the field."""
    row: dict[str, Any] = {
        "id": item_id,
        "role_tag": "traffic management",
        "subject_tag": "signal control",
        "knowledge_point": "Webster optimal cycle",
        "question": "L = 12 s and Y = 0.6. What is Webster's optimal cycle?",
        "A": "57.5 s",
        "B": "45.0 s",
        "C": "42.5 s",
        "D": "38.3 s",
        "answer": "A",
        "explanation": "(1.5 x 12 + 5) / 0.4 = 57.5 s",
        "difficulty": "medium",
        "modality": "text",
        "capability_tag": "numerical calculation",
    }
    for key, value in changes.items():
        if value is None:
            row.pop(key, None)
        else:
            row[key] = value
    return row


@pytest.fixture
def text_row() -> RowFactory:
    return _text_row


@pytest.fixture
def image_row() -> RowFactory:
    def build(item_id: str = "M_i_1", **changes: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {"modality": "image", "image": "images/sign.png"}
        fields.update(changes)
        return _text_row(item_id, **fields)

    return build


@pytest.fixture
def sign_png() -> bytes:
    """The bytes of the one image `write_source` puts at images/sign.png."""
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def write_source(tmp_path: Path, sign_png: bytes) -> WriteSource:
    """Write rows (dicts, or raw lines) to items.jsonl with one PNG at images/sign.png."""

    def write(rows: Iterable[dict[str, Any] | str]) -> Path:
        (tmp_path / "images").mkdir(exist_ok=True)
        (tmp_path / "images" / "sign.png").write_bytes(sign_png)
        lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
        (tmp_path / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return tmp_path

    return write
