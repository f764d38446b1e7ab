"""Where points land in the two renders (BENCHMARKS.md, TRIP-Evaluate): the target frame
X_t = -Y_s, Y_t = X_s, Z_t = Z_s (X right, Y forward, Z up), then a BEV grid cell or a pinhole
pixel plus a 0..254 colour level. Only IEEE + - * / and floor on float64, elementwise, so every
machine computes the same pixels.

BEV: X_t in [-40, 40) m to columns 0..799 (left to right), Y_t in (0, 80] m to rows 799..0
(forward is up), Z_t in [-2, 4] m kept, the height's level floor((z + 2) * 255 / 6) (z = 4 is 254).
Front: camera at (0, 0, 1.5) looking along +Y_t; f_x = 400 / tan(45 deg) = 400,
f_y = 300 / tan(30 deg) = 300 sqrt(3), c = (400, 300); pixel (floor(u), floor(v)). Points with
depth Y_t below 0.5 m (near-singular: they would smear over the image) or beyond 80 m (the BEV's
reach) are dropped; the depth's level is floor((y - 0.5) * 255 / 79.5), 254 at most.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from roadeval.benchmarks.pointcloud.colours import LEVELS

BEV_SIZE = 800
BEV_PIXELS_PER_METRE = 10.0
BEV_X_RANGE = (-40.0, 40.0)
BEV_Y_RANGE = (0.0, 80.0)
BEV_Z_RANGE = (-2.0, 4.0)

FRONT_WIDTH = 800
FRONT_HEIGHT = 600
CAMERA_HEIGHT = 1.5
HORIZONTAL_FOV_DEG = 90.0
VERTICAL_FOV_DEG = 60.0
# Written from the FOVs exactly (tan 45 = 1, tan 30 = 1 / sqrt 3): a libm tan could differ in
# its last bit between machines and move a pixel.
FOCAL_X = (FRONT_WIDTH / 2) * 1.0
FOCAL_Y = (FRONT_HEIGHT / 2) * math.sqrt(3.0)
CENTRE_X = FRONT_WIDTH / 2
CENTRE_Y = FRONT_HEIGHT / 2
MIN_DEPTH = 0.5
MAX_DEPTH = 80.0


# Points are projected a chunk at a time into buffers kept per thread: a render allocates no
# per-point array, so it costs no page faults where the allocator hands every freed block back to
# the system at once (Dask's workers run with MALLOC_TRIM_THRESHOLD_=65536: there the per-scan
# temporaries cost as much system time as the arithmetic), and a chunk's columns stay in cache.
CHUNK_POINTS = 16_384


@dataclass(frozen=True)
class Target:
    """Points in the target frame (X right, Y forward, Z up): contiguous float64 columns."""

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray


@dataclass(frozen=True)
class Splat:
    """Where each point lands: flat pixel index (row * width + column), or `nowhere` (= width *
    height, one past the image) for a point the view drops; and its colour level, 0..254."""

    pixel: np.ndarray
    level: np.ndarray
    nowhere: int

    @property
    def drawn(self) -> np.ndarray:
        """The points the view shows."""
        return self.pixel != self.nowhere


class Scratch:
    """The working arrays of up to `size` points, reused from chunk to chunk. A Target or a
    Splat made in a Scratch is a view of its arrays: use it before the Scratch's next one."""

    def __init__(self, size: int = CHUNK_POINTS) -> None:
        self.size = size
        self._xyz = np.empty((3, size))
        self._finite = np.empty((3, size), dtype=bool)
        self._first = np.empty(size)
        self._second = np.empty(size)
        self._third = np.empty(size)
        self._keep = np.empty(size, dtype=bool)
        self._bound = np.empty(size, dtype=bool)
        self._spare = np.empty(size, dtype=bool)
        self._pixel = np.empty(size, dtype=np.int64)
        self._level = np.empty(size, dtype=np.uint8)

    def columns(self, count: int) -> tuple[np.ndarray, ...]:
        """Three float64 columns, three masks and the splat's two outputs for `count` points."""
        return tuple(
            array[:count]
            for array in (
                self._first,
                self._second,
                self._third,
                self._keep,
                self._bound,
                self._spare,
                self._pixel,
                self._level,
            )
        )


_per_thread = threading.local()


def thread_scratch() -> Scratch:
    """This thread's Scratch of CHUNK_POINTS (a Dask worker may draw on several threads)."""
    scratch: Scratch | None = getattr(_per_thread, "scratch", None)
    if scratch is None:
        scratch = _per_thread.scratch = Scratch()
    return scratch


