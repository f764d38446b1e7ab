"""Fixtures for the point-cloud tests: writers for each file format (pointcloud_support), a small
synthetic scan, and the KITTI sample in ../shared when it is there. Puts this folder on sys.path
for `pointcloud_support` (the spawn test's child imports it too)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from roadeval.benchmarks.pointcloud import synthetic_scan  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def small_scan() -> np.ndarray:
    """500 synthetic points: enough for every format, small enough for ASCII PCD."""
    return synthetic_scan(1, points=500)


@pytest.fixture(scope="session")
def kitti_scan() -> Path:
    """shared/samples/pointclouds/kitti_000008.bin, found as tests/conftest.py's shared_dir()
    finds ../shared (or ROADEVAL_SHARED); skips when absent."""
    configured = os.environ.get("ROADEVAL_SHARED")
    shared = Path(configured) if configured else REPO.parent / "shared"
    path = shared / "samples" / "pointclouds" / "kitti_000008.bin"
    if not path.is_file():
        pytest.skip("the KITTI sample scan (shared/samples/pointclouds) is not available")
    return path
