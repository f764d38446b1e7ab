"""Items from the release's label files: tasks 1 and 2 share task_1_2, tasks 4 and 5 share
task_4_5; task 2 and 5 keep only the rows the release's datasets keep."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.item import AnswerKind, Item, Media
from roadeval.benchmarks.loading import DEFAULT_LIMITS, LoadLimits, LoadReport, collect, read_jsonl
from roadeval.benchmarks.roadbench import prompt
from roadeval.benchmarks.roadbench.conditions import read_conditions
from roadeval.benchmarks.roadbench.images import checked_image
from roadeval.benchmarks.roadbench.layout import LABEL_FIELDS, label_files
from roadeval.benchmarks.roadbench.rows import (
    image_name,
    lane_count,
    lane_letters,
    network_truth,
    reference_line,
    release_id,
    road_type,
    row_problem,
)
from roadeval.benchmarks.roadbench.tasks import LANE_ALPHABETS, SUITE_NAME, TASKS

Row = dict[str, Any]
Builder = Callable[[int, Row], list[Item]]


def designation_kept(num_lane: int, laneinfo: list[str], alphabet: str) -> bool:
    """The release's Task2/Task5Dataset filter: lanes present, as many as num_lane, and only
    the task's letters (rows failing it are not part of the task; they are not errors)."""
    if not laneinfo or len(laneinfo) != num_lane:
        return False
    return all(letter in alphabet for lane in laneinfo for letter in lane)


class ItemFactory:
    """Builds the items of one label file; remembers ids to refuse duplicates."""

    def __init__(
        self, labels: Path, suite_version: str, conditions: dict[str, str] | None = None
    ) -> None:
        self.labels = labels
        self.folder = labels.parent
        self.suite_version = suite_version
        # Task 4/5 recording conditions by release id; None when the release ships none.
        self.conditions = conditions
        self.seen: set[str] = set()

    def start_row(self, row: Row, line: int) -> str:
        item_id = release_id(row, self.labels, line)
        if item_id in self.seen:
            raise row_problem(self.labels, line, "id", "duplicate id in this file", row)
        return item_id

    def media(self, name: str, line: int, item_id: str, view: str) -> tuple[Media, tuple[int, int]]:
        return checked_image(self.folder / name, view, self.labels, line, item_id)

    def item(
        self,
        task: str,
        item_id: str,
        question: str,
        reference: Any,
        media: Media,
        size: tuple[int, int],
        extra: dict[str, Any] | None = None,
        labels: dict[str, str] | None = None,
    ) -> Item:
        spec = TASKS[task]
        return Item(
            suite=SUITE_NAME,
            suite_version=self.suite_version,
            item_id=f"{task}:{item_id}",
            task=task,
            question=question,
            answer_kind=AnswerKind.YAML,
            reference=reference,
            media=(media,),
            labels={"task_name": spec.name, "view": spec.view, **(labels or {})},
            extra={"release_id": item_id, "image_size": list(size), **(extra or {})},
        )

    def bev_lanes(self, line: int, row: Row) -> list[Item]:
        item_id = self.start_row(row, line)
        num_lane = lane_count(row, self.labels, line)
        laneinfo = lane_letters(row, self.labels, line)
        coords = reference_line(row, self.labels, line)
        media, (width, height) = self.media(f"{item_id}.png", line, item_id, "bev")
        self.seen.add(item_id)
        extra = {"pixel_line": row["pixel_line"]}
        items = [
            self.item(
                "1",
                item_id,
                prompt.bev_lane_counting_prompt(width, height, coords),
                num_lane,
                media,
                (width, height),
                extra,
            )
        ]
        if designation_kept(num_lane, laneinfo, LANE_ALPHABETS["2"]):
            question = prompt.bev_lane_designation_prompt(width, height, coords, num_lane)
            extra = {**extra, "num_lanes": num_lane}
            items.append(self.item("2", item_id, question, laneinfo, media, (width, height), extra))
        return items

    def roadnet(self, line: int, row: Row) -> list[Item]:
        item_id = self.start_row(row, line)
        coords = reference_line(row, self.labels, line)
        truth = network_truth(row, self.labels, line)
        media, (width, height) = self.media(f"{item_id}.png", line, item_id, "bev")
        self.seen.add(item_id)
        question = prompt.bev_roadnet_prompt(width, height, coords)
        extra = {"pixel_line": row["pixel_line"]}
        return [self.item("3", item_id, question, truth, media, (width, height), extra)]

    def fpv_lanes(self, line: int, row: Row) -> list[Item]:
        item_id = self.start_row(row, line)
        num_lane = lane_count(row, self.labels, line)
        laneinfo = lane_letters(row, self.labels, line)
        media, size = self.media(f"{item_id}.png", line, item_id, "fpv")
        self.seen.add(item_id)
        labels = None
        if self.conditions is not None:
            labels = {"condition": self.conditions.get(item_id, "none")}
        items = [
            self.item(
                "4",
                item_id,
                prompt.fpv_lane_counting_prompt(),
                num_lane,
                media,
                size,
                labels=labels,
            )
        ]
        if designation_kept(num_lane, laneinfo, LANE_ALPHABETS["5"]):
            question = prompt.fpv_lane_designation_prompt(num_lane)
            extra = {"num_lanes": num_lane}
            items.append(self.item("5", item_id, question, laneinfo, media, size, extra, labels))
        return items

    def road_type(self, line: int, row: Row) -> list[Item]:
        item_id = self.start_row(row, line)
        gold = road_type(row, self.labels, line)
        name = image_name(row, item_id, self.labels, line)
        media, size = self.media(name, line, item_id, "fpv")
        self.seen.add(item_id)
        return [self.item("6", item_id, prompt.fpv_road_type_prompt(), gold, media, size)]


def load_items(
    source: Path, suite_version: str, policy: BadItemPolicy, limits: LoadLimits = DEFAULT_LIMITS
) -> LoadReport:
    """Every item of the folders present under `source`, in file order, task by task."""
    report = LoadReport()
    for folder, labels in label_files(source).items():
        conditions = None
        if folder == "task_4_5":
            conditions = read_conditions(labels, policy, report, limits)
        factory = ItemFactory(labels, suite_version, conditions)
        builders: dict[str, Builder] = {
            "task_1_2": factory.bev_lanes,
            "task_3": factory.roadnet,
            "task_4_5": factory.fpv_lanes,
            "task_6": factory.road_type,
        }
        rows = read_jsonl(labels, limits)
        collect(
            rows, builders[folder], policy, report, file=labels, known_fields=LABEL_FIELDS[folder]
        )
    return report
