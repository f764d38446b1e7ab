"""The six released RoadBench tasks: their ids, names, views, folders and lane alphabets."""

from __future__ import annotations

from dataclasses import dataclass

# The suite's name (`RoadBenchSuite.name`), spelled out here only.
SUITE_NAME = "roadbench"


@dataclass(frozen=True)
class TaskSpec:
    """One released task; `folder` is the release folder its label file lives in."""

    task: str
    name: str
    view: str
    folder: str


TASKS: dict[str, TaskSpec] = {
    "1": TaskSpec("1", "bev_lane_counting", "bev", "task_1_2"),
    "2": TaskSpec("2", "bev_lane_designation", "bev", "task_1_2"),
    "3": TaskSpec("3", "bev_roadnet_correction", "bev", "task_3"),
    "4": TaskSpec("4", "fpv_lane_counting", "fpv", "task_4_5"),
    "5": TaskSpec("5", "fpv_lane_designation", "fpv", "task_4_5"),
    "6": TaskSpec("6", "fpv_road_type", "fpv", "task_6"),
}

LANE_COUNTING_TASKS = frozenset({"1", "4"})
LANE_DESIGNATION_TASKS = frozenset({"2", "5"})
ROADNET_TASK = "3"
ROAD_TYPE_TASK = "6"

# The release's English direction terms and the letters it stores them as (matched lower-case).
BEV_DIRECTION_LETTERS: dict[str, str] = {
    "u-turn": "A",
    "left-turn": "B",
    "straight": "C",
    "right-turn": "D",
}
FPV_DIRECTION_LETTERS: dict[str, str] = {**BEV_DIRECTION_LETTERS, "variable": "G"}

# The letters each lane is scored over (task 2: 4-bit vectors, task 5: 5-bit).
LANE_ALPHABETS: dict[str, str] = {"2": "ABCD", "5": "ABCDG"}
DIRECTION_LETTERS: dict[str, dict[str, str]] = {
    "2": BEV_DIRECTION_LETTERS,
    "5": FPV_DIRECTION_LETTERS,
}

ROAD_TYPES: tuple[str, str] = ("main", "service")
# Thresholds of the road-network metrics, as fractions of the image width and height.
THETAS: tuple[float, ...] = (0.1, 0.2, 0.5)


def task_spec(task: str) -> TaskSpec:
    """The spec of task "1".."6"; anything else is a clear error."""
    if task not in TASKS:
        raise ValueError(f"unknown RoadBench task {task!r} (tasks: {', '.join(TASKS)})")
    return TASKS[task]
