"""The synthetic scan generator, and the real KITTI sample from ../shared."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from roadeval.benchmarks.pointcloud import (
    bev_indices,
    front_indices,
    load_point_cloud,
    render_views,
    synthetic_scan,
)
from roadeval.benchmarks.pointcloud.synthetic import GROUND_Z

# KITTI's velodyne scan 000008 as shared/samples holds it (a crop: 17,238 points).
KITTI_POINTS = 17_238


def test_synthetic_scan_is_fixed_by_its_seed() -> None:
    first = synthetic_scan(5, points=10_000)
    assert first.shape == (10_000, 4) and first.dtype == np.float32
    assert np.isfinite(first).all()
    assert np.array_equal(synthetic_scan(5, points=10_000), first)
    assert not np.array_equal(synthetic_scan(6, points=10_000), first)


def test_synthetic_scan_has_road_kerbs_vehicles_and_poles() -> None:
    points = synthetic_scan(0)
    z = points[:, 2]
    on_road = np.abs(z - GROUND_Z) <= 0.021
    assert 0.4 < on_road.mean() < 0.7  # road and (slightly higher) pavements are most returns
    kerb_or_pavement = (z > GROUND_Z + 0.03) & (z <= GROUND_Z + 0.17)
    assert kerb_or_pavement.mean() > 0.1
    tall = z > GROUND_Z + 2.5  # only walls and poles reach this high
    assert tall.any() and (np.abs(points[tall, 1]) >= 6.8).all()
    # Vehicle boxes: returns between 0.25 m and 2 m above the road inside the road's width.
    body = (z > GROUND_Z + 0.3) & (z < GROUND_Z + 2.0) & (np.abs(points[:, 1]) < 5.0)
    assert body.sum() > 5_000
    with pytest.raises(ValueError, match="at least 100 points"):
        synthetic_scan(0, points=10)


def test_kitti_sample_loads_and_renders(kitti_scan: Path) -> None:
    points = load_point_cloud(kitti_scan)
    assert points.shape == (KITTI_POINTS, 4) and points.dtype == np.float32
    assert np.array_equal(points, np.fromfile(kitti_scan, dtype="<f4").reshape(-1, 4))
    bev, front = render_views(points)
    for data, size in ((bev, (800, 800)), (front, (800, 600))):
        with Image.open(io.BytesIO(data)) as image:
            assert image.size == size
    # Most of the scan is ahead and within the crops: thousands of lit pixels in each view
    # (6,270 BEV cells and 15,994 front pixels as rendered now).
    assert (bev_indices(points) != 0).sum() > 5_000
    assert (front_indices(points) != 255).sum() > 8_000
    assert render_views(points) == (bev, front)
    assert hashlib.sha256(bev).hexdigest() != hashlib.sha256(front).hexdigest()
