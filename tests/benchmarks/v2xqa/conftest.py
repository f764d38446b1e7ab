"""Fixtures for the V2X-QA tests: release-shaped rows, a writer for small sources with images
under the two default roots, and the release extracts in ../shared when they are there (each
test's private media cache is ../conftest.py's). Puts this folder on sys.path for
`v2xqa_support`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from v2xqa_support import RowFactory, WriteSource, make_row, write_images  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def row() -> RowFactory:
    return make_row


@pytest.fixture
def write_source(tmp_path: Path) -> WriteSource:
    """Write {task_id: [row or raw line]} as the release's files under tmp/src, with a PNG for
    every image id the rows name under images/vehicle and images/infrastructure (ids listed in
    `skip_images` get none)."""

    def write(
        files: dict[str, list[dict[str, Any] | str]], skip_images: Iterable[str] = ()
    ) -> Path:
        source = tmp_path / "src"
        source.mkdir(exist_ok=True)
        skipped = set(skip_images)
        vehicle: set[str] = set()
        infrastructure: set[str] = set()
        for task_id, rows in files.items():
            lines = []
            for entry in rows:
                lines.append(entry if isinstance(entry, str) else json.dumps(entry))
                if isinstance(entry, dict):
                    for key, bucket in (("image_id_vs", vehicle), ("image_id_is", infrastructure)):
                        image_id = entry.get(key)
                        if isinstance(image_id, str) and image_id not in skipped:
                            bucket.add(f"{image_id}.png")
            path = source / f"{task_id}_annotations.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        write_images(source / "images" / "vehicle", vehicle)
        write_images(source / "images" / "infrastructure", infrastructure)
        return source

    return write


@pytest.fixture(scope="session")
def samples() -> Path:
    """The release extracts (shared/samples/v2x-qa/test), as tests/conftest.py's shared_dir()
    finds ../shared (or ROADEVAL_SHARED); skips when absent."""
    configured = os.environ.get("ROADEVAL_SHARED")
    shared = Path(configured) if configured else REPO.parent / "shared"
    folder = shared / "samples" / "v2x-qa" / "test"
    if not folder.is_dir():
        pytest.skip("V2X-QA release extracts (shared/samples/v2x-qa) are not available")
    return folder
