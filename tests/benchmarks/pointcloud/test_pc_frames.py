"""Frame conventions: presets, custom rotations from a config, and their effect on the renders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pointcloud_support import write_npy

from roadeval.benchmarks.pointcloud import (
    DEFAULT_FRAME,
    NUSCENES_FRAME,
    FrameConvention,
    frame_from_config,
    frame_preset,
    load_point_cloud,
    render_views,
)


def test_nuscenes_preset_turns_right_forward_up_into_forward_left_up(tmp_path: Path) -> None:
    # nuScenes LiDAR: 10 m ahead is +Y; 3 m to the right is +X.
    nuscenes = np.array([[0.0, 10.0, 1.0, 0.3], [3.0, 0.0, -1.0, 0.6]], dtype=np.float32)
    loaded = load_point_cloud(write_npy(tmp_path / "n.npy", nuscenes), NUSCENES_FRAME)
    expected = np.array([[10.0, 0.0, 1.0, 0.3], [0.0, -3.0, -1.0, 0.6]], dtype=np.float32)
    assert np.array_equal(loaded, expected)  # a swap and a sign change: exact


def test_a_scan_in_nuscenes_frame_renders_as_the_same_scan_in_ours(
    tmp_path: Path, small_scan: np.ndarray
) -> None:
    ours = small_scan
    nuscenes = np.stack([-ours[:, 1], ours[:, 0], ours[:, 2], ours[:, 3]], axis=1)
    loaded = load_point_cloud(write_npy(tmp_path / "n.npy", nuscenes), frame_preset("nuScenes"))
    assert np.array_equal(loaded, ours)
    assert render_views(loaded) == render_views(ours)


def test_presets_and_config_values() -> None:
    assert frame_preset("kitti") is DEFAULT_FRAME and DEFAULT_FRAME.is_identity
    assert frame_from_config("nuscenes") is NUSCENES_FRAME
    custom = frame_from_config([[0, 1, 0], [-1, 0, 0], [0, 0, 1]])
    assert custom.rotation == NUSCENES_FRAME.rotation and hash(custom)
    with pytest.raises(ValueError, match=r"unknown frame preset 'waymo'.*nuscenes"):
        frame_preset("waymo")


def test_a_general_rotation_is_applied_as_p_conv_equals_r_p_source() -> None:
    c, s = 0.6, 0.8  # a rotation of about 53 degrees about Z
    frame = FrameConvention("yawed", ((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0)))
    points = np.array([[1.0, 0.0, 2.0, 0.5], [0.0, 5.0, -1.0, 0.1]], dtype=np.float32)
    rotated = frame.apply(points)
    assert rotated[:, :3] == pytest.approx(points[:, :3] @ np.array(frame.rotation).T, abs=1e-6)
    assert rotated[:, 3].tolist() == pytest.approx([0.5, 0.1])
    assert rotated.dtype == np.float32


@pytest.mark.parametrize(
    "matrix, problem",
    [
        (((1, 0, 0), (0, 1, 0), (0, 0, -1)), "determinant"),  # a mirror
        (((2, 0, 0), (0, 1, 0), (0, 0, 1)), "orthonormal"),
        (((1, 0), (0, 1)), "3x3"),
        (((1, 0, 0), (0, float("nan"), 0), (0, 0, 1)), "finite"),
    ],
)
def test_a_matrix_that_is_not_a_rotation_is_refused(matrix: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        FrameConvention("bad", matrix)  # type: ignore[arg-type]
