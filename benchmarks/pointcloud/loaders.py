"""Loading a scan from .bin (KITTI: float32 x, y, z, intensity), .pcd or .npy into one shape:
(N, 4) float32 x, y, z, intensity in the suite's source frame (X forward, Y left, Z up).
Anything the renders could not show faithfully (no points, NaN or infinite values) is an error
naming the file: an empty cloud means the item is broken, so fix or drop the item."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from roadeval.benchmarks.pointcloud.errors import PointCloudError
from roadeval.benchmarks.pointcloud.frames import DEFAULT_FRAME, FrameConvention
from roadeval.benchmarks.pointcloud.pcd import read_pcd

POINT_CLOUD_SUFFIXES: tuple[str, ...] = (".bin", ".pcd", ".npy")
_BIN_RECORD = np.dtype("<f4")
_BIN_RECORD_BYTES = 16
_COLUMNS = ("x", "y", "z", "intensity")
_FINITE_CHUNK = 16_384


def load_point_cloud(path: Path, frame: FrameConvention = DEFAULT_FRAME) -> np.ndarray:
    """The scan at `path` as (N, 4) float32, rotated by `frame` into X forward, Y left, Z up.
    Intensity is 0 where the file has none. PointCloudError on any bad input."""
    path = Path(path)
    _check_suffix(path)
    return read_point_cloud(path, _read_bytes(path), frame)


def read_point_cloud(
    path: Path, raw: bytes, frame: FrameConvention = DEFAULT_FRAME, writable: bool = True
) -> np.ndarray:
    """`load_point_cloud` of the file's bytes, read elsewhere (a render worker gets the bytes,
    never the file): `path` gives the format (its extension) and names the file in errors.
    `writable=False` (a render only reads): may be a read-only view of `raw`, not a copy."""
    path = Path(path)
    suffix = _check_suffix(path)
    if suffix == ".npy":
        points = _read_npy(path, raw)
    else:
        points = _read_bin(path, raw) if suffix == ".bin" else read_pcd(path, raw)
    points = check_points(path, points)
    keep_view = not writable and frame.is_identity
    return points if keep_view else frame.apply(points)


def _check_suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in POINT_CLOUD_SUFFIXES:
        allowed = ", ".join(POINT_CLOUD_SUFFIXES)
        raise PointCloudError(
            path, f"unknown point-cloud extension {path.suffix!r} (use {allowed})"
        )
    return suffix


def check_points(path: Path | str, points: np.ndarray) -> np.ndarray:
    """`points` if it is a non-empty (N, 4) float32 array of finite values, else the error."""
    if points.ndim != 2 or points.shape[1] != 4 or points.dtype != np.float32:
        raise PointCloudError(
            path, f"expected (N, 4) float32 points, got {points.shape} {points.dtype}"
        )
    if len(points) == 0:
        raise PointCloudError(
            path, "the point cloud is empty (no points to render: fix or drop the item)"
        )
    if not _all_finite(points):
        finite = np.isfinite(points)
        bad_rows = np.flatnonzero(~finite.all(axis=1))
        bad_columns = [
            name for name, ok in zip(_COLUMNS, finite.all(axis=0), strict=True) if not ok
        ]
        raise PointCloudError(
            path,
            f"{len(bad_rows)} of {len(points)} points have NaN or infinite "
            f"{'/'.join(bad_columns)} (first at point {int(bad_rows[0])})",
        )
    return points


def _all_finite(points: np.ndarray) -> bool:
    # A chunk at a time into one small mask: the whole scan's mask would be a fresh allocation
    # (page faults) per scan where the allocator returns freed blocks at once (Dask's workers).
    mask = np.empty((min(len(points), _FINITE_CHUNK), points.shape[1]), dtype=bool)
    for start in range(0, len(points), _FINITE_CHUNK):
        chunk = points[start : start + _FINITE_CHUNK]
        if not np.isfinite(chunk, out=mask[: len(chunk)]).all():
            return False
    return True


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise PointCloudError(path, f"cannot read the file ({exc.strerror or exc})") from None


def _read_bin(path: Path, raw: bytes) -> np.ndarray:
    if len(raw) % _BIN_RECORD_BYTES:
        raise PointCloudError(
            path,
            f".bin size {len(raw)} bytes is not a multiple of {_BIN_RECORD_BYTES} "
            "(float32 x, y, z, intensity per point): truncated or not a KITTI scan",
        )
    return np.frombuffer(raw, dtype=_BIN_RECORD).reshape(-1, 4)


def _read_npy(path: Path, raw: bytes) -> np.ndarray:
    try:
        array = np.load(io.BytesIO(raw), allow_pickle=False)
    except OSError as exc:
        raise PointCloudError(path, f"cannot read the file ({exc.strerror or exc})") from None
    except (ValueError, EOFError) as exc:
        raise PointCloudError(path, f"not a plain .npy array ({exc})") from None
    if not isinstance(array, np.ndarray):
        raise PointCloudError(path, "not a .npy array (an .npz archive?)")
    if array.ndim != 2 or array.shape[1] < 3:
        raise PointCloudError(
            path, f".npy shape {array.shape}: expected N x 3 or more columns (x, y, z[, intensity])"
        )
    if array.dtype.kind != "f":
        raise PointCloudError(
            path, f".npy dtype {array.dtype} is not floating point (float16/32/64 expected)"
        )
    points = np.zeros((len(array), 4), dtype=np.float32)
    columns = min(array.shape[1], 4)
    # float64 beyond float32's range becomes inf here, and check_points reports it.
    with np.errstate(over="ignore", invalid="ignore"):
        points[:, :columns] = array[:, :columns]
    return points
