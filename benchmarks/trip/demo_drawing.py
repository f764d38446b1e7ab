"""PIL drawings for the demo's image items: lanes, pavement arrows, centre lines, signs, signals.

No text is drawn, so no font enters the pixels; every coordinate is an integer, so the same call
gives the same pixels everywhere, and the demo's answers are read off the drawing alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PIL import Image, ImageDraw

SIZE = 512
LANE_WIDTH = 80
_ASPHALT = (88, 88, 92)
_GRASS = (96, 150, 82)
_SKY = (186, 214, 236)
_WHITE = (245, 245, 245)
_YELLOW = (240, 196, 32)
_RED = (200, 24, 30)
_DARK_LAMP = (52, 52, 52)

Point = tuple[int, int]


def one_way_road(lanes: int, arrows: Sequence[str] = ()) -> Image.Image:
    """A carriageway seen from above, traffic moving up; optional pavement arrows, left to right.

    Arrow names: straight, left, right, straight-left, straight-right.
    """
    image = Image.new("RGB", (SIZE, SIZE), _GRASS)
    draw = ImageDraw.Draw(image)
    left = (SIZE - lanes * LANE_WIDTH) // 2
    right = left + lanes * LANE_WIDTH
    draw.rectangle((left - 12, 0, right + 12, SIZE), fill=_ASPHALT)
    for x in (left, right):
        draw.rectangle((x - 3, 0, x + 3, SIZE), fill=_WHITE)
    for lane in range(1, lanes):
        _dashed_vertical(draw, left + lane * LANE_WIDTH, _WHITE)
    for lane, arrow in enumerate(arrows):
        _pavement_arrow(draw, left + lane * LANE_WIDTH + LANE_WIDTH // 2, arrow)
    return image


def two_way_road(centre_line: str) -> Image.Image:
    """Two opposing lanes seen from above, with the named centre line between them.

    Centre lines: double-solid-yellow, single-broken-yellow.
    """
    image = Image.new("RGB", (SIZE, SIZE), _GRASS)
    draw = ImageDraw.Draw(image)
    left, right, centre = SIZE // 2 - 100, SIZE // 2 + 100, SIZE // 2
    draw.rectangle((left - 12, 0, right + 12, SIZE), fill=_ASPHALT)
    for x in (left, right):
        draw.rectangle((x - 3, 0, x + 3, SIZE), fill=_WHITE)
    if centre_line == "double-solid-yellow":
        for x in (centre - 8, centre + 8):
            draw.rectangle((x - 3, 0, x + 3, SIZE), fill=_YELLOW)
    elif centre_line == "single-broken-yellow":
        _dashed_vertical(draw, centre, _YELLOW)
    else:
        raise ValueError(f"unknown centre line {centre_line!r}")
    return image


def road_sign(shape: str) -> Image.Image:
    """A sign on a post against the sky. Shapes: octagon (red), inverted-triangle (white, red
    border), pentagon (yellow-green, point up)."""
    image = Image.new("RGB", (SIZE, SIZE), _SKY)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 420, SIZE, SIZE), fill=_GRASS)
    draw.rectangle((248, 250, 264, 470), fill=(120, 120, 120))
    centre, radius = (256, 190), 130
    if shape == "octagon":
        outline = _regular_polygon(centre, radius, 8, 22.5)
        draw.polygon(outline, fill=_WHITE)
        draw.polygon(_regular_polygon(centre, radius - 10, 8, 22.5), fill=_RED)
    elif shape == "inverted-triangle":
        draw.polygon(_regular_polygon(centre, radius, 3, 90), fill=_RED)
        draw.polygon(_regular_polygon(centre, radius - 36, 3, 90), fill=_WHITE)
    elif shape == "pentagon":
        draw.polygon(_regular_polygon(centre, radius, 5, -90), fill=(196, 222, 40))
    else:
        raise ValueError(f"unknown sign shape {shape!r}")
    return image


def signal_head(indication: str) -> Image.Image:
    """A vertical three-lamp signal (red top, amber, green bottom) with one indication lit:
    red, amber, green, or green-left-arrow (the bottom lamp dark but for a green arrow)."""
    image = Image.new("RGB", (SIZE, SIZE), _SKY)
    draw = ImageDraw.Draw(image)
    draw.rectangle((246, 440, 266, SIZE), fill=(70, 70, 70))
    draw.rounded_rectangle((176, 40, 336, 440), radius=24, fill=(24, 24, 24))
    lamps = {
        "red": (120, (230, 30, 30)),
        "amber": (240, (250, 170, 20)),
        "green": (360, (40, 220, 90)),
    }
    for name, (y, colour) in lamps.items():
        lit = indication == name
        draw.ellipse((206, y - 50, 306, y + 50), fill=colour if lit else _DARK_LAMP)
    if indication == "green-left-arrow":
        arrow = [(216, 360), (252, 324), (252, 346), (296, 346), (296, 374), (252, 374), (252, 396)]
        draw.polygon(arrow, fill=(40, 220, 90))
    elif indication not in lamps:
        raise ValueError(f"unknown indication {indication!r}")
    return image


def intersection(leg_bearings: Sequence[int]) -> Image.Image:
    """An at-grade intersection seen from above, one road leg per bearing (degrees, 0 = north,
    clockwise), each running from the centre to the image edge."""
    image = Image.new("RGB", (SIZE, SIZE), _GRASS)
    draw = ImageDraw.Draw(image)
    centre = SIZE // 2
    for bearing in leg_bearings:
        radians = math.radians(bearing)
        end = (round(centre + 400 * math.sin(radians)), round(centre - 400 * math.cos(radians)))
        draw.line([(centre, centre), end], fill=_ASPHALT, width=90)
    draw.ellipse((centre - 45, centre - 45, centre + 45, centre + 45), fill=_ASPHALT)
    return image


def _dashed_vertical(draw: ImageDraw.ImageDraw, x: int, colour: tuple[int, int, int]) -> None:
    for top in range(10, SIZE, 70):
        draw.rectangle((x - 3, top, x + 3, top + 40), fill=colour)


def _pavement_arrow(draw: ImageDraw.ImageDraw, x: int, kind: str) -> None:
    """A white arrow painted in a lane centred on x; heads are triangles, shafts rectangles."""
    base, junction, top = 420, 330, 250
    straight = kind in ("straight", "straight-left", "straight-right")
    turns = {
        "left": kind in ("left", "straight-left"),
        "right": kind in ("right", "straight-right"),
    }
    if not straight and not any(turns.values()):
        raise ValueError(f"unknown arrow {kind!r}")
    shaft_top = top + 30 if straight else junction - 6
    draw.rectangle((x - 6, shaft_top, x + 6, base), fill=_WHITE)
    if straight:
        draw.polygon([(x, top), (x - 18, top + 32), (x + 18, top + 32)], fill=_WHITE)
    for side, wanted in turns.items():
        if not wanted:
            continue
        sign = -1 if side == "left" else 1
        tip = x + sign * 34
        draw.rectangle(
            (min(x, tip - sign * 14), junction - 6, max(x, tip - sign * 14), junction + 6),
            fill=_WHITE,
        )
        draw.polygon(
            [(tip, junction), (tip - sign * 16, junction - 16), (tip - sign * 16, junction + 16)],
            fill=_WHITE,
        )


def _regular_polygon(centre: Point, radius: int, sides: int, start_degrees: float) -> list[Point]:
    """Vertices of a regular polygon, rounded to whole pixels so the drawing is exact."""
    cx, cy = centre
    return [
        (
            round(cx + radius * math.cos(math.radians(start_degrees + index * 360 / sides))),
            round(cy + radius * math.sin(math.radians(start_degrees + index * 360 / sides))),
        )
        for index in range(sides)
    ]
