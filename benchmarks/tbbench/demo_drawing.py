"""Drawn dashcam-like frames for the demo suite: a road in perspective, the ego car's bonnet, and
vehicles as wireframe 3-D boxes (cyan = Entity #1, magenta = Entity #2), as TB-Bench marks them.

World frame on the ground: x to the right, z forward from the camera, metres; yaw 0 faces +z.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

from PIL import Image, ImageDraw

WIDTH, HEIGHT = 384, 216
FOCAL_PX = 220.0
HORIZON_Y = 84.0
CAMERA_HEIGHT_M = 1.5
NEAR_Z_M = 1.0
LANE_WIDTH_M = 3.5
# Lane lines (x, m): the ego lane is centred on 0, with one lane each side going our way and the
# oncoming lane left of the yellow centre line.
LANE_LINES_M = (-8.75, -5.25, -1.75, 1.75, 5.25)
CENTRE_LINE_M = -5.25
ONCOMING_LANE_X_M = -7.0
# The road runs from behind the ego car to far ahead; dashes stop earlier, where they would blur.
ROAD_NEAR_M, ROAD_FAR_M, DASHES_FAR_M = -10.0, 150.0, 90.0
ENTITY_COLOURS = ((0, 255, 255), (255, 0, 255))
CAR_SIZE_M = (1.8, 1.5, 4.5)  # width, height, length

# Corner pairs joined by a box edge; corners 0-3 on the ground, 4-7 on the roof.
_BOX_EDGES = (
    (0, 1),
    (1, 2),
    (2, 3),
    (3, 0),
    (4, 5),
    (5, 6),
    (6, 7),
    (7, 4),
    (0, 4),
    (1, 5),
    (2, 6),
    (3, 7),
)


@dataclass(frozen=True)
class Vehicle:
    """A vehicle box on the ground plane; `entity` 1 or 2 picks its colour."""

    x: float
    z: float
    yaw_deg: float
    entity: int


@dataclass(frozen=True)
class Frame:
    """One frame: the vehicles, how far the ego car has driven (moves the lane dashes) and the
    ego heading change (swings the road sideways)."""

    vehicles: tuple[Vehicle, ...]
    travelled_m: float = 0.0
    ego_yaw_deg: float = 0.0


def _project(x: float, y: float, z: float) -> tuple[float, float] | None:
    if z < NEAR_Z_M:
        return None
    return WIDTH / 2 + FOCAL_PX * x / z, HORIZON_Y + FOCAL_PX * (CAMERA_HEIGHT_M - y) / z


def _to_camera(x: float, z: float, ego_yaw_deg: float) -> tuple[float, float]:
    # Turning the ego car by yaw turns the world the other way in the camera frame.
    angle = math.radians(ego_yaw_deg)
    return x * math.cos(angle) - z * math.sin(angle), x * math.sin(angle) + z * math.cos(angle)


def _clip_near(points: list[tuple[float, float]], closed: bool) -> list[tuple[float, float]]:
    """Cut a ground polygon or segment (camera x, z) at the near plane (one Sutherland-Hodgman
    pass), so a turned camera still shows the part of the road in front of it."""
    kept: list[tuple[float, float]] = []
    edges = list(zip(points, points[1:] + points[:1], strict=True)) if closed else [tuple(points)]
    for (x0, z0), (x1, z1) in edges:
        if z0 >= NEAR_Z_M:
            kept.append((x0, z0))
        if (z0 >= NEAR_Z_M) != (z1 >= NEAR_Z_M):
            share = (NEAR_Z_M - z0) / (z1 - z0)
            kept.append((x0 + share * (x1 - x0), NEAR_Z_M))
        if not closed and z1 >= NEAR_Z_M:
            kept.append((x1, z1))
    return kept


def _ground_shape(
    world: list[tuple[float, float]], ego_yaw_deg: float, closed: bool
) -> list[tuple[float, float]]:
    camera = [_to_camera(x, z, ego_yaw_deg) for x, z in world]
    projected = (_project(x, 0.0, z) for x, z in _clip_near(camera, closed))
    return [point for point in projected if point is not None]


def _draw_road(draw: ImageDraw.ImageDraw, frame: Frame) -> None:
    left, right = LANE_LINES_M[0] - 0.5, LANE_LINES_M[-1] + 0.5
    surface = [(left, ROAD_NEAR_M), (left, ROAD_FAR_M), (right, ROAD_FAR_M), (right, ROAD_NEAR_M)]
    outline = _ground_shape(surface, frame.ego_yaw_deg, closed=True)
    if len(outline) >= 3:
        draw.polygon(outline, fill=(70, 70, 74))
    dash_m, period_m = 3.0, 9.0
    offset = frame.travelled_m % period_m
    for x_line in LANE_LINES_M:
        colour = (235, 200, 40) if x_line == CENTRE_LINE_M else (235, 235, 235)
        z = ROAD_NEAR_M - offset
        while z < DASHES_FAR_M:
            dash = _ground_shape([(x_line, z), (x_line, z + dash_m)], frame.ego_yaw_deg, False)
            if len(dash) == 2:
                draw.line(dash, fill=colour, width=2)
            z += period_m


def _box_corners(vehicle: Vehicle, ego_yaw_deg: float) -> list[tuple[float, float, float]]:
    width, height, length = CAR_SIZE_M
    yaw = math.radians(vehicle.yaw_deg)
    corners = []
    for y in (0.0, height):
        for dx, dz in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            local_x, local_z = dx * width / 2, dz * length / 2
            x = vehicle.x + local_x * math.cos(yaw) + local_z * math.sin(yaw)
            z = vehicle.z - local_x * math.sin(yaw) + local_z * math.cos(yaw)
            cam_x, cam_z = _to_camera(x, z, ego_yaw_deg)
            corners.append((cam_x, y, cam_z))
    return corners


def _draw_vehicle(draw: ImageDraw.ImageDraw, vehicle: Vehicle, ego_yaw_deg: float) -> None:
    projected = [_project(*corner) for corner in _box_corners(vehicle, ego_yaw_deg)]
    points = [point for point in projected if point is not None]
    if len(points) < len(projected):
        return  # behind or beside the camera: out of view, as in a real dashcam frame
    colour = ENTITY_COLOURS[vehicle.entity - 1]
    for start, end in _BOX_EDGES:
        draw.line([points[start], points[end]], fill=colour, width=2)


def render_frame(frame: Frame) -> bytes:
    """PNG bytes of one frame; identical input gives identical bytes."""
    image = Image.new("RGB", (WIDTH, HEIGHT), (150, 190, 225))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, HORIZON_Y, WIDTH, HEIGHT], fill=(96, 128, 80))
    _draw_road(draw, frame)
    # Far vehicles first so near ones overdraw them.
    for vehicle in sorted(frame.vehicles, key=lambda v: -v.z):
        _draw_vehicle(draw, vehicle, frame.ego_yaw_deg)
    bonnet = [(48, HEIGHT), (84, HEIGHT - 26), (WIDTH - 84, HEIGHT - 26), (WIDTH - 48, HEIGHT)]
    draw.polygon(bonnet, fill=(25, 35, 60))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()
