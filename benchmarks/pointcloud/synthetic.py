"""A synthetic LiDAR-like scan for the demo and the tests: a straight three-lane road with kerbs,
pavements and building walls, a few vehicles (boxes) and poles, in the source frame (X forward,
Y left, Z up, the sensor at the origin 1.73 m above the road, as KITTI's). Pure numpy and only
uniform draws plus + - * /, so a seed gives the same points on every machine."""

from __future__ import annotations

import numpy as np

GROUND_Z = -1.73
ROAD_HALF_WIDTH = 5.25
LANE_CENTRES = (-3.5, 0.0, 3.5)
KERB_HEIGHT = 0.15
PAVEMENT_OUTER = 9.0
WALL_Y = 12.0
WALL_HEIGHT = 8.0
POLE_Y = 7.0
POLE_RADIUS = 0.12
POLE_HEIGHT = 5.0
REACH_AHEAD = 80.0
REACH_BEHIND = 40.0
# Share of the points per part (the rest goes to the road).
_SHARES = {"pavement": 0.15, "kerb": 0.04, "wall": 0.14, "vehicle": 0.16, "pole": 0.06}


def synthetic_scan(seed: int, points: int = 120_000) -> np.ndarray:
    """(points, 4) float32 x, y, z, intensity; 3 to 5 vehicles and 2 to 4 poles placed by
    `seed`, denser near the sensor as a spinning LiDAR's returns are."""
    if points < 100:
        raise ValueError(f"a synthetic scan needs at least 100 points, not {points}")
    rng = np.random.default_rng(seed)
    counts = {part: int(points * share) for part, share in _SHARES.items()}
    counts["road"] = points - sum(counts.values())
    parts = [
        _road(rng, counts["road"]),
        _pavement(rng, counts["pavement"]),
        _kerbs(rng, counts["kerb"]),
        _walls(rng, counts["wall"]),
        _vehicles(rng, counts["vehicle"]),
        _poles(rng, counts["pole"]),
    ]
    return np.concatenate(parts).astype(np.float32)


def _forward(rng: np.random.Generator, n: int) -> np.ndarray:
    """Distances along the road, denser near 0 (squared uniform), 2/3 ahead and 1/3 behind."""
    reach = rng.random(n) ** 2
    ahead = rng.random(n) < 2 / 3
    return np.where(ahead, reach * REACH_AHEAD, -reach * REACH_BEHIND)


def _uniform(rng: np.random.Generator, low: float, high: float, n: int) -> np.ndarray:
    return low + (high - low) * rng.random(n)


def _side(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.where(rng.random(n) < 0.5, -1.0, 1.0)


def _columns(x: np.ndarray, y: np.ndarray, z: np.ndarray, intensity: np.ndarray) -> np.ndarray:
    return np.stack([x, y, z, intensity], axis=1)


def _road(rng: np.random.Generator, n: int) -> np.ndarray:
    x = _forward(rng, n)
    y = _uniform(rng, -ROAD_HALF_WIDTH, ROAD_HALF_WIDTH, n)
    z = GROUND_Z + _uniform(rng, -0.02, 0.02, n)
    # Lane markings (15 cm lines between the lanes) return brighter than asphalt.
    marking = np.abs(np.abs(y) - 1.75) < 0.075
    return _columns(x, y, z, np.where(marking, 0.85, 0.2))


def _pavement(rng: np.random.Generator, n: int) -> np.ndarray:
    y = _side(rng, n) * _uniform(rng, ROAD_HALF_WIDTH, PAVEMENT_OUTER, n)
    z = GROUND_Z + KERB_HEIGHT + _uniform(rng, -0.02, 0.02, n)
    return _columns(_forward(rng, n), y, z, np.full(n, 0.3))


def _kerbs(rng: np.random.Generator, n: int) -> np.ndarray:
    y = _side(rng, n) * ROAD_HALF_WIDTH
    z = GROUND_Z + _uniform(rng, 0.0, KERB_HEIGHT, n)
    return _columns(_forward(rng, n), y, z, np.full(n, 0.4))


def _walls(rng: np.random.Generator, n: int) -> np.ndarray:
    y = _side(rng, n) * WALL_Y
    z = GROUND_Z + KERB_HEIGHT + _uniform(rng, 0.0, WALL_HEIGHT, n)
    return _columns(_forward(rng, n), y, z, np.full(n, 0.5))


def _vehicles(rng: np.random.Generator, n: int) -> np.ndarray:
    """3 to 5 boxes in distinct (lane, 10 m slot) places, points on the four sides and the top
    in proportion to their areas."""
    slots = [(lane, 8.0 + 10.0 * step) for lane in LANE_CENTRES for step in range(6)]
    chosen = rng.choice(len(slots), size=int(rng.integers(3, 6)), replace=False)
    owner = rng.integers(0, len(chosen), n)
    out = np.empty((n, 4))
    for index, slot in enumerate(chosen):
        lane, ahead = slots[int(slot)]
        length, width, height = (
            _uniform(rng, 3.8, 4.8, 1)[0],
            _uniform(rng, 1.7, 1.9, 1)[0],
            _uniform(rng, 1.4, 1.7, 1)[0],
        )
        centre = (ahead + _uniform(rng, -1.5, 1.5, 1)[0], lane + _uniform(rng, -0.3, 0.3, 1)[0])
        mine = np.flatnonzero(owner == index)
        out[mine] = _box(rng, len(mine), centre, (length, width, height))
    return out


def _box(
    rng: np.random.Generator,
    n: int,
    centre: tuple[float, float],
    size: tuple[float, float, float],
) -> np.ndarray:
    length, width, height = size
    bottom = GROUND_Z + 0.25
    # Faces: front/back (width x height), left/right (length x height), top (length x width).
    areas = np.array(
        [width * height, width * height, length * height, length * height, length * width]
    )
    face = np.searchsorted(np.cumsum(areas) / areas.sum(), rng.random(n), side="right")
    face = np.minimum(face, 4)
    u, v = rng.random(n) - 0.5, rng.random(n)
    x = np.select(
        [face == 0, face == 1, face == 4], [length / 2, -length / 2, u * length], u * length
    )
    y = np.select([face == 2, face == 3], [width / 2, -width / 2], u * width)
    y = np.where(face == 4, (v - 0.5) * width, y)
    z = np.where(face == 4, bottom + height, bottom + v * height)
    return _columns(centre[0] + x, centre[1] + y, z, np.full(n, 0.6))


def _poles(rng: np.random.Generator, n: int) -> np.ndarray:
    """2 to 4 round poles on the pavements; the circle by its rational parametrisation
    ((1 - t^2) / (1 + t^2), 2t / (1 + t^2)), which needs no sin or cos."""
    count = int(rng.integers(2, 5))
    bases = np.stack([_uniform(rng, 5.0, 70.0, count), _side(rng, count) * POLE_Y], axis=1)
    owner = rng.integers(0, count, n)
    t = _uniform(rng, -1.0, 1.0, n)
    sign = _side(rng, n)
    denominator = 1.0 + t * t
    x = bases[owner, 0] + POLE_RADIUS * sign * (1.0 - t * t) / denominator
    y = bases[owner, 1] + POLE_RADIUS * sign * 2.0 * t / denominator
    z = GROUND_Z + KERB_HEIGHT + _uniform(rng, 0.0, POLE_HEIGHT, n)
    return _columns(x, y, z, np.full(n, 0.7))
