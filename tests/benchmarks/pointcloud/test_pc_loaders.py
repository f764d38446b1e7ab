"""Every format gives the same (N, 4) float32 points; PCD layouts PCL writes (extra fields,
other orders, COUNT > 1, no intensity) read right."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pointcloud_support import (
    XYZI,
    write_bin,
    write_npy,
    write_pcd_ascii,
    write_pcd_binary,
    xyzi,
)

from roadeval.benchmarks.pointcloud import NUSCENES_FRAME, load_point_cloud, read_point_cloud


def test_every_format_loads_the_same_points(tmp_path: Path, small_scan: np.ndarray) -> None:
    files = [
        write_bin(tmp_path / "scan.bin", small_scan),
        write_pcd_ascii(tmp_path / "ascii.pcd", xyzi(small_scan)),
        write_pcd_binary(tmp_path / "binary.pcd", xyzi(small_scan)),
        write_npy(tmp_path / "scan.npy", small_scan),
        write_npy(tmp_path / "wide.npy", np.hstack([small_scan, small_scan[:, :2]])),
        write_bin(tmp_path / "UPPER.BIN", small_scan),
    ]
    for path in files:
        loaded = load_point_cloud(path)
        assert loaded.dtype == np.float32 and loaded.shape == (500, 4), path.name
        assert np.array_equal(loaded, small_scan), path.name


def test_npy_without_intensity_and_in_float64(tmp_path: Path, small_scan: np.ndarray) -> None:
    xyz64 = small_scan[:, :3].astype(np.float64)
    loaded = load_point_cloud(write_npy(tmp_path / "xyz.npy", xyz64))
    assert np.array_equal(loaded[:, :3], small_scan[:, :3])
    assert not loaded[:, 3].any()


def test_pcd_with_other_fields_order_and_types(tmp_path: Path, small_scan: np.ndarray) -> None:
    fields = (
        ("intensity", 4, "F"),
        ("ring", 2, "U"),
        ("x", 8, "F"),
        ("_", 1, "U"),
        ("y", 4, "F"),
        ("z", 4, "F"),
        ("t", 4, "I"),
    )
    columns = xyzi(small_scan)
    columns["ring"] = np.arange(500) % 64
    columns["_"] = np.zeros(500)
    columns["t"] = np.arange(500) - 250
    for writer, name in ((write_pcd_ascii, "a.pcd"), (write_pcd_binary, "b.pcd")):
        loaded = load_point_cloud(writer(tmp_path / name, columns, fields))
        assert np.array_equal(loaded, small_scan), name


def test_pcd_without_intensity_reads_zero(tmp_path: Path, small_scan: np.ndarray) -> None:
    path = write_pcd_binary(tmp_path / "xyz.pcd", xyzi(small_scan), XYZI[:3])
    loaded = load_point_cloud(path)
    assert np.array_equal(loaded[:, :3], small_scan[:, :3]) and not loaded[:, 3].any()


def test_pcd_field_with_count_above_one_takes_its_first_value(tmp_path: Path) -> None:
    header = (
        "VERSION 0.7\nFIELDS x y z normal\nSIZE 4 4 4 4\nTYPE F F F F\nCOUNT 1 1 1 3\n"
        "WIDTH 2\nHEIGHT 1\nPOINTS 2\nDATA ascii\n"
    )
    path = tmp_path / "normals.pcd"
    path.write_text(header + "1 2 3 0 0 1\n4 5 6 0 1 0\n")
    assert load_point_cloud(path).tolist() == [[1, 2, 3, 0], [4, 5, 6, 0]]
    binary = header.replace("ascii", "binary").encode()
    rows = np.array([[1, 2, 3, 0, 0, 1], [4, 5, 6, 0, 1, 0]], dtype="<f4")
    (tmp_path / "normals_b.pcd").write_bytes(binary + rows.tobytes())
    assert load_point_cloud(tmp_path / "normals_b.pcd").tolist() == [[1, 2, 3, 0], [4, 5, 6, 0]]


def test_organised_pcd_uses_width_times_height(tmp_path: Path) -> None:
    text = (
        "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 2\nHEIGHT 2\nDATA ascii\n"
        "1 0 0\n2 0 0\n3 0 0\n4 0 0\n"
    )
    path = tmp_path / "organised.pcd"
    path.write_text(text)
    assert load_point_cloud(path)[:, 0].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("name", ["scan.bin", "scan.pcd", "scan.npy"])
def test_loading_returns_a_new_writable_array(tmp_path: Path, name: str) -> None:
    points = np.array([[1.0, 2.0, 3.0, 0.5]], dtype=np.float32)
    path = tmp_path / name
    if name.endswith(".bin"):
        write_bin(path, points)
    elif name.endswith(".pcd"):
        write_pcd_binary(path, xyzi(points))
    else:
        write_npy(path, points)
    loaded = load_point_cloud(path)
    loaded[0, 0] = 9.0  # a read-only view of the file's bytes would raise here
    assert load_point_cloud(path)[0, 0] == 1.0


def test_a_render_reads_a_bin_without_copying_it(tmp_path: Path) -> None:
    # A render only reads the points: in the default frame they stay a view of the file's bytes
    # (one scan's worth less to allocate in a render worker); rotated, they are new.
    points = np.array([[1.0, 2.0, 3.0, 0.5], [4.0, 5.0, 6.0, 0.0]], dtype=np.float32)
    path = write_bin(tmp_path / "scan.bin", points)
    raw = path.read_bytes()
    view = read_point_cloud(path, raw, writable=False)
    assert np.array_equal(view, load_point_cloud(path)) and np.shares_memory(
        view, np.frombuffer(raw, np.uint8)
    )
    assert not view.flags.writeable
    rotated = read_point_cloud(path, raw, NUSCENES_FRAME, writable=False)
    assert (
        np.array_equal(rotated, load_point_cloud(path, NUSCENES_FRAME)) and rotated.flags.writeable
    )
