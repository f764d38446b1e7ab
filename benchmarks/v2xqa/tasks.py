"""V2X-QA's twelve tasks: their view (VS, IS, CO), the images each view shows, and the family
(perception, prediction, reasoning & planning) the release's statistics figure files them under.

Task names and families are read off the release's `assets/dataset_statistics.png` (commit
ee2e9fe); the release's code itself only knows the task ids and their view prefixes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# The suite's name (`V2XQASuite.name`), spelled out here only.
SUITE_NAME = "v2xqa"
LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
# What the release's file names look like: `test/VS1_annotations.jsonl`.
ANNOTATION_SUFFIX = "_annotations.jsonl"


class View(StrEnum):
    """Which viewpoint a task is asked from."""

    VS = "VS"  # vehicle side (ego)
    IS = "IS"  # infrastructure side (roadside unit)
    CO = "CO"  # cooperative: both views


class Family(StrEnum):
    PERCEPTION = "perception"
    PREDICTION = "prediction"
    REASONING = "reasoning-planning"


class ImageSide(StrEnum):
    """The two image roots, named as the media roles; the release field that holds each id."""

    VEHICLE = "vehicle"
    INFRASTRUCTURE = "infrastructure"

    @property
    def id_field(self) -> str:
        return "image_id_vs" if self is ImageSide.VEHICLE else "image_id_is"


# The images each view shows, in the order the release sends them (vehicle, then RSU).
VIEW_IMAGES: dict[View, tuple[ImageSide, ...]] = {
    View.VS: (ImageSide.VEHICLE,),
    View.IS: (ImageSide.INFRASTRUCTURE,),
    View.CO: (ImageSide.VEHICLE, ImageSide.INFRASTRUCTURE),
}


@dataclass(frozen=True)
class TaskSpec:
    task_id: str
    name: str
    family: Family

    @property
    def view(self) -> View:
        return View(self.task_id[:2])

    @property
    def file_name(self) -> str:
        return f"{self.task_id}{ANNOTATION_SUFFIX}"


# In the release's TASK_ORDER.
TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("VS1", "Ego Static Scene", Family.PERCEPTION),
    TaskSpec("VS2", "Ego Visible Agents", Family.PERCEPTION),
    TaskSpec("VS3", "Ego Risk", Family.REASONING),
    TaskSpec("VS4", "Ego Prediction", Family.PREDICTION),
    TaskSpec("IS1", "RSU Global Layout", Family.PERCEPTION),
    TaskSpec("IS2", "RSU Traffic Agents", Family.PERCEPTION),
    TaskSpec("IS3", "RSU Global Risk", Family.REASONING),
    TaskSpec("IS4", "RSU Long Range Cues", Family.REASONING),
    TaskSpec("CO1", "Cooperative Scene Understanding", Family.PERCEPTION),
    TaskSpec("CO2", "Cooperative Visibility", Family.PERCEPTION),
    TaskSpec("CO3", "Cooperative Prediction", Family.PREDICTION),
    TaskSpec("CO4", "Cooperative Planning", Family.REASONING),
)
TASK_IDS: tuple[str, ...] = tuple(spec.task_id for spec in TASKS)
TASK_BY_ID: dict[str, TaskSpec] = {spec.task_id: spec for spec in TASKS}
VIEWS: tuple[View, ...] = tuple(View)


def item_id(task_id: str, sample_id: str) -> str:
    """The suite's item id: (task_id, sample_id) is the release's unique key."""
    return f"{task_id}:{sample_id}"
