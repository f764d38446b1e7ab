"""Drawings for the demo: an ego camera view (road layout, the road user ahead, the lane
marking) and a roadside camera seen from above (layout, traffic, the far road user), the road
user the questions ask about in a red box; PIL shapes only, so the same scene gives the same
pixels on every run."""

from __future__ import annotations

from PIL import Image, ImageDraw

from roadeval.benchmarks.v2xqa.demo_scenes import Scene

VEHICLE_SIZE = (320, 180)
INFRASTRUCTURE_SIZE = (320, 240)
_ROAD = (96, 96, 100)
_WHITE = (240, 240, 240)
_ORANGE = (240, 130, 20)
_AGENT_COLOURS = ((40, 90, 200), (150, 30, 30), (230, 200, 40), (30, 160, 80))
BOX_RED = (255, 0, 0)
# The red box's reach from the road user's centre (left/right, up, down) at scale 1.
_BOX_REACH = (34, 28, 18)


def vehicle_view(scene: Scene) -> Image.Image:
    image = Image.new("RGB", VEHICLE_SIZE, (135, 190, 235))
    draw = ImageDraw.Draw(image)
    width, height = VEHICLE_SIZE
    horizon = 72
    draw.rectangle((0, horizon, width, height), fill=(90, 140, 70))
    draw.polygon([(40, height), (280, height), (170, horizon), (150, horizon)], fill=_ROAD)
    if scene.layout == 0:
        draw.rectangle((0, 92, width, 108), fill=_ROAD)
    elif scene.layout == 1:
        for y in range(80, height, 22):
            draw.rectangle((158, y, 162, y + 10), fill=_WHITE)
    elif scene.layout == 2:
        draw.polygon([(280, height), (width, 130), (width, 110), (190, 100)], fill=_ROAD)
    else:
        for x, y in ((120, 150), (135, 120), (145, 95)):
            draw.polygon([(x, y), (x - 6, y + 14), (x + 6, y + 14)], fill=_ORANGE)
    _agent(draw, scene.agent, (160, 100), 1.0)
    _marking(draw, scene.manoeuvre, (160, 150))
    return image


def infrastructure_view(scene: Scene) -> Image.Image:
    image = Image.new("RGB", INFRASTRUCTURE_SIZE, (120, 150, 110))
    draw = ImageDraw.Draw(image)
    width, height = INFRASTRUCTURE_SIZE
    draw.rectangle((130, 0, 190, height), fill=_ROAD)
    if scene.layout == 0:
        draw.rectangle((0, 100, width, 150), fill=_ROAD)
    elif scene.layout == 2:
        draw.polygon([(width, 200), (width, 240), (190, 150), (190, 110)], fill=_ROAD)
    elif scene.layout == 3:
        for y in range(40, 200, 30):
            draw.rectangle((172, y, 186, y + 16), fill=_ORANGE)
    cars = (1, 3, 6, 10)[scene.density]
    for n in range(cars):
        x = 138 if n % 2 == 0 else 156
        y = 222 - 20 * n
        draw.rectangle((x, y, x + 14, y + 12), fill=(40, 90, 200))
    _agent(draw, scene.agent, (160, 22), 0.6)
    return image


def _agent(draw: ImageDraw.ImageDraw, agent: int, centre: tuple[int, int], scale: float) -> None:
    """The road user (car, truck, pedestrian, cyclist) at `centre`, framed by the red box."""
    x, y = centre
    colour = _AGENT_COLOURS[agent]

    def s(value: float) -> int:
        return round(value * scale)

    side, up, down = _BOX_REACH
    draw.rectangle((x - s(side), y - s(up), x + s(side), y + s(down)), outline=BOX_RED, width=2)

    if agent == 0:
        draw.rectangle((x - s(20), y - s(10), x + s(20), y + s(10)), fill=colour)
    elif agent == 1:
        draw.rectangle((x - s(30), y - s(22), x + s(30), y + s(14)), fill=colour)
    elif agent == 2:
        draw.ellipse((x - s(5), y - s(24), x + s(5), y - s(14)), fill=colour)
        draw.line((x, y - s(14), x, y + s(8)), fill=colour, width=max(1, s(4)))
    else:
        for dx in (-12, 12):
            draw.ellipse((x + s(dx) - s(7), y - s(7), x + s(dx) + s(7), y + s(7)), outline=colour)
        draw.line((x - s(12), y, x + s(12), y - s(10)), fill=colour, width=max(1, s(3)))


def _marking(draw: ImageDraw.ImageDraw, manoeuvre: int, centre: tuple[int, int]) -> None:
    x, y = centre
    if manoeuvre == 3:
        draw.rectangle((x - 60, y + 10, x + 60, y + 16), fill=_WHITE)  # a stop line
        return
    draw.rectangle((x - 3, y, x + 3, y + 24), fill=_WHITE)
    if manoeuvre == 0:
        draw.polygon([(x - 9, y), (x + 9, y), (x, y - 12)], fill=_WHITE)
    else:
        direction = -1 if manoeuvre == 1 else 1
        draw.rectangle(
            (min(x, x + 18 * direction), y, max(x, x + 18 * direction), y + 6), fill=_WHITE
        )
        tip = x + 30 * direction
        base = x + 18 * direction
        draw.polygon([(base, y - 6), (base, y + 12), (tip, y + 3)], fill=_WHITE)
