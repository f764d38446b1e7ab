"""PIL drawings for the demo: 2x3 multi-camera grids of a straight road with one lead vehicle,
and the query frame with the red box around it, as the release's nuScenes renders show it.

Every coordinate is an integer and no text is drawn, so the same call gives the same pixels."""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw

PANEL_W, PANEL_H = 160, 96
GRID_COLUMNS, GRID_ROWS = 3, 2
HORIZON = 38
FRONT_PANEL = (1, 0)  # column, row of CAM_FRONT in the grid
_SKY = (176, 204, 230)
_GRASS = (104, 146, 88)
_ASPHALT = (86, 86, 90)
_WHITE = (240, 240, 240)
_CAR = (40, 70, 170)
_RED = (255, 0, 0)


@dataclass(frozen=True)
class Box:
    left: int
    top: int
    right: int
    bottom: int


def vehicle_box(distance_m: float, lateral: int) -> Box:
    """Where a car `distance_m` ahead, one lane left (-1), centred (0) or right (1), appears in
    the grid (CAM_FRONT, the top-middle panel)."""
    scale = 10.0 / max(distance_m, 1.0)
    width = max(4, round(36 * scale))
    height = max(3, round(24 * scale))
    centre_x = FRONT_PANEL[0] * PANEL_W + PANEL_W // 2 + lateral * round(34 * scale)
    bottom = HORIZON + max(4, round(240 / max(distance_m, 1.0)))
    return Box(centre_x - width // 2, bottom - height, centre_x + width // 2, bottom)


def _panel(draw: ImageDraw.ImageDraw, column: int, row: int, dash_phase: int) -> None:
    x0, y0 = column * PANEL_W, row * PANEL_H
    draw.rectangle((x0, y0, x0 + PANEL_W - 1, y0 + HORIZON), fill=_SKY)
    draw.rectangle((x0, y0 + HORIZON, x0 + PANEL_W - 1, y0 + PANEL_H - 1), fill=_GRASS)
    centre = x0 + PANEL_W // 2
    road = [
        (centre - 8, y0 + HORIZON),
        (centre + 8, y0 + HORIZON),
        (centre + 70, y0 + PANEL_H - 1),
        (centre - 70, y0 + PANEL_H - 1),
    ]
    draw.polygon(road, fill=_ASPHALT)
    for top in range(HORIZON + dash_phase, PANEL_H, 14):
        draw.rectangle(
            (centre - 1, y0 + top, centre + 1, y0 + min(top + 6, PANEL_H - 1)), fill=_WHITE
        )
    draw.rectangle((x0, y0, x0 + PANEL_W - 1, y0 + PANEL_H - 1), outline=(20, 20, 20))


def grid_frame(frame: int, distance_m: float, lateral: int) -> Image.Image:
    """One 2x3 grid: the road in every camera, the lead car in CAM_FRONT."""
    image = Image.new("RGB", (PANEL_W * GRID_COLUMNS, PANEL_H * GRID_ROWS), _SKY)
    draw = ImageDraw.Draw(image)
    for row in range(GRID_ROWS):
        for column in range(GRID_COLUMNS):
            _panel(draw, column, row, (frame * 5) % 14)
    box = vehicle_box(distance_m, lateral)
    draw.rectangle((box.left, box.top, box.right, box.bottom), fill=_CAR)
    return image


def with_red_box(image: Image.Image, box: Box) -> Image.Image:
    """The query frame as the release's selected-vehicle render shows it."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    draw.rectangle(
        (box.left - 3, box.top - 3, box.right + 3, box.bottom + 3), outline=_RED, width=2
    )
    return out
