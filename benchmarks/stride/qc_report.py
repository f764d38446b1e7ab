"""`roadeval qc stride`: the paper's and the release's rules for a questions file, over a source.

The loader already refuses a row that breaks the release's schema (format and scoring type, an
MCQ gold outside its choices, a waypoint gold that does not read), frames that are missing or not
images, and a row whose whole matching key repeats another's; with bad rows skipped, each is filed
under the rule of its field. Over the items and their rows: templates of the split, choices keyed
A, B, C... a model can tell apart, trajectories of the length their template states (TRJ-5: 5
points, TRJ-6: 4), five frames with the query frame last, and the object a question is about
boxed on the query frame, as the paper's protocol shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from roadeval.benchmarks.audit import (
    CHOICES,
    CODES,
    FORMAT,
    FRAMES,
    GOLD,
    IDS,
    Audit,
    AuditedSuite,
    Rule,
    field_root,
    suite_rules,
)
from roadeval.benchmarks.errors import ItemProblem
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.item_checks import (
    begin_audit,
    check_repeated_questions,
    option_problems,
    shown_input,
)
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.source_shape import RowShape, require_shape
from roadeval.benchmarks.stride.frames import GROUP_FRAMES
from roadeval.benchmarks.stride.rows import REPEATED_KEY, item_ids, read_questions
from roadeval.benchmarks.stride.tasks import (
    FAMILIES,
    SCENE_OVERVIEW,
    SCENE_OVERVIEW_MAX_FRAMES,
    TEMPLATES,
    TRAJECTORY_POINTS,
    Split,
    family_of,
)

BOX = "box"
# The choice letters the release uses (`choices` {A..H}), in order.
LETTERS = "ABCDEFGH"
# What the query frame's box is drawn from on nuScenes (the release's formatted scenes).
SELECTED_RENDER = "_selected_vehicle_render.jpg"

RULES = suite_rules(
    "task rows with the release's fields; meta.n_questions the rows' count (warn)",
    "the matching key (id, scene_id, group_id, object_id, question_id, question)",
    Rule(CODES, "template `id` one of the split's; `task` the template's family (warn)"),
    Rule(
        CHOICES,
        f"MCQ choices keyed A, B, C... in order (at most {LETTERS[-1]}), none blank, no two alike",
    ),
    Rule(
        GOLD,
        "MCQ gold among the choices; TRJ-5 and TRJ-6 waypoints that read, 5 and 4 of them; "
        "open questions a reference text",
    ),
    Rule(
        FRAMES,
        f"{GROUP_FRAMES} frames present and readable, the query frame last (SC-6: up to "
        f"{SCENE_OVERVIEW_MAX_FRAMES} scene grids); bundle_size their count (warn)",
    ),
    Rule(
        BOX,
        "an object's question boxes it on the query frame: Waymo's bbox_xyxy x1 < x2, y1 < y2, "
        "inside the frame (partly outside warns); nuScenes' selected-vehicle render",
    ),
)
FIELD_RULES: dict[str, str] = {
    "id": CODES,
    "question_format": CODES,
    "scoring_type": CODES,
    "choices": CHOICES,
    "ground_truth": GOLD,
    "image_paths": FRAMES,
    "image_path": FRAMES,
    "source_group_file": FRAMES,
    "scene_id": FRAMES,
    "bbox_xyxy": BOX,
}
ROW_SHAPE = RowShape(
    "a STRIDE questions file", ("id", "question", "question_format", "ground_truth", "scene_id")
)


def quality_report(suite: AuditedSuite, source: Path) -> QualityReport:
    """Audit the questions file at `source` (or in the folder `source`) and its frames."""
    questions = read_questions(Path(source), suite.limits)
    rows = ((f"tasks[{index}]", row) for index, row in enumerate(questions.tasks))
    require_shape(questions.path, rows, ROW_SHAPE)
    audit = begin_audit(
        suite, Path(source), RULES, FIELD_RULES, classify=_repeated_key, shown_as=questions.path
    )
    stated = questions.meta.get("n_questions")
    if isinstance(stated, int) and stated != len(questions.tasks):
        message = f"meta.n_questions is {stated}; the file has {len(questions.tasks)} task rows"
        audit.warn(FORMAT, None, message, field="meta.n_questions")
    ids, _ = item_ids(questions.tasks)
    raw = {item_id: row for item_id, row in zip(ids, questions.tasks, strict=True)}
    sizes = _FrameSizes()
    for item in audit.items:
        row = raw[item.item_id]
        _check_codes(audit, item, row, questions.split)
        _check_choices(audit, item)
        _check_trajectory(audit, item)
        _check_frames(audit, item, row, questions.split)
        _check_box(audit, item, questions.split, sizes)
    check_repeated_questions(audit, _shown)
    return audit.report()


def _repeated_key(problem: ItemProblem) -> str | None:
    if field_root(problem.field) == "question" and problem.message.startswith(REPEATED_KEY):
        return IDS
    return None


def _shown(item: Item) -> tuple[Any, ...]:
    """What the model sees includes the box drawn on the query frame (Waymo)."""
    return (*shown_input(item), tuple(item.extra.get("bbox") or ()))


def _check_codes(audit: Audit, item: Item, row: Mapping[str, Any], split: Split) -> None:
    if item.task not in TEMPLATES[split]:
        message = f"template {item.task!r} is not one of the {split.value} split's"
        audit.add(CODES, item, message, field="id")
    family = row.get("task")
    expected = FAMILIES[split].get(family_of(item.task))
    if isinstance(family, str) and family and expected is not None and family != expected:
        message = f"task {family!r}: {item.task} is a {expected} template"
        audit.warn(CODES, item, message, field="task")


def _check_choices(audit: Audit, item: Item) -> None:
    if not item.options:
        return
    keys = list(item.options)
    if keys != list(LETTERS[: len(keys)]):
        message = f"choices keyed {', '.join(keys)}; the release keys them A, B, C... in order"
        audit.add(CHOICES, item, message, field="choices")
    for problem in option_problems(item.options):
        audit.add(CHOICES, item, problem, field="choices")


def _check_trajectory(audit: Audit, item: Item) -> None:
    """The loader keeps a gold of any length the waypoint reader accepts (it prefers the stated
    count, else the first valid list): a gold of another length is cut to it in ADE and FDE."""
    stated = TRAJECTORY_POINTS.get(item.task)
    if stated is None or not isinstance(item.reference, list):
        return
    if len(item.reference) != stated:
        message = f"the gold has {len(item.reference)} waypoints; {item.task} states {stated}"
        audit.add(GOLD, item, message, field="ground_truth")


def _check_frames(audit: Audit, item: Item, row: Mapping[str, Any], split: Split) -> None:
    shown = len(item.media)
    if item.task == SCENE_OVERVIEW:
        if not 1 <= shown <= SCENE_OVERVIEW_MAX_FRAMES:
            message = f"{shown} scene grids; SC-6 shows 1 to {SCENE_OVERVIEW_MAX_FRAMES}"
            audit.add(FRAMES, item, message, field="scene_id")
    elif shown != GROUP_FRAMES:
        message = f"{shown} frame(s); a question shows {GROUP_FRAMES}, the query frame last"
        audit.add(FRAMES, item, message, field="image_paths")
    if split is not Split.WAYMO:
        return
    listed = row.get("image_paths")
    anchor = row.get("anchor_image_path") or row.get("image_path")
    if isinstance(listed, list) and listed and isinstance(anchor, str) and anchor != listed[-1]:
        message = f"the query frame {anchor!r} is not the last of image_paths"
        audit.add(FRAMES, item, message, field="image_paths")
    bundle = row.get("bundle_size")
    if isinstance(bundle, int) and isinstance(listed, list) and bundle != len(listed):
        message = f"bundle_size {bundle}, but {len(listed)} image_paths"
        audit.warn(FRAMES, item, message, field="bundle_size")


def _about_an_object(item: Item) -> bool:
    """Whether the question is about one object, which the query frame must show boxed."""
    question = item.question.lower()
    named = "<obj>" in question or "red bounding box" in question
    return named or bool(item.extra.get("has_target"))


def _check_box(audit: Audit, item: Item, split: Split, sizes: _FrameSizes) -> None:
    if not _about_an_object(item) or not item.media:
        return
    query = item.media[-1]
    if split is Split.NUSCENES:
        if not Path(query.path).name.endswith(SELECTED_RENDER):
            message = (
                f"the query frame {Path(query.path).name} has no red box: no "
                f"<group>{SELECTED_RENDER} beside the scene's frames"
            )
            audit.add(BOX, item, message, field="source_group_file")
        return
    bbox = item.extra.get("bbox")
    if bbox is None:
        audit.add(
            BOX, item, "no bbox_xyxy of 4 numbers: the query frame shows no box", field="bbox_xyxy"
        )
        return
    x1, y1, x2, y2 = bbox
    if not (x1 < x2 and y1 < y2):
        audit.add(BOX, item, f"bbox_xyxy {bbox} is not x1 < x2, y1 < y2", field="bbox_xyxy")
        return
    width, height = sizes.of(query.path)
    if x2 <= 0 or y2 <= 0 or x1 >= width or y1 >= height:
        message = f"bbox_xyxy {bbox} lies outside the {width}x{height} query frame"
        audit.add(BOX, item, message, field="bbox_xyxy")
    elif x1 < 0 or y1 < 0 or x2 > width or y2 > height:
        message = f"bbox_xyxy {bbox} reaches outside the {width}x{height} query frame"
        audit.warn(BOX, item, message, field="bbox_xyxy")


class _FrameSizes:
    """Query frames' sizes, each read once from its header (the loader checked the frames)."""

    def __init__(self) -> None:
        self._sizes: dict[str, tuple[int, int]] = {}

    def of(self, path: str) -> tuple[int, int]:
        if path not in self._sizes:
            with Image.open(path) as image:
                self._sizes[path] = image.size
        return self._sizes[path]
