"""The two renders of a scan as PNG bytes: BEV (800x800, height as colour, the highest point in
a cell wins) and front view (800x600, depth as colour darkening with distance, the nearest point
in a pixel wins). Per-pixel max/min of integer levels does not depend on the points' order, so
the same points give the same pixels. Images are palette PNGs (one byte a pixel, the palette
being the colour map), written by PIL at a fixed zlib level with no metadata chunks."""

from __future__ import annotations

import io
import threading

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
    bev_splat,
    front_splat,
    thread_scratch,
    to_target,
)

# Bump when a render's pixels or encoding change, so that cached renders are not reused.
RENDER_VERSION = "pointcloud-render-1"
# zlib level 1, default strategy: fast and fixed. The bytes depend on these settings and on the
# zlib Pillow links (pinned with Pillow in constraints.txt); the pixels depend on neither.
PNG_COMPRESS_LEVEL = 1


def bev_indices(points: np.ndarray) -> np.ndarray:
    """(800, 800) uint8 palette indices of the bird's-eye view (BEV_PALETTE colours them)."""
    return _indices(points, front=False)[0]


def front_indices(points: np.ndarray) -> np.ndarray:
    """(600, 800) uint8 palette indices of the front view (FRONT_PALETTE colours them)."""
    return _indices(points, bev=False)[1]


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
    # Into this thread's cells, reused once both PNGs are written: no image allocated per scan.
    bev, front = _indices(points, cells=_thread_cells())
    return encode_png(bev, BEV_PALETTE), encode_png(front, FRONT_PALETTE)


def empty_cells() -> tuple[np.ndarray, np.ndarray]:
    """Flat BEV and front-view indices with no point drawn, plus one spare cell past each
    image that takes the dropped points (a splat's `nowhere`)."""
    bev = np.full(BEV_SIZE * BEV_SIZE + 1, BEV_EMPTY, dtype=np.uint8)
    return bev, np.full(FRONT_WIDTH * FRONT_HEIGHT + 1, FRONT_EMPTY, dtype=np.uint8)


_per_thread = threading.local()


def _thread_cells() -> tuple[np.ndarray, np.ndarray]:
    """This thread's cells, emptied."""
    cells: tuple[np.ndarray, np.ndarray] | None = getattr(_per_thread, "cells", None)
    if cells is None:
        cells = _per_thread.cells = empty_cells()
    else:
        cells[0].fill(BEV_EMPTY)
        cells[1].fill(FRONT_EMPTY)
    return cells


def add_bev(cells: np.ndarray, splat: Splat) -> None:
    """Draw a BEV splat into flat cells: the highest point of a cell wins. Its levels become
    palette indices in place (level + 1: index 0 is the empty cell, below every point)."""
    np.add(splat.level, 1, out=splat.level)
    np.maximum.at(cells, splat.pixel, splat.level)


def add_front(cells: np.ndarray, splat: Splat) -> None:
    """Draw a front-view splat into flat cells: the nearest point of a pixel wins."""
    np.minimum.at(cells, splat.pixel, splat.level)


def _indices(
    points: np.ndarray,
    bev: bool = True,
    front: bool = True,
    cells: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The views' palette indices, drawn a chunk of points at a time (a pixel's max or min does
    not depend on the order the points come in) into `cells` (empty), else new ones."""
    if not isinstance(points, np.ndarray) or points.ndim != 2 or points.shape[1] < 3:
        shape = getattr(points, "shape", type(points).__name__)
        raise ValueError(f"points must be an (N, 3+) array, got {shape}")
    bev_cells, front_cells = cells or empty_cells()
    scratch = thread_scratch()
    for start in range(0, len(points), scratch.size):
        target = to_target(points[start : start + scratch.size], scratch)
        if bev:
            add_bev(bev_cells, bev_splat(target, scratch))
        if front:
            add_front(front_cells, front_splat(target, scratch))
    return (
        bev_cells[:-1].reshape(BEV_SIZE, BEV_SIZE),
        front_cells[:-1].reshape(FRONT_HEIGHT, FRONT_WIDTH),
    )
