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


def to_target(points: np.ndarray) -> Target:
    """The target frame from (N, >=3) source-frame points: X_t = -Y_s, Y_t = X_s, Z_t = Z_s."""
    # Transposed to contiguous rows: numpy's vector loops run far faster than on strided columns.
    source = np.ascontiguousarray(points[:, :3].T, dtype=np.float64)
    np.negative(source[1], out=source[1])
    return Target(x=source[1], y=source[0], z=source[2])


def bev_splat(target: Target) -> Splat:
    """Each point's BEV cell and height level; outside the crop, `nowhere`."""
    z_low, z_high = BEV_Z_RANGE
    column = target.x - BEV_X_RANGE[0]
    column *= BEV_PIXELS_PER_METRE
    np.floor(column, out=column)
    row = BEV_Y_RANGE[1] - target.y
    row *= BEV_PIXELS_PER_METRE
    np.floor(row, out=row)
    # Bounds on the integer cells, not on the metres: a point is in exactly one cell or none.
    inside = (column >= 0) & (column < BEV_SIZE) & (row >= 0) & (row < BEV_SIZE)
    inside &= (target.z >= z_low) & (target.z <= z_high)
    level = target.z - z_low
    level *= LEVELS / (z_high - z_low)
    return _splat(row, column, BEV_SIZE, BEV_SIZE, inside, level)


def front_splat(target: Target) -> Splat:
    """Each point's front-view pixel and depth level; not seen by the camera, `nowhere`."""
    # Clamped only so that the division is defined everywhere; the points outside the depth
    # range are dropped by `seen` below, whatever pixel they compute.
    depth = np.clip(target.y, MIN_DEPTH, MAX_DEPTH)
    column = FOCAL_X * target.x
    column /= depth
    column += CENTRE_X
    np.floor(column, out=column)
    row = CAMERA_HEIGHT - target.z
    row *= FOCAL_Y
    row /= depth
    row += CENTRE_Y
    np.floor(row, out=row)
    seen = (target.y >= MIN_DEPTH) & (target.y <= MAX_DEPTH)
    seen &= (column >= 0) & (column < FRONT_WIDTH) & (row >= 0) & (row < FRONT_HEIGHT)
    level = depth - MIN_DEPTH
    level *= LEVELS / (MAX_DEPTH - MIN_DEPTH)
    return _splat(row, column, FRONT_WIDTH, FRONT_HEIGHT, seen, level)


def _splat(
    row: np.ndarray,
    column: np.ndarray,
    width: int,
    height: int,
    keep: np.ndarray,
    level: np.ndarray,
) -> Splat:
    """Flat indices (exact in float64: integers far below 2**53) with dropped points sent to
    one past the image, rather than compressing every array by `keep`, which costs more."""
    nowhere = width * height
    row *= width
    row += column
    pixel = np.where(keep, row, float(nowhere)).astype(np.int64)
    np.floor(level, out=level)
    np.clip(level, 0, LEVELS - 1, out=level)
    return Splat(pixel, level.astype(np.uint8), nowhere)
