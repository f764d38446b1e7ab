"""The renders as bytes: occlusion, golden hashes, determinism in and across processes, and PNGs
that decode to the images with no metadata."""

from __future__ import annotations

import hashlib
import io
import multiprocessing
import struct
import tracemalloc

import numpy as np
import pytest
from PIL import Image
from pointcloud_support import render_synthetic

from roadeval.benchmarks.pointcloud import (
    FRONT_PALETTE,
    bev_image,
    bev_indices,
    front_image,
    front_indices,
    render_bev,
    render_front,
    render_views,
    synthetic_scan,
)

# Fixed with the renders: a change to the projection, the colours, the cut-offs or the PNG
# settings changes these. Update them (and RENDER_VERSION) only on purpose.
GOLDEN_SEED = 7
GOLDEN_PIXELS = {
    "bev": "76b23f1fa7a7d52241626855deec67ca85c4ae1cd3416076dd01d30b83303a37",
    "front": "5c55fbe0c97d3ca5b91090c478cf85606d131c6cbf1c404b4d26097d74c03bca",
}
GOLDEN_PNG = {
    "bev": "e71c22fcd44571ca9bd9f06fc35fc48c71e488f26fc213250f804d9acd9ed5db",
    "front": "235592f070a48b55d83633837116d0935aa948b20c831bbaeb47a61a989ad31d",
}


def _sha(data: bytes | np.ndarray) -> str:
    return hashlib.sha256(data if isinstance(data, bytes) else data.tobytes()).hexdigest()


def _face(depth: float, half_width: float, z_low: float, z_high: float, step: float) -> np.ndarray:
    """A vertical face of a box, facing the camera, as a dense grid of source-frame points."""
    lateral = np.arange(-half_width, half_width + step / 2, step)
    heights = np.arange(z_low, z_high + step / 2, step)
    grid_y, grid_z = np.meshgrid(lateral, heights)
    flat = grid_y.ravel()
    return np.stack(
        [np.full(flat.size, depth), flat, grid_z.ravel(), np.zeros(flat.size)], axis=1
    ).astype(np.float32)


def test_a_near_box_hides_a_far_one() -> None:
    # Near face at 10 m (2 m x 2 m, z -1..1), far face at 20 m (4 m x 4 m, z -2..2), both
    # sampled finer than a pixel. The near face covers rows 326..430 (v = 300 + f_y (1.5 - z)
    # / 10), the far 287..391; columns 360..440 for both.
    near = _face(10.0, 1.0, -1.0, 1.0, 0.01)
    far = _face(20.0, 2.0, -2.0, 2.0, 0.02)
    near_level, far_level = 30, 62  # floor((10 - 0.5) * 255 / 79.5), floor((20 - 0.5) * ...)
    expected = None
    for points in (np.concatenate([near, far]), np.concatenate([far, near])):
        indices = front_indices(points)
        overlap = indices[330:390, 365:435]
        assert (overlap == near_level).all()
        assert (indices[290:320, 365:435] == far_level).all()  # above the near box: far shows
        assert tuple(front_image(points)[350, 400]) == tuple(FRONT_PALETTE[near_level])
        if expected is None:
            expected = render_front(points)
        assert render_front(points) == expected
    shuffled = np.random.default_rng(0).permutation(np.concatenate([near, far]))
    assert render_front(shuffled) == expected


def test_golden_renders_of_a_synthetic_scan() -> None:
    points = synthetic_scan(GOLDEN_SEED)
    bev, front = render_views(points)
    assert {"bev": _sha(bev_indices(points)), "front": _sha(front_indices(points))} == (
        GOLDEN_PIXELS
    )
    # The PNG hashes also fix the encoder settings (and the zlib Pillow links).
    assert {"bev": _sha(bev), "front": _sha(front)} == GOLDEN_PNG


def test_renders_are_the_same_twice_and_in_a_spawned_process() -> None:
    points = synthetic_scan(GOLDEN_SEED)
    first = render_views(points)
    assert render_views(points.copy()) == first
    assert (render_bev(points), render_front(points)) == first
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        scan_sha, bev, front = pool.apply(render_synthetic, (GOLDEN_SEED,))
    assert scan_sha == _sha(points)
    assert (bev, front) == first


def test_a_render_allocates_nothing_per_point() -> None:
    # Working arrays per thread, a chunk of points at a time: where the allocator hands freed
    # blocks back at once (Dask's workers), a scan's worth of temporaries costs page faults
    # worth as much as the arithmetic. Numpy reports its arrays to tracemalloc.
    points = synthetic_scan(GOLDEN_SEED)
    first = render_views(points)
    tracemalloc.start()
    try:
        assert render_views(points) == first
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < points.nbytes / 4, f"{peak:,} bytes allocated for a {points.nbytes:,}-byte scan"


def test_the_point_order_does_not_change_the_bytes() -> None:
    points = synthetic_scan(3, points=20_000)
    shuffled = np.random.default_rng(1).permutation(points)
    assert render_views(shuffled) == render_views(points)


def test_pngs_decode_to_the_images_and_carry_no_metadata() -> None:
    points = synthetic_scan(2, points=20_000)
    for data, image, size in (
        (render_bev(points), bev_image(points), (800, 800)),
        (render_front(points), front_image(points), (800, 600)),
    ):
        with Image.open(io.BytesIO(data)) as decoded:
            assert decoded.format == "PNG" and decoded.mode == "P" and decoded.size == size
            assert np.array_equal(np.asarray(decoded.convert("RGB")), image)
        types = _chunk_types(data)
        # No tEXt, tIME, pHYs, gAMA, sRGB or iCCP: nothing but the pixels and the palette.
        assert types[:2] == ["IHDR", "PLTE"] and types[-1] == "IEND"
        assert set(types[2:-1]) == {"IDAT"}
        assert image.any() and not image.all()


def _chunk_types(data: bytes) -> list[str]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, types = 8, []
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        types.append(data[offset + 4 : offset + 8].decode("ascii"))
        offset += 12 + length
    return types


@pytest.mark.parametrize("points", [0, 5])
def test_a_scan_with_nothing_in_view_renders_black(points: int) -> None:
    behind = np.tile(np.array([[-10.0, 0.0, 0.0, 0.0]], dtype=np.float32), (points, 1))
    assert not bev_image(behind).any() and not front_image(behind).any()
