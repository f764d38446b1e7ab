"""`roadeval qc roadbench`: each released task's label format, its images, ids and repeats.

The loader already refuses a row without an id or with a repeated one, a label that does not
read (lane count, lane letters, WKT), and an image that is missing or not a readable image; with
bad rows skipped, each is filed under the rule of its field. Over the items, what the paper and
the release's datasets and metrics take for granted: lane counts of at least one lane, lanes of
the task's direction letters (A U-turn, B left, C straight, D right, G variable on FPV), each
letter once and sorted, task 3's junctions and lines and every reference line inside the image,
road types `main` or `service`, and no image asked the same question twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import shapely

from roadeval.benchmarks.audit import (
    IDS,
    IMAGES,
    Audit,
    AuditedSuite,
    Rule,
    suite_rules,
)
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.item_checks import begin_audit, check_repeated_questions, short
from roadeval.benchmarks.loading import read_jsonl
from roadeval.benchmarks.quality_report import QualityReport, RuleStatus
from roadeval.benchmarks.roadbench.images import IMAGE_FIELD
from roadeval.benchmarks.roadbench.layout import LABEL_FIELDS, LABEL_FOLDERS, label_files
from roadeval.benchmarks.roadbench.tasks import (
    LANE_ALPHABETS,
    LANE_COUNTING_TASKS,
    LANE_DESIGNATION_TASKS,
    ROAD_TYPE_TASK,
    ROAD_TYPES,
    ROADNET_TASK,
)
from roadeval.benchmarks.source_shape import RowShape, require_shape

TASK_FOLDERS = "tasks"
LABELS = "labels"

RULES = suite_rules(
    "JSON objects with each label file's fields",
    "`id` in each label file",
    Rule(
        TASK_FOLDERS,
        f"the release's label folders ({', '.join(LABEL_FOLDERS)}); other task folders are not "
        "read (warn)",
    ),
    Rule(
        LABELS,
        "lane counts >= 1; lanes of the task's letters (2: ABCD, 5: ABCDG), each letter once "
        "and sorted (warn); road types main or service; junctions, lines and reference lines "
        "inside the image (warn); rows the release leaves out of tasks 2 and 5 (warn)",
    ),
    Rule(IMAGES, "each row's image (<id>.png, task 6's `img`) present and a readable image"),
)
FIELD_RULES: dict[str, str] = {
    "id": IDS,
    IMAGE_FIELD: IMAGES,
    "img": IMAGES,
    "num_lane": LABELS,
    "laneinfo": LABELS,
    "pixel_line": LABELS,
    "ground_truth": LABELS,
    "road_type": LABELS,
    "extra_labels": LABELS,
}
# The designation task each counting task's rows also feed, where the release keeps them.
_DESIGNATION_OF = {"1": "2", "4": "5"}


def quality_report(suite: AuditedSuite, source: Path) -> QualityReport:
    """Audit the release folder `source`: its label files, their rows and images."""
    source = Path(source)
    for folder, path in label_files(source).items():
        shape = RowShape(
            f"RoadBench's {folder} labels", tuple(sorted(LABEL_FIELDS[folder] - {"img"}))
        )
        rows = ((f"line {number}", row) for number, row in read_jsonl(path, suite.limits))
        require_shape(path, rows, shape)
    audit = begin_audit(suite, source, RULES, FIELD_RULES)
    _check_folders(audit, source)
    designated = {(item.task, item.extra["release_id"]) for item in audit.items}
    for item in audit.items:
        _check_labels(audit, item)
        kept_in = _DESIGNATION_OF.get(item.task)
        if kept_in is not None and (kept_in, item.extra["release_id"]) not in designated:
            message = (
                f"left out of task {kept_in}: the release keeps only rows whose laneinfo gives "
                f"num_lane lanes of the letters {LANE_ALPHABETS[kept_in]}"
            )
            audit.warn(LABELS, item, message, field="laneinfo")
    check_repeated_questions(audit)
    return audit.report()


def _check_folders(audit: Audit, source: Path) -> None:
    others = sorted(
        path.name
        for path in source.glob("task_*")
        if path.is_dir() and path.name not in LABEL_FOLDERS
    )
    for name in others:
        message = f"folder {name}/ is not one of the release's task folders: not read"
        audit.warn(TASK_FOLDERS, None, message)


def _check_labels(audit: Audit, item: Item) -> None:
    width, height = item.extra["image_size"]
    if "pixel_line" in item.extra:
        _inside(audit, item, "pixel_line", [item.extra["pixel_line"]], width, height)
    if item.task in LANE_COUNTING_TASKS and item.reference < 1:
        audit.warn(LABELS, item, f"a road of {item.reference} lanes", field="num_lane")
    elif item.task in LANE_DESIGNATION_TASKS:
        for problem, failing in _lane_problems(item.reference):
            status = RuleStatus.FAIL if failing else RuleStatus.WARN
            audit.add(LABELS, item, problem, field="laneinfo", status=status)
    elif item.task == ROADNET_TASK:
        for key in ("junctions", "lines"):
            _inside(audit, item, f"ground_truth.{key}", item.reference[key], width, height)
    elif item.task == ROAD_TYPE_TASK and item.reference not in ROAD_TYPES:
        message = f"road type {short(item.reference)} is not one of {', '.join(ROAD_TYPES)}"
        audit.add(LABELS, item, message, field="road_type")


def _lane_problems(lanes: list[str]) -> list[tuple[str, bool]]:
    """(why, whether it fails) for each lane of a kept designation row: a lane without a letter
    fails (no answer names it); a letter twice or out of order only warns (the metric reads a
    lane as a set of letters)."""
    problems: list[tuple[str, bool]] = []
    for number, lane in enumerate(lanes, start=1):
        if not lane:
            problems.append((f"lane {number} has no direction letter", True))
        elif len(set(lane)) != len(lane):
            problems.append((f"lane {number} ({lane!r}) repeats a letter", False))
        elif list(lane) != sorted(lane):
            problems.append((f"lane {number} ({lane!r}): letters not sorted as released", False))
    return problems


def _inside(audit: Audit, item: Item, field: str, wkts: list[Any], width: int, height: int) -> None:
    """Geometry outside the image cannot be drawn or seen there; the metrics normalise by the
    image's size, so it still scores: a warning."""
    for wkt in wkts:
        xmin, ymin, xmax, ymax = shapely.from_wkt(wkt).bounds
        if xmin < 0 or ymin < 0 or xmax > width or ymax > height:
            message = f"{short(wkt)} reaches outside the {width}x{height} image"
            audit.warn(LABELS, item, message, field=field)
