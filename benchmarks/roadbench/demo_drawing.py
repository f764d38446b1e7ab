"""Drawn stand-ins for the release's images: satellite-like road segments and networks (BEV)
and dash-camera views of a road (FPV), painted with PIL so that their labels are true."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from PIL import Image, ImageDraw

GRASS = (86, 112, 74)
ASPHALT = (72, 72, 76)
MARKING = (235, 235, 235)
MEDIAN = (222, 190, 60)
SKY = (150, 185, 225)
LANE_PX = 22
Point2 = tuple[float, float]


def lane_arrow(draw: ImageDraw.ImageDraw, center: Point2, letters: str, scale: float) -> None:
    """A painted lane arrow pointing up the image: a stem with one head per allowed direction
    (A U-turn, B left, C straight, D right, G a variable-lane diamond)."""
    x, y = center
    stem = 9 * scale
    draw.line([(x, y + stem), (x, y)], fill=MARKING, width=max(1, round(2 * scale)))
    heads = {"B": (-1, 0), "C": (0, -1), "D": (1, 0), "A": (-1, 1)}
    for letter in letters:
        if letter == "G":
            r = 4 * scale
            draw.polygon([(x, y - r), (x + r, y), (x, y + r), (x - r, y)], outline=MARKING)
            continue
        dx, dy = heads[letter]
        tip = (x + dx * 7 * scale, y + dy * 7 * scale)
        draw.line([(x, y), tip], fill=MARKING, width=max(1, round(2 * scale)))
        draw.ellipse(
            [tip[0] - 2 * scale, tip[1] - 2 * scale, tip[0] + 2 * scale, tip[1] + 2 * scale],
            fill=MARKING,
        )


def bev_segment(
    size: int, lanes_each_way: Sequence[int], designations: Sequence[str]
) -> Image.Image:
    """A two-way road crossing the image left to right; traffic keeps right, so the lanes going
    east are the lower carriageway, listed left (median side) to right (kerb side)."""
    image = Image.new("RGB", (size, size), GRASS)
    draw = ImageDraw.Draw(image)
    west, east = lanes_each_way
    mid = size // 2
    top, bottom = mid - west * LANE_PX - 3, mid + east * LANE_PX + 3
    draw.rectangle([0, top, size, bottom], fill=ASPHALT)
    draw.line([(0, mid - 2), (size, mid - 2)], fill=MEDIAN, width=2)
    draw.line([(0, mid + 2), (size, mid + 2)], fill=MEDIAN, width=2)
    for k in range(1, east):
        y = mid + 3 + k * LANE_PX
        for x in range(0, size, 24):
            draw.line([(x, y), (x + 12, y)], fill=MARKING, width=2)
    for k in range(1, west):
        y = mid - 3 - k * LANE_PX
        for x in range(0, size, 24):
            draw.line([(x, y), (x + 12, y)], fill=MARKING, width=2)
    # Arrows near the downstream end, rotated so that "up" is east: draw on a turned tile.
    tile = Image.new("RGB", (east * LANE_PX, 40), ASPHALT)
    tile_draw = ImageDraw.Draw(tile)
    for lane, letters in enumerate(designations):
        lane_arrow(tile_draw, (lane * LANE_PX + LANE_PX / 2, 22), letters, 1.0)
    image.paste(tile.rotate(-90, expand=True), (size - 70, mid + 3))
    return image


def bev_network(
    size: tuple[int, int], path: Sequence[Point2], crossings: Sequence[Point2], rng: random.Random
) -> Image.Image:
    """A main road along `path` with side streets crossing it at `crossings`."""
    image = Image.new("RGB", size, GRASS)
    draw = ImageDraw.Draw(image)
    reach = max(size)
    for x, y in crossings:
        angle = rng.uniform(0.9, 2.2)
        dx, dy = math.cos(angle) * reach, math.sin(angle) * reach
        draw.line([(x - dx, y - dy), (x + dx, y + dy)], fill=ASPHALT, width=18)
    draw.line(list(path), fill=ASPHALT, width=30, joint="curve")
    draw.line(list(path), fill=MEDIAN, width=2, joint="curve")
    return image


def fpv_view(
    width: int, height: int, lanes: int, designations: Sequence[str], dark: bool
) -> Image.Image:
    """Looking down a straight road: `lanes` lanes in our direction converge to a vanishing
    point, each with its arrow painted near the camera."""
    image = Image.new("RGB", (width, height), SKY)
    draw = ImageDraw.Draw(image)
    horizon = height * 0.45
    vanish = (width / 2, horizon)
    draw.rectangle([0, horizon, width, height], fill=GRASS)
    road_half = width * 0.46
    left, right = width / 2 - road_half, width / 2 + road_half
    draw.polygon([(left, height), (right, height), vanish], fill=ASPHALT)
    for k in range(lanes + 1):
        x = left + (right - left) * k / lanes
        solid = k in (0, lanes)
        draw.line(
            [(x, height), vanish], fill=MEDIAN if k == 0 else MARKING, width=2 if solid else 1
        )
    for lane, letters in enumerate(designations):
        x = left + (right - left) * (lane + 0.5) / lanes
        lane_arrow(draw, (x, height * 0.85), letters, 1.6)
    if dark:
        image = Image.eval(image, lambda value: value // 3)
    return image


def fpv_road(width: int, height: int, main: bool, rng: random.Random) -> Image.Image:
    """A main road (wide, barriers, gantry) or a service road (narrow, buildings alongside)."""
    lanes = 4 if main else 1
    image = fpv_view(width, height, lanes, ["C"] * lanes, dark=False)
    draw = ImageDraw.Draw(image)
    horizon = round(height * 0.45)
    if main:
        draw.rectangle([0, horizon - 40, width, horizon - 34], fill=(60, 90, 60))
        draw.rectangle(
            [width // 2 - 60, horizon - 46, width // 2 + 60, horizon - 30], fill=(30, 110, 60)
        )
    else:
        for side in (0, 1):
            for _ in range(3):
                w, h = rng.randint(30, 60), rng.randint(40, 90)
                x = rng.randint(0, 60) if side == 0 else width - rng.randint(30, 90)
                draw.rectangle([x, horizon - h, x + w, horizon], fill=(150, 120, 100))
    return image
