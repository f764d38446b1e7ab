"""The reference line drawn on BEV images exactly as the release draws it: a red polyline of
width 5, a dot of radius 5 at each end, and arrows at 1/3 and 2/3 of its length."""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Sequence

from PIL import Image, ImageDraw

LINE_COLOR = (255, 0, 0)
LINE_WIDTH = 5
ARROW_FRACTIONS = (1 / 3, 2 / 3)
# Arrow shaft length and head size are 3 line widths, the head's sides 30 degrees off the shaft.
ARROW_SCALE = 3
ARROW_HEAD_ANGLE = math.pi / 6

Point2 = tuple[float, float]


def draw_arrow(
    draw: ImageDraw.ImageDraw, start: Point2, end: Point2, color: tuple, width: int
) -> None:
    """A shaft from start to end and two head strokes back from end."""
    draw.line([start, end], fill=color, width=width)
    dx, dy = end[0] - start[0], end[1] - start[1]
    length = math.sqrt(dx * dx + dy * dy)
    if length == 0:
        return
    heading = math.atan2(dy / length, dx / length)
    head = width * ARROW_SCALE
    for side in (heading + ARROW_HEAD_ANGLE, heading - ARROW_HEAD_ANGLE):
        tip = (end[0] - head * math.cos(side), end[1] - head * math.sin(side))
        draw.line([end, tip], fill=color, width=width)


def arrow_anchor(points: Sequence[Point2], fraction: float) -> tuple[Point2, Point2] | None:
    """Where the arrow at `fraction` of the line's length starts, and its unit direction (that of
    the segment it falls on); None where the release's search finds no segment."""
    lengths = [
        math.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)
        for (x1, y1), (x2, y2) in itertools.pairwise(points)
    ]
    target = sum_in_order(lengths) * fraction
    walked = 0.0
    for index, length in enumerate(lengths):
        if walked <= target <= walked + length:
            (x1, y1), (x2, y2) = points[index], points[index + 1]
            progress = (target - walked) / length if length > 0 else 0
            anchor = (x1 + progress * (x2 - x1), y1 + progress * (y2 - y1))
            dx, dy = x2 - x1, y2 - y1
            norm = math.sqrt(dx * dx + dy * dy)
            if norm == 0:
                return None
            return anchor, (dx / norm, dy / norm)
        walked += length
    return None


def sum_in_order(values: Sequence[float]) -> float:
    """Left-to-right float sum, as the release accumulates the total length (not math.fsum)."""
    total = 0.0
    for value in values:
        total += value
    return total


def draw_reference_line(image: Image.Image, coords: Sequence[Point2]) -> Image.Image:
    """A copy of `image` with the reference line, end dots and direction arrows drawn on it."""
    image = image.copy()
    draw = ImageDraw.Draw(image)
    points = [(float(x), float(y)) for x, y in coords]
    if len(points) >= 2:
        draw.line(points, fill=LINE_COLOR, width=LINE_WIDTH)
    for x, y in points[:1] + points[-1:]:
        box = [x - LINE_WIDTH, y - LINE_WIDTH, x + LINE_WIDTH, y + LINE_WIDTH]
        draw.ellipse(box, fill=LINE_COLOR)
    if len(points) >= 2:
        shaft = LINE_WIDTH * ARROW_SCALE
        for fraction in ARROW_FRACTIONS:
            found = arrow_anchor(points, fraction)
            if found is None:
                continue
            (x, y), (ux, uy) = found
            draw_arrow(draw, (x, y), (x + shaft * ux, y + shaft * uy), LINE_COLOR, LINE_WIDTH)
    return image


def png_bytes(image: Image.Image) -> bytes:
    """PNG bytes as the release encodes images for its requests (PIL, optimize=True)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()
