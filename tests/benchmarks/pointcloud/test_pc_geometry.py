"""Where a point lands, worked out by hand from BENCHMARKS.md's formulas: the BEV cell and the
front-view pixel, their colours from the anchor tables, and the crop and depth cut-offs."""

from __future__ import annotations

import math

import numpy as np

from roadeval.benchmarks.pointcloud import (
    BEV_PALETTE,
    FRONT_PALETTE,
    bev_image,
    bev_indices,
    front_image,
    front_indices,
)
from roadeval.benchmarks.pointcloud.projection import (
    FOCAL_X,
    FOCAL_Y,
    HORIZONTAL_FOV_DEG,
    VERTICAL_FOV_DEG,
)

BLACK = (0, 0, 0)


def _points(*rows: tuple[float, float, float]) -> np.ndarray:
    return np.array([(x, y, z, 0.5) for x, y, z in rows], dtype=np.float32)


def _lit(image: np.ndarray) -> list[tuple[int, int]]:
    rows, columns = np.nonzero(image.any(axis=2))
    return list(zip(rows.tolist(), columns.tolist(), strict=True))


def test_focal_lengths_come_from_the_fovs() -> None:
    horizontal = math.tan(math.radians(HORIZONTAL_FOV_DEG / 2))
    vertical = math.tan(math.radians(VERTICAL_FOV_DEG / 2))
    assert math.isclose(FOCAL_X, 400 / horizontal, rel_tol=1e-12)
    assert math.isclose(FOCAL_Y, 300 / vertical, rel_tol=1e-12)


def test_a_point_lands_on_its_bev_cell_in_its_height_colour() -> None:
    # Source (30.05 ahead, 10.05 right, 0.5 up) -> target X_t = 10.05, Y_t = 30.05:
    # column floor((10.05 + 40) * 10) = 500, row floor((80 - 30.05) * 10) = 499.
    # Height level floor((0.5 + 2) * 255 / 6) = floor(106.25) = 106, between anchors
    # 64 (40, 110, 235) and 110 (20, 200, 210) at 42/46: (22, 192, 212) rounded half up.
    image = bev_image(_points((30.05, -10.05, 0.5)))
    assert _lit(image) == [(499, 500)]
    assert tuple(image[499, 500]) == (22, 192, 212)
    assert bev_indices(_points((30.05, -10.05, 0.5)))[499, 500] == 106 + 1


def test_a_point_lands_on_its_front_pixel_in_its_depth_colour() -> None:
    # Source (10 ahead, 2 right, 0.5 up) -> target x = 2, y = 10, z = 0.5:
    # u = 400 * 2 / 10 + 400 = 480; v = 300 sqrt(3) * (1.5 - 0.5) / 10 + 300 = 351.96 -> 351.
    # Depth level floor((10 - 0.5) * 255 / 79.5) = floor(30.47) = 30: between anchors
    # 0 (255, 50, 30) and 40 (255, 140, 30), (255, 118, 30); darkened by
    # 256 - round(166 * 30 / 254) = 236, over 256: (235, 108, 27).
    image = front_image(_points((10.0, -2.0, 0.5)))
    assert _lit(image) == [(351, 480)]
    assert tuple(image[351, 480]) == (235, 108, 27)
    assert front_indices(_points((10.0, -2.0, 0.5)))[351, 480] == 30


def test_the_optical_axis_and_the_image_corners() -> None:
    # On the axis (x = 0, z = 1.5): (u, v) = (c_x, c_y) = (400, 300). At 45 deg left and
    # 30 deg up the point reaches u = 0, v = 0.
    depth = 20.0
    up = depth / math.sqrt(3.0)
    points = _points((depth, 0.0, 1.5), (depth, depth - 1e-3, 1.5 + up - 1e-3))
    assert _lit(front_image(points)) == [(0, 0), (300, 400)]


def test_bev_crop_bounds_are_half_open_on_the_cells() -> None:
    inside = _points(
        (79.99, 39.99, 0.0),  # far left corner: row 0, column 0
        (0.01, -39.99, 0.0),  # near right corner: row 799, column 799
        (40.0, 0.0, -2.0),  # both height bounds are kept
        (40.0, 1.0, 4.0),
    )
    assert _lit(bev_image(inside)) == [(0, 0), (400, 390), (400, 400), (799, 799)]
    outside = _points(
        (40.0, -40.0, 0.0),  # X_t = 40: column 800
        (80.01, 0.0, 0.0),  # Y_t beyond 80
        (0.0, 0.0, 0.0),  # Y_t = 0: row 800
        (-5.0, 0.0, 0.0),  # behind
        (40.0, 0.0, -2.01),
        (40.0, 0.0, 4.01),
    )
    assert _lit(bev_image(outside)) == []


def test_the_highest_point_in_a_bev_cell_wins_whatever_the_order() -> None:
    column = _points((20.02, 0.02, -1.5), (20.03, 0.03, 3.0), (20.04, 0.04, 0.0))
    top = bev_indices(_points((20.03, 0.03, 3.0)))
    for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2]):
        assert np.array_equal(bev_indices(column[order]), top)


def test_front_view_drops_near_singular_far_and_behind_points() -> None:
    dropped = _points((0.49, 0.0, 1.5), (80.5, 0.0, 1.5), (-10.0, 0.0, 1.5), (0.0, 0.0, 1.5))
    assert _lit(front_image(dropped)) == []
    # v = 300 sqrt(3) * 0.2 / 80 + 300 = 301.3 for the far one.
    kept = _points((0.5, 0.0, 1.5), (80.0, 0.0, 1.3))
    image = front_image(kept)
    assert _lit(image) == [(300, 400), (301, 400)]
    assert tuple(image[300, 400]) == tuple(FRONT_PALETTE[0])  # the nearest level
    assert tuple(image[301, 400]) == tuple(FRONT_PALETTE[254])  # the farthest level


def test_points_outside_the_field_of_view_are_not_drawn() -> None:
    # 45 deg to the side and beyond, and 30 deg above: outside the 90 x 60 deg frustum.
    outside = _points((10.0, 10.01, 1.5), (10.0, -10.01, 1.5), (10.0, 0.0, 1.5 + 5.78))
    assert _lit(front_image(outside)) == []


def test_palettes_keep_black_for_empty_pixels_only() -> None:
    assert tuple(BEV_PALETTE[0]) == BLACK and tuple(FRONT_PALETTE[255]) == BLACK
    assert BEV_PALETTE[1:].any(axis=1).all() and FRONT_PALETTE[:255].any(axis=1).all()
    # Depth colours fade with distance: the farthest is well under half as bright.
    brightness = FRONT_PALETTE[:255].astype(int).sum(axis=1)
    assert brightness[0] > 2 * brightness[254]
