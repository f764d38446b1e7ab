"""The eight TB-Bench tasks: short codes, release spellings, and the rule family scoring each."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# The suite's name (`TBBenchSuite.name`), spelled out here only.
SUITE_NAME = "tbbench"


class RuleFamily(StrEnum):
    """How the release scores a task: a distance band, orientation (class or angle), or keywords."""

    DISTANCE = "distance"
    ORIENTATION = "orientation"
    KEYWORDS = "keywords"


@dataclass(frozen=True)
class TaskSpec:
    """One task: our stable code, the dataset's `task` spelling (also its HF split name)."""

    code: str
    release_name: str
    family: RuleFamily


TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("RD", "relative_distance", RuleFamily.DISTANCE),
    TaskSpec("SR", "spatial_reasoning", RuleFamily.KEYWORDS),
    TaskSpec("OR", "orientation_reasoning", RuleFamily.ORIENTATION),
    TaskSpec("EGO-LANE", "other_lane_to_ego", RuleFamily.KEYWORDS),
    TaskSpec("OBJ-LANE", "other_lane_changing", RuleFamily.KEYWORDS),
    TaskSpec("OBJ-TURN", "other_turning", RuleFamily.KEYWORDS),
    TaskSpec("EGO-TURN", "ego_turning", RuleFamily.KEYWORDS),
    TaskSpec("EGO-TRA", "ego_traverse_distance", RuleFamily.DISTANCE),
)

TASK_CODES: tuple[str, ...] = tuple(spec.code for spec in TASKS)

_BY_NAME: dict[str, TaskSpec] = {
    **{spec.release_name: spec for spec in TASKS},
    **{spec.code: spec for spec in TASKS},
}


def find_task(name: str) -> TaskSpec | None:
    """The task for a release spelling (`relative_distance`) or a code (`RD`); exact match only."""
    return _BY_NAME.get(name)


def task_spec(name: str) -> TaskSpec:
    """Like `find_task`, but an unknown name is an error that lists the known ones."""
    spec = find_task(name)
    if spec is None:
        known = ", ".join(f"{s.release_name} ({s.code})" for s in TASKS)
        raise KeyError(f"unknown TB-Bench task {name!r}; known: {known}")
    return spec


# Frames per item (the paper's N): one dashcam image for the three static tasks (KITTI, ONCE),
# eight frames of an Argoverse 2 sequence for the five that need motion.
SINGLE_FRAME_TASKS: frozenset[str] = frozenset({"RD", "SR", "OR"})
CLIP_FRAMES = 8


def frames_of(code: str) -> int:
    """How many frames an item of task `code` shows."""
    return 1 if code in SINGLE_FRAME_TASKS else CLIP_FRAMES
