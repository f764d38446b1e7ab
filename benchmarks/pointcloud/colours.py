"""The renders' colours as fixed tables, built with integer arithmetic from fixed anchor colours
(no matplotlib, no float rounding that could differ between machines). Each view is a 256-entry
palette: 255 colour levels plus black for pixels without a point, which no level uses.

Height (BEV, level 0 = z -2 m, 254 = z 4 m): violet, blue, cyan, green, yellow, red.
Depth (front view, level 0 = nearest, 254 = farthest): red, orange, yellow, green, cyan, blue,
darkened linearly with distance from full brightness at level 0 to 90/256 (35 %) at level 254.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

LEVELS = 255
BACKGROUND: tuple[int, int, int] = (0, 0, 0)
# Palette index of "no point": below every height level (BEV keeps the highest), above every
# depth level (the front view keeps the nearest).
BEV_EMPTY = 0
FRONT_EMPTY = LEVELS

Anchors = tuple[tuple[int, tuple[int, int, int]], ...]
# (level, (r, g, b)) anchors, joined by straight lines.
HEIGHT_ANCHORS: Anchors = (
    (0, (72, 40, 170)),
    (64, (40, 110, 235)),
    (110, (20, 200, 210)),
    (150, (80, 220, 60)),
    (200, (250, 220, 30)),
    (254, (240, 40, 30)),
)
DEPTH_ANCHORS: Anchors = (
    (0, (255, 50, 30)),
    (40, (255, 140, 30)),
    (80, (250, 230, 40)),
    (130, (70, 225, 90)),
    (190, (40, 190, 235)),
    (254, (80, 90, 240)),
)
# Brightness at the farthest level, in 1/256: far points fade but stay visible on black.
FAR_BRIGHTNESS = 90


def anchor_table(anchors: Anchors) -> np.ndarray:
    """(255, 3) uint8: anchors joined by straight lines, rounded half up in integers."""
    table = np.zeros((LEVELS, 3), dtype=np.int64)
    for (start, low), (stop, high) in pairwise(anchors):
        span = stop - start
        steps = np.arange(span + 1, dtype=np.int64)[:, None]
        low_c = np.asarray(low, dtype=np.int64)
        delta = np.asarray(high, dtype=np.int64) - low_c
        # low + delta * t / span, rounded half up: (2 * delta * t + span) // (2 * span).
        table[start : stop + 1] = low_c + (2 * delta * steps + span) // (2 * span)
    return table.astype(np.uint8)


def attenuated(table: np.ndarray, far_brightness: int = FAR_BRIGHTNESS) -> np.ndarray:
    """`table` darkened linearly with its level: 256/256 at level 0, far_brightness/256 last."""
    last = LEVELS - 1
    levels = np.arange(LEVELS, dtype=np.int64)
    gain = 256 - ((256 - far_brightness) * levels + last // 2) // last
    return ((table.astype(np.int64) * gain[:, None]) >> 8).astype(np.uint8)


def palette(table: np.ndarray, empty: int) -> np.ndarray:
    """(256, 3) uint8: the 255 levels with BACKGROUND inserted at index `empty`."""
    background = np.asarray([BACKGROUND], dtype=np.uint8)
    return np.ascontiguousarray(np.insert(table, empty, background, axis=0))


HEIGHT_COLOURS = anchor_table(HEIGHT_ANCHORS)
DEPTH_COLOURS = attenuated(anchor_table(DEPTH_ANCHORS))
# Index i of the BEV image is height level i - 1; index i of the front view is depth level i.
BEV_PALETTE = palette(HEIGHT_COLOURS, BEV_EMPTY)
FRONT_PALETTE = palette(DEPTH_COLOURS, FRONT_EMPTY)
