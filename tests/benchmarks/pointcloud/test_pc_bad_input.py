"""Every bad scan is a PointCloudError (a ValueError) naming the file and what is wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pointcloud_support import XYZI, pcd_header, write_bin, write_npy, write_pcd_ascii, xyzi

from roadeval.benchmarks.pointcloud import PointCloudError, load_point_cloud, render_views


def _refused(path: Path, problem: str) -> PointCloudError:
    with pytest.raises(PointCloudError, match=problem) as caught:
        load_point_cloud(path)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.path == str(path) and str(error).startswith(f"{path}: ")
    return error


def _three_points() -> np.ndarray:
    return np.array([[1, 2, 3, 0.1], [4, 5, 6, 0.2], [7, 8, 9, 0.3]], dtype=np.float32)


def test_bin_size_not_a_multiple_of_16(tmp_path: Path) -> None:
    path = tmp_path / "cut.bin"
    path.write_bytes(_three_points().tobytes()[:-3])
    error = _refused(path, "not a multiple of 16")
    assert "45 bytes" in error.problem


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_infinite_coordinates(tmp_path: Path, bad: float) -> None:
    points = _three_points()
    points[1, 2] = bad
    error = _refused(write_bin(tmp_path / "bad.bin", points), "NaN or infinite z")
    assert "1 of 3 points" in error.problem and "first at point 1" in error.problem


def test_nan_in_ascii_pcd_and_float64_overflow_in_npy(tmp_path: Path) -> None:
    columns = xyzi(_three_points())
    columns["x"] = np.array([1.0, np.nan, 2.0])
    _refused(write_pcd_ascii(tmp_path / "nan.pcd", columns), "NaN or infinite x")
    huge = _three_points().astype(np.float64)
    huge[2, 1] = 1e300  # finite in float64, infinite as float32
    _refused(write_npy(tmp_path / "huge.npy", huge), "NaN or infinite y")


def test_empty_clouds(tmp_path: Path) -> None:
    empty_bin = tmp_path / "empty.bin"
    empty_bin.write_bytes(b"")
    for path in (
        empty_bin,
        write_npy(tmp_path / "empty.npy", np.zeros((0, 4), dtype=np.float32)),
        _pcd(tmp_path / "empty.pcd", pcd_header(XYZI, 0, "binary")),
    ):
        error = _refused(path, "empty")
        assert "fix or drop the item" in error.problem


def test_unknown_extension_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "scan.las"
    path.write_bytes(b"LASF")
    error = _refused(path, "unknown point-cloud extension '.las'")
    assert ".bin, .pcd, .npy" in error.problem
    _refused(tmp_path / "absent.bin", "cannot read")
    _refused(tmp_path / "absent.npy", "cannot read")


def test_truncated_pcd_header(tmp_path: Path) -> None:
    header = pcd_header(XYZI, 3, "binary")
    cut = header[: header.index(b"POINTS")]
    error = _refused(_pcd(tmp_path / "cut.pcd", cut), "header is truncated: no DATA line")
    assert "FIELDS" in error.problem
    _refused(_pcd(tmp_path / "nothing.pcd", b""), "header is truncated")


@pytest.mark.parametrize("data", ["binary", "ascii"])
def test_pcd_data_shorter_than_points_says(tmp_path: Path, data: str) -> None:
    points = _three_points()
    if data == "binary":
        body = points.tobytes()[:-16]
        problem = "binary data is truncated: POINTS 3 needs 48 bytes .* the file has 32"
    else:
        body = b"1 2 3 0.1\n4 5 6 0.2\n"
        problem = "ascii data is shorter than POINTS says: 2 rows, POINTS 3"
    _refused(_pcd(tmp_path / "short.pcd", pcd_header(XYZI, 3, data) + body), problem)


def test_pcd_data_longer_or_ragged(tmp_path: Path) -> None:
    header = pcd_header(XYZI, 2, "binary")
    _refused(_pcd(tmp_path / "long.pcd", header + bytes(48)), "16 bytes beyond POINTS 2")
    ragged = pcd_header(XYZI, 2, "ascii") + b"1 2 3\n4 5 6 0.2 9\n"
    _refused(_pcd(tmp_path / "ragged.pcd", ragged), "malformed: .*columns changed")
    narrow = pcd_header(XYZI, 2, "ascii") + b"1 2 3\n4 5 6\n"
    _refused(_pcd(tmp_path / "narrow.pcd", narrow), "rows have 3 values, FIELDS and COUNT say 4")
    words = pcd_header(XYZI, 1, "ascii") + b"1 2 three 0\n"
    _refused(_pcd(tmp_path / "words.pcd", words), "malformed: could not convert")


@pytest.mark.parametrize(
    "header, problem",
    [
        (b"FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nDATA binary_compressed\n", "compressed"),
        (b"FIELDS x y\nSIZE 4 4\nTYPE F F\nWIDTH 1\nDATA ascii\n", "lack z"),
        (b"FIELDS x y z\nSIZE 4 4\nTYPE F F F\nWIDTH 1\nDATA ascii\n", "SIZE has 2 entries"),
        (b"FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nDATA ascii\n", "no WIDTH"),
        (b"FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nPOINTS 2\nDATA ascii\n", "WIDTH x"),
        (b"FIELDS x y z\nSIZE 4 4 3\nTYPE F F F\nWIDTH 1\nDATA ascii\n", "unsupported SIZE"),
        (b"FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH one\nDATA ascii\n", "not integers"),
        (b"FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nDATA gzip\n", "not ascii or binary"),
        (b"FIELDS x y z\nCOLOUR red\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nDATA ascii\n", "unknown"),
        (b"\xff\xfe\n", "not ASCII"),
    ],
)
def test_bad_pcd_headers(tmp_path: Path, header: bytes, problem: str) -> None:
    _refused(_pcd(tmp_path / "bad.pcd", header + b"1 2 3\n"), problem)


@pytest.mark.parametrize(
    "array, problem",
    [
        (np.zeros((5, 2), dtype=np.float32), r"shape \(5, 2\): expected N x 3"),
        (np.zeros(12, dtype=np.float32), r"shape \(12,\)"),
        (np.zeros((5, 4), dtype=np.int32), "dtype int32 is not floating point"),
        (np.zeros((5, 4), dtype=np.complex64), "dtype complex64"),
        (np.array([["a", "b", "c"]]), "dtype <U1"),
    ],
)
def test_bad_npy(tmp_path: Path, array: np.ndarray, problem: str) -> None:
    _refused(write_npy(tmp_path / "bad.npy", array), problem)


def test_npy_that_needs_pickle_or_is_not_npy(tmp_path: Path) -> None:
    pickled = tmp_path / "objects.npy"
    np.save(pickled, np.array([[1, None, 3]], dtype=object), allow_pickle=True)
    _refused(pickled, "not a plain .npy array")
    garbage = tmp_path / "garbage.npy"
    garbage.write_bytes(b"not numpy at all")
    _refused(garbage, "not a plain .npy array")


def test_renders_refuse_arrays_the_loader_would_not_give() -> None:
    with pytest.raises(ValueError, match=r"\(N, 3\+\) array"):
        render_views(np.zeros((4, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="finite"):
        render_views(np.array([[1.0, np.nan, 0.0]]))


def _pcd(path: Path, raw: bytes) -> Path:
    path.write_bytes(raw)
    return path