def to_target(points: np.ndarray, scratch: Scratch | None = None) -> Target:
    """The target frame from (N, >=3) source-frame points: X_t = -Y_s, Y_t = X_s, Z_t = Z_s.
    In `scratch` (N at most its size), else in arrays of its own. ValueError if a coordinate
    is NaN or infinite: every bound check would drop it, but its level cast is undefined."""
    scratch = scratch or Scratch(len(points))
    count = len(points)
    # Transposed to contiguous rows: numpy's vector loops run far faster than on strided columns.
    source = scratch._xyz[:, :count]
    np.copyto(source, points[:, :3].T)
    finite = scratch._finite[:, :count]
    if not np.isfinite(source, out=finite).all():
        raise ValueError("points must be finite (load_point_cloud rejects NaN and inf)")
    np.negative(source[1], out=source[1])
    return Target(x=source[1], y=source[0], z=source[2])


def bev_splat(target: Target, scratch: Scratch | None = None) -> Splat:
    """Each point's BEV cell and height level; outside the crop, `nowhere`."""
    column, row, level, inside, bound, spare, pixel, levels = _columns(target, scratch)
    np.subtract(target.x, BEV_X_RANGE[0], out=column)
    column *= BEV_PIXELS_PER_METRE
    np.floor(column, out=column)
    np.subtract(BEV_Y_RANGE[1], target.y, out=row)
    row *= BEV_PIXELS_PER_METRE
    np.floor(row, out=row)
    # Bounds on the integer cells, not on the metres: a point is in exactly one cell or none.
    z_low, z_high = BEV_Z_RANGE
    _within(column, 0, BEV_SIZE, inside, bound)
    inside &= _within(row, 0, BEV_SIZE, bound, spare)
    inside &= np.greater_equal(target.z, z_low, out=bound)
    inside &= np.less_equal(target.z, z_high, out=bound)
    np.subtract(target.z, z_low, out=level)
    level *= LEVELS / (z_high - z_low)
    return _splat(row, column, BEV_SIZE, BEV_SIZE, inside, level, pixel, levels)


def front_splat(target: Target, scratch: Scratch | None = None) -> Splat:
    """Each point's front-view pixel and depth level; not seen by the camera, `nowhere`."""
    column, row, depth, seen, bound, spare, pixel, levels = _columns(target, scratch)
    # Clamped only so that the division is defined everywhere; the points outside the depth
    # range are dropped by `seen` below, whatever pixel they compute.
    np.clip(target.y, MIN_DEPTH, MAX_DEPTH, out=depth)
    np.multiply(FOCAL_X, target.x, out=column)
    column /= depth
    column += CENTRE_X
    np.floor(column, out=column)
    np.subtract(CAMERA_HEIGHT, target.z, out=row)
    row *= FOCAL_Y
    row /= depth
    row += CENTRE_Y
    np.floor(row, out=row)
    np.greater_equal(target.y, MIN_DEPTH, out=seen)
    seen &= np.less_equal(target.y, MAX_DEPTH, out=bound)
    seen &= _within(column, 0, FRONT_WIDTH, bound, spare)
    seen &= _within(row, 0, FRONT_HEIGHT, bound, spare)
    depth -= MIN_DEPTH
    depth *= LEVELS / (MAX_DEPTH - MIN_DEPTH)
    return _splat(row, column, FRONT_WIDTH, FRONT_HEIGHT, seen, depth, pixel, levels)


def _columns(target: Target, scratch: Scratch | None) -> tuple[np.ndarray, ...]:
    count = len(target.x)
    return (scratch or Scratch(count)).columns(count)


def _within(
    values: np.ndarray, low: int, high: int, out: np.ndarray, spare: np.ndarray
) -> np.ndarray:
    """`out` = low <= values < high, with `spare` as the second mask."""
    np.greater_equal(values, low, out=out)
    out &= np.less(values, high, out=spare)
    return out


def _splat(
    row: np.ndarray,
    column: np.ndarray,
    width: int,
    height: int,
    keep: np.ndarray,
    level: np.ndarray,
    pixel: np.ndarray,
    levels: np.ndarray,
) -> Splat:
    """Flat indices (exact in float64: integers far below 2**53) with dropped points sent to
    one past the image, rather than compressing every array by `keep`, which costs more."""
    nowhere = width * height
    row *= width
    row += column
    np.copyto(row, float(nowhere), where=np.logical_not(keep, out=keep))
    np.copyto(pixel, row, casting="unsafe")
    np.floor(level, out=level)
    np.clip(level, 0, LEVELS - 1, out=level)
    np.copyto(levels, level, casting="unsafe")
    return Splat(pixel, levels, nowhere)
