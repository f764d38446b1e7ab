"""Builders for small TB-Bench sources in both released layouts (each test's private media cache
is ../conftest.py's)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

FRAME_STRUCT = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
HF_SCHEMA = pa.schema(
    [
        ("image", pa.list_(FRAME_STRUCT)),
        ("problem", pa.string()),
        ("task", pa.string()),
        ("choice", pa.list_(pa.string())),
        ("solution", pa.string()),
    ]
)


def make_png(shade: int) -> bytes:
    """A distinct 4x4 PNG per shade, so frame order can be checked by bytes."""
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (shade, 255 - shade, 7)).save(buffer, format="PNG")
    return buffer.getvalue()


def make_hf_row(task: str, solution: str | None, frames: int = 1, **extra: Any) -> dict[str, Any]:
    """A row as the Hugging Face release stores it, frames embedded as {bytes, path}."""
    return {
        "image": [{"bytes": make_png(10 * i + 1), "path": f"f{i}.png"} for i in range(frames)],
        "problem": f"Question about {task}?",
        "task": task,
        "choice": [],
        "solution": solution,
        **extra,
    }


@pytest.fixture
def png() -> Callable[[int], bytes]:
    return make_png


@pytest.fixture
def hf_row() -> Callable[..., dict[str, Any]]:
    return make_hf_row


@pytest.fixture
def write_parquet(tmp_path: Path) -> Callable[..., Path]:
    def write(rows: list[dict[str, Any]], name: str = "split.parquet") -> Path:
        path = tmp_path / "hf" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        schema = HF_SCHEMA
        if any("id" in row for row in rows):
            schema = schema.append(pa.field("id", pa.string()))
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        return path

    return write


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    def write(
        rows: list[dict[str, Any]], images: dict[str, bytes], name: str = "items.jsonl"
    ) -> Path:
        folder = tmp_path / "jsonl"
        for relative, data in images.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_bytes(data)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return path

    return write
