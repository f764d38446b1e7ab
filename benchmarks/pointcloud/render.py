"""The two renders of a scan as PNG bytes: BEV (800x800, height as colour, the highest point in
a cell wins) and front view (800x600, depth as colour darkening with distance, the nearest point
in a pixel wins). Per-pixel max/min of integer levels does not depend on the points' order, so
the same points give the same pixels. Images are palette PNGs (one byte a pixel, the palette
being the colour map), written by PIL at a fixed zlib level with no metadata chunks."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from roadeval.benchmarks.pointcloud.colours import (
    BEV_EMPTY,
    BEV_PALETTE,
    FRONT_EMPTY,
    FRONT_PALETTE,
)
from roadeval.benchmarks.pointcloud.projection import (
    BEV_SIZE,
    FRONT_HEIGHT,
    FRONT_WIDTH,
    Splat,
    Target,
    bev_splat,
    front_splat,
    to_target,
)

# Bump when a render's pixels or encoding change, so that cached renders are not reused.
RENDER_VERSION = "pointcloud-render-1"
# zlib level 1, default strategy: fast and fixed. The bytes depend on these settings and on the
# zlib Pillow links (pinned with Pillow in constraints.txt); the pixels depend on neither.
PNG_COMPRESS_LEVEL = 1


def bev_indices(points: np.ndarray) -> np.ndarray:
    """(800, 800) uint8 palette indices of the bird's-eye view (BEV_PALETTE colours them)."""
    return _bev_cells(bev_splat(_target(points)))


def front_indices(points: np.ndarray) -> np.ndarray:
    """(600, 800) uint8 palette indices of the front view (FRONT_PALETTE colours them)."""
    return _front_cells(front_splat(_target(points)))


def bev_image(points: np.ndarray) -> np.ndarray:
    """(800, 800, 3) uint8 RGB of the BEV, as the PNG decodes."""
    return BEV_PALETTE[bev_indices(points)]


def front_image(points: np.ndarray) -> np.ndarray:
    """(600, 800, 3) uint8 RGB of the front view, as the PNG decodes."""
    return FRONT_PALETTE[front_indices(points)]


def encode_png(indices: np.ndarray, palette: np.ndarray) -> bytes:
    """A palette PNG of (H, W) uint8 indices and a (256, 3) uint8 palette; no text, time or
    colour-space chunks, so the bytes are a function of the pixels alone."""
    if indices.dtype != np.uint8 or indices.ndim != 2:
        raise ValueError(f"expected (H, W) uint8 indices, got {indices.shape} {indices.dtype}")
    if palette.dtype != np.uint8 or palette.shape != (256, 3):
        raise ValueError(f"expected a (256, 3) uint8 palette, got {palette.shape} {palette.dtype}")
    image = Image.fromarray(indices)
    image.putpalette(palette.tobytes())
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL, optimize=False)
    return buffer.getvalue()


def render_bev(points: np.ndarray) -> bytes:
    """The BEV as PNG bytes, from (N, >=3) source-frame points."""
    return encode_png(bev_indices(points), BEV_PALETTE)


def render_front(points: np.ndarray) -> bytes:
    """The front view as PNG bytes, from (N, >=3) source-frame points."""
    return encode_png(front_indices(points), FRONT_PALETTE)


def render_views(points: np.ndarray) -> tuple[bytes, bytes]:
    """(BEV PNG, front-view PNG): the order TRIP's point-cloud items show them in."""
    target = _target(points)
    bev = encode_png(_bev_cells(bev_splat(target)), BEV_PALETTE)
    return bev, encode_png(_front_cells(front_splat(target)), FRONT_PALETTE)


def _bev_cells(splat: Splat) -> np.ndarray:
    # One spare cell past the image takes the dropped points; level + 1 because index 0 is the
    # empty cell, below every point.
    cells = np.full(splat.nowhere + 1, BEV_EMPTY, dtype=np.uint8)
    np.maximum.at(cells, splat.pixel, splat.level + np.uint8(1))
    return cells[: splat.nowhere].reshape(BEV_SIZE, BEV_SIZE)


def _front_cells(splat: Splat) -> np.ndarray:
    depth = np.full(splat.nowhere + 1, FRONT_EMPTY, dtype=np.uint8)
    np.minimum.at(depth, splat.pixel, splat.level)
    return depth[: splat.nowhere].reshape(FRONT_HEIGHT, FRONT_WIDTH)


def _target(points: np.ndarray) -> Target:
    if not isinstance(points, np.ndarray) or points.ndim != 2 or points.shape[1] < 3:
        shape = getattr(points, "shape", type(points).__name__)
        raise ValueError(f"points must be an (N, 3+) array, got {shape}")
    if not np.isfinite(points[:, :3]).all():
        # A NaN would be dropped by every bound check, but its level cast is undefined (and
        # warns): the caller skipped load_point_cloud's checks, so say so.
        raise ValueError("points must be finite (load_point_cloud rejects NaN and inf)")
    return to_target(points)
