"""The demo suite: a few drawn scenes per task in the Hugging Face layout (one Parquet file per
task split, frames embedded as {bytes, path}); labels follow from each scene's geometry. The
relative-distance questions ask of the spatial-reasoning images, as questions of one clip do."""

from __future__ import annotations

import functools
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from roadeval.benchmarks.tbbench.demo_drawing import (
    LANE_WIDTH_M,
    ONCOMING_LANE_X_M,
    Frame,
    Vehicle,
    render_frame,
)
from roadeval.benchmarks.tbbench.keywords import KEYWORD_TABLES
from roadeval.benchmarks.tbbench.tasks import CLIP_FRAMES, TASKS

ITEMS_PER_TASK = 5
SCHEMA = pa.schema(
    [
        ("image", pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))),
        ("problem", pa.string()),
        ("task", pa.string()),
        ("choice", pa.list_(pa.string())),
        ("solution", pa.string()),
    ],
    # The `datasets` library reads this to decode `image` as a list of images.
    metadata={
        "huggingface": json.dumps(
            {
                "info": {
                    "features": {
                        "image": [{"_type": "Image"}],
                        "problem": {"dtype": "string", "_type": "Value"},
                        "task": {"dtype": "string", "_type": "Value"},
                        "choice": [{"dtype": "string", "_type": "Value"}],
                        "solution": {"dtype": "string", "_type": "Value"},
                    }
                }
            }
        )
    },
)


@dataclass(frozen=True)
class DemoRow:
    frames: tuple[Frame, ...]
    problem: str
    choices: tuple[str, ...]
    solution: str


def bearing_deg(reference: Vehicle, target: Vehicle) -> float:
    """Angle from the reference's facing direction to the target's position, left positive."""
    yaw = math.radians(reference.yaw_deg)
    dx, dz = target.x - reference.x, target.z - reference.z
    forward = dx * math.sin(yaw) + dz * math.cos(yaw)
    left = -(dx * math.cos(yaw) - dz * math.sin(yaw))
    return math.degrees(math.atan2(left, forward))


def spatial_relation(theta: float) -> str:
    """The paper's six sectors for spatial reasoning."""
    if -30 < theta <= 30:
        return "front"
    if 30 < theta <= 90:
        return "front left"
    if -90 < theta <= -30:
        return "front right"
    if 90 < theta <= 150:
        return "back left"
    if -150 < theta <= -90:
        return "back right"
    return "back"


def orientation_relation(theta: float) -> str:
    """The paper's three orientation classes by |theta|."""
    if abs(theta) <= 45:
        return "similar"
    if abs(theta) >= 135:
        return "opposite"
    return "perpendicular"


def _pair(rng: random.Random) -> tuple[Vehicle, Vehicle]:
    first = Vehicle(rng.uniform(-5, 5), rng.uniform(7, 20), rng.uniform(-180, 180), 1)
    second = Vehicle(rng.uniform(-5, 5), rng.uniform(7, 20), rng.uniform(-180, 180), 2)
    return first, second


def _pair_with(
    rng: random.Random, relation: Callable[[float], str], wanted: str
) -> tuple[Vehicle, Vehicle]:
    """A pair whose bearing falls in the wanted class, so every class appears in the demo."""
    while True:
        first, second = _pair(rng)
        if math.hypot(first.x - second.x, first.z - second.z) < 5.0:
            continue  # boxes this close would overlap in the drawing
        if relation(bearing_deg(first, second)) == wanted:
            return first, second


@functools.cache
def _spatial_pairs() -> tuple[tuple[Vehicle, Vehicle], ...]:
    """The spatial-reasoning images' pairs, one per label in turn. The relative-distance items
    ask of the same images, so the demo has questions that share an image (one cluster each,
    `TBBenchSuite.cluster_keys`)."""
    rng = random.Random("tbbench-demo:SR")
    labels = KEYWORD_TABLES["SR"].labels
    wanted = [labels[index % len(labels)] for index in range(ITEMS_PER_TASK)]
    return tuple(_pair_with(rng, spatial_relation, label) for label in wanted)


def _relative_distance(rng: random.Random, index: int) -> DemoRow:
    first, second = _spatial_pairs()[index]
    distance = math.hypot(first.x - second.x, first.z - second.z)
    return DemoRow(
        (Frame((first, second)),),
        "How far apart are Entity #1 and Entity #2?",
        (),
        f"{distance:.2f} meters",
    )


def _spatial_reasoning(rng: random.Random, index: int) -> DemoRow:
    first, second = _spatial_pairs()[index]
    return DemoRow(
        (Frame((first, second)),),
        "From the viewpoint of Entity #1, where is Entity #2 positioned?",
        KEYWORD_TABLES["SR"].labels,
        spatial_relation(bearing_deg(first, second)),
    )


