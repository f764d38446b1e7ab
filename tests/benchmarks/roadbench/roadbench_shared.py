"""The release extracts beside the checkout (../shared/samples/roadbench), or under
ROADEVAL_SHARED; tests that need them skip when they are absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def samples_dir() -> Path | None:
    configured = os.environ.get("ROADEVAL_SHARED")
    shared = (
        Path(configured) if configured else Path(__file__).resolve().parents[3] / ".." / "shared"
    )
    folder = shared / "samples" / "roadbench"
    return folder if folder.is_dir() else None


def require_samples() -> Path:
    folder = samples_dir()
    if folder is None:
        pytest.skip("RoadBench release extracts (shared/samples/roadbench) are not available")
    return folder