def _orientation_reasoning(rng: random.Random, index: int) -> DemoRow:
    if index % 2:
        first, second = _pair(rng)
        problem = (
            "Looking from the facing direction of Entity #1, at what angle in degrees is Entity #2?"
        )
        theta = bearing_deg(first, second)
        return DemoRow((Frame((first, second)),), problem, (), f"{theta:.0f} degrees")
    labels = KEYWORD_TABLES["OR"].labels
    wanted = labels[(index // 2) % len(labels)]
    first, second = _pair_with(rng, orientation_relation, wanted)
    problem = "Compared with the heading of Entity #1, how is Entity #2 oriented?"
    return DemoRow((Frame((first, second)),), problem, labels, wanted)


def _clip(
    vehicle_at: Callable[[float], Vehicle], travelled: float = 0.0, ego_yaw: float = 0.0
) -> tuple[Frame, ...]:
    """Eight frames; `vehicle_at(t)` places the entity for t from 0 to 1."""
    steps = [i / (CLIP_FRAMES - 1) for i in range(CLIP_FRAMES)]
    return tuple(Frame((vehicle_at(t),), travelled * t, ego_yaw * t) for t in steps)


def _other_lane_to_ego(rng: random.Random, index: int) -> DemoRow:
    lanes = {"front_lane": 0.0, "front_left_lane": -LANE_WIDTH_M, "front_right_lane": LANE_WIDTH_M}
    label = KEYWORD_TABLES["EGO-LANE"].labels[index % 4]
    start = rng.uniform(12, 22)
    if label == "oncoming_traffic_lane":
        frames = _clip(lambda t: Vehicle(ONCOMING_LANE_X_M, start - 8 * t, 180.0, 1))
    else:
        frames = _clip(lambda t: Vehicle(lanes[label], start + 2 * t, 0.0, 1))
    return DemoRow(
        frames,
        "Which lane is Entity #1 driving in, seen from the ego vehicle?",
        KEYWORD_TABLES["EGO-LANE"].labels,
        label,
    )


def _other_lane_changing(rng: random.Random, index: int) -> DemoRow:
    label = KEYWORD_TABLES["OBJ-LANE"].labels[index % 3]
    shift = {
        "no_change": 0.0,
        "left_lane_change": -LANE_WIDTH_M,
        "right_lane_change": LANE_WIDTH_M,
    }[label]
    start = rng.uniform(10, 16)
    frames = _clip(
        lambda t: Vehicle(
            shift * t,
            start + 3 * t,
            12.0 * math.copysign(1, shift) * math.sin(math.pi * t) if shift else 0.0,
            1,
        )
    )
    return DemoRow(
        frames,
        "Does Entity #1 change lanes during the clip?",
        KEYWORD_TABLES["OBJ-LANE"].labels,
        label,
    )


def _other_turning(rng: random.Random, index: int) -> DemoRow:
    label = KEYWORD_TABLES["OBJ-TURN"].labels[index % 3]
    sign = {"left_turn": -1.0, "right_turn": 1.0, "go_straight": 0.0}[label]
    start = rng.uniform(12, 18)
    radius = 8.0

    def place(t: float) -> Vehicle:
        yaw = sign * 90.0 * t
        if not sign:
            return Vehicle(0.0, start + 6 * t, 0.0, 1)
        angle = math.radians(90.0 * t)
        return Vehicle(
            sign * radius * (1 - math.cos(angle)), start + radius * math.sin(angle), yaw, 1
        )

    return DemoRow(
        _clip(place),
        "Is Entity #1 making a turn in this clip?",
        KEYWORD_TABLES["OBJ-TURN"].labels,
        label,
    )


def _ego_turning(rng: random.Random, index: int) -> DemoRow:
    label = KEYWORD_TABLES["EGO-TURN"].labels[index % 3]
    yaw = {"right_turn": 40.0, "left_turn": -40.0, "go_straight": 0.0}[label]
    parked = Vehicle(LANE_WIDTH_M, rng.uniform(12, 20), 0.0, 1)
    return DemoRow(
        _clip(lambda t: parked, 4.0, yaw),
        "What manoeuvre does the ego vehicle perform over these frames?",
        KEYWORD_TABLES["EGO-TURN"].labels,
        label,
    )


def _ego_traverse_distance(rng: random.Random, index: int) -> DemoRow:
    travelled = rng.uniform(0.2, 0.9) if index == 0 else rng.uniform(3, 25)
    ahead = Vehicle(LANE_WIDTH_M, 30.0, 0.0, 1)
    frames = _clip(lambda t: Vehicle(ahead.x, ahead.z - travelled * t, 0.0, 1), travelled)
    return DemoRow(
        frames,
        "How far does the ego vehicle travel between the first and last frame?",
        (),
        f"{travelled:.2f} meters",
    )


_BUILDERS: dict[str, Callable[[random.Random, int], DemoRow]] = {
    "RD": _relative_distance,
    "SR": _spatial_reasoning,
    "OR": _orientation_reasoning,
    "EGO-LANE": _other_lane_to_ego,
    "OBJ-LANE": _other_lane_changing,
    "OBJ-TURN": _other_turning,
    "EGO-TURN": _ego_turning,
    "EGO-TRA": _ego_traverse_distance,
}


def write_demo(root: Path) -> Path:
    """Write `<root>/data/<split>-00000-of-00001.parquet` for each task, as the dataset repository
    lays them out; return `root`, the source to pass to `load`. Same bytes on every call."""
    data_dir = root / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for spec in TASKS:
        rng = random.Random(f"tbbench-demo:{spec.code}")
        rows = [_BUILDERS[spec.code](rng, index) for index in range(ITEMS_PER_TASK)]
        columns = {
            "image": [
                [
                    {
                        "bytes": render_frame(frame),
                        "path": f"{spec.release_name}_{row_index:03d}_{i}.png",
                    }
                    for i, frame in enumerate(row.frames)
                ]
                for row_index, row in enumerate(rows)
            ],
            "problem": [row.problem for row in rows],
            "task": [spec.release_name] * len(rows),
            "choice": [list(row.choices) for row in rows],
            "solution": [row.solution for row in rows],
        }
        table = pa.table(columns, schema=SCHEMA)
        pq.write_table(table, data_dir / f"{spec.release_name}-00000-of-00001.parquet")
    return root
