"""Reading a STRIDE `questions.json` (either split, or a Mini file): the file, its split, each task
row checked against the release's schema, and each row's item id.

Ids follow the release's matching key (id, scene_id, group_id, object_id, question_id, question):
the row's `question_id` when it has one (Waymo), else `<id>:<scene_id>:<group_id>[:<object_id>]`;
rows whose short id collides get `~<hash of the whole key>` appended, and a row whose whole key
repeats an earlier row's is an error, since no prediction could tell the two apart.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from roadeval.benchmarks.errors import ItemError, ItemProblem, SuiteSourceError
from roadeval.benchmarks.loading import DEFAULT_LIMITS, LoadLimits, limit_problem, parse_json
from roadeval.benchmarks.source_shape import describe_row, folder_listing
from roadeval.benchmarks.stride.mcq import gold_letter
from roadeval.benchmarks.stride.tasks import (
    QUESTION_FORMATS,
    SCORING_TYPES,
    Kind,
    Split,
    expected_points,
    family_of,
    item_kind,
)
from roadeval.benchmarks.stride.waypoints import Points, parse_points

QUESTIONS_FILE = "questions.json"
# The release's matching key, in its order.
KEY_FIELDS = ("id", "scene_id", "group_id", "object_id", "question_id", "question")
# Every field the released rows carry (nuScenes v6, Waymo v1, the Mini files) or the release's
# code reads (`image_path`); anything else is counted as unknown at load.
ROW_FIELDS: frozenset[str] = frozenset(
    {
        # both splits
        "id", "task", "question", "question_format", "scoring_type", "choices", "ground_truth",
        "scene_id", "group_id", "object_id", "object_reference",
        # nuScenes
        "source_group_file", "scene_description", "nuscenes_scene_name", "nuscenes_log_location",
        # Waymo
        "question_id", "source_dataset", "ground_truth_text", "image_paths", "image_path",
        "history_image_paths", "anchor_image_path", "bbox_xyxy", "frame_name", "frame_index",
        "bundle_id", "bundle_size", "bundle_frame_names", "scenario_cluster",
    }
)  # fmt: skip
# How a row that repeats an earlier row's whole matching key is refused (`roadeval qc` files it
# as a repeated id).
REPEATED_KEY = "repeats the matching key"
EXPECTED_SCORING_TYPE = {
    Kind.MCQ: "mcq",
    Kind.TRAJECTORY: "trajectory_waypoints",
    Kind.JUDGED: "open_oeq_text",
    Kind.OPEN_UNJUDGED: "open_oeq_text",
}


@dataclass(frozen=True)
class OverLimitRow:
    """In a QuestionsFile's `tasks`, in place of a row beyond the load limits (`loading`): the
    field at fault and why. It has no id fields, so nothing reads the row itself."""

    field: str
    message: str


@dataclass(frozen=True)
class QuestionsFile:
    path: Path
    meta: dict[str, Any]
    tasks: list[Any]
    split: Split


@dataclass(frozen=True)
class TaskRow:
    """One checked row. `reference` is the gold as scored: a letter, waypoints, or the reference
    text; None for a waypoint gold the release cannot read (`gt_problem` says why)."""

    index: int
    item_id: str
    raw: dict[str, Any]
    template: str
    question_format: str
    scoring_type: str
    kind: Kind
    question: str
    choices: dict[str, str]
    reference: str | Points | None
    family: str
    key: tuple[Any, ...]
    gt_problem: str | None = None


# The release's questions file, as a message names it.
_LAYOUT = "a STRIDE questions file: a JSON object with a top-level 'tasks' list"


def questions_path(source: Path) -> Path:
    """The questions file: `source` itself, or the `questions.json` (else the one .json file) in
    the folder `source`; absolute, so frames resolve whatever the working directory."""
    source = Path(source)
    if source.is_dir():
        named = source / QUESTIONS_FILE
        if named.is_file():
            return named.absolute()
        found = sorted(p for p in source.glob("*.json") if p.is_file())
        if len(found) != 1:
            what = (
                f"no .json file (found {folder_listing(source)})"
                if not found
                else f"{len(found)} .json files and no questions.json"
            )
            raise SuiteSourceError(f"STRIDE source {source}: {what}; point at the questions file")
        return found[0].absolute()
    if not source.is_file():
        raise SuiteSourceError(f"STRIDE source {source}: no such file or folder")
    return source.absolute()


def read_questions(source: Path, limits: LoadLimits = DEFAULT_LIMITS) -> QuestionsFile:
    """The file's meta, task rows and split; a file that is not the release's layout is refused.

    Each task row is held to `limits` (`loading.LoadLimits`, the row object being level 1): a
    row beyond them is an `OverLimitRow` in `tasks`, one bad row; `meta` beyond them, or a file
    too deep for Python's JSON reader at all, refuses the file."""
    path = questions_path(source)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SuiteSourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except MemoryError:
        raise SuiteSourceError(f"{path}: too large to read into memory") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteSourceError(f"{path}: not UTF-8 at byte {exc.start}") from None
    payload, why = parse_json(text, limits)
    if why is not None:
        raise SuiteSourceError(f"{path}: {why} (expected {_LAYOUT})")
    if not isinstance(payload, dict) or not isinstance(payload.get("tasks"), list):
        raise SuiteSourceError(f"{path}: expected {_LAYOUT}; found {describe_row(payload)}")
    meta: dict[str, Any] = payload["meta"] if isinstance(payload.get("meta"), dict) else {}
    if (found := limit_problem(meta, limits)) is not None:
        raise SuiteSourceError(f"{path}: meta.{found[0]}: {found[1]}")
    tasks: list[Any] = []
    for row in payload["tasks"]:
        found = limit_problem(row, limits) if isinstance(row, dict) else None
        tasks.append(row if found is None else OverLimitRow(*found))
    return QuestionsFile(path, meta, tasks, detect_split(meta, tasks))


def detect_split(meta: dict[str, Any], tasks: list[Any]) -> Split:
    """From meta `split` (the release: a name starting 'waymo' is Waymo) or `source_dataset`; a
    file that names neither is Waymo when its rows carry `image_paths`."""
    named = f"{meta.get('split', '')} {meta.get('source_dataset', '')}".lower()
    if str(meta.get("split", "")).lower().startswith("waymo") or "waymo" in named:
        return Split.WAYMO
    if "nuscenes" in named:
        return Split.NUSCENES
    has_paths = any(isinstance(row, dict) and row.get("image_paths") for row in tasks)
    return Split.WAYMO if has_paths else Split.NUSCENES


def match_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """The release's `index_predictions` key (absent fields are None)."""
    return tuple(row.get(name) for name in KEY_FIELDS)


def _short_id(row: Any, index: int) -> str:
    if not isinstance(row, dict):
        return f"tasks[{index}]"
    question_id = row.get("question_id")
    if isinstance(question_id, str) and question_id:
        return question_id
    parts = [row.get("id"), row.get("scene_id"), row.get("group_id")]
    if row.get("object_id"):
        parts.append(row.get("object_id"))
    return ":".join(str(part) for part in parts)


def item_ids(tasks: list[Any]) -> tuple[list[str], dict[int, int]]:
    """Every row's id, and {index: index of the earlier row} for rows whose whole key repeats."""
    shorts = [_short_id(row, index) for index, row in enumerate(tasks)]
    counts = Counter(shorts)
    ids: list[str] = []
    first_of: dict[str, int] = {}
    repeats: dict[int, int] = {}
    for index, (row, short) in enumerate(zip(tasks, shorts, strict=True)):
        if counts[short] == 1 or not isinstance(row, dict):
            ids.append(short)
            continue
        text = json.dumps(match_key(row), sort_keys=True, default=str, ensure_ascii=False)
        digest = hashlib.sha256(text.encode()).hexdigest()[:10]
        full = f"{short}~{digest}"
        if full in first_of:
            repeats[index] = first_of[full]
        else:
            first_of[full] = index
        ids.append(full)
    return ids, repeats


class RowReader:
    """Checks rows of one questions file against the release's schema."""

    def __init__(self, questions: QuestionsFile) -> None:
        self.questions = questions
        self.ids, self.repeats = item_ids(questions.tasks)

    def read(self, index: int) -> TaskRow:
        row = self.questions.tasks[index]
        item_id = self.ids[index]
        if isinstance(row, OverLimitRow):
            self._fail(item_id, row.field, row.message)
        if not isinstance(row, dict):
            self._fail(item_id, None, "task row is not a JSON object")
        if index in self.repeats:
            earlier = self.ids[self.repeats[index]]
            message = f"{REPEATED_KEY} of tasks[{self.repeats[index]}] ({earlier})"
            self._fail(item_id, "question", message)
        template = self._text(row, "id", item_id)
        fmt = self._text(row, "question_format", item_id).upper()
        if fmt not in QUESTION_FORMATS:
            self._fail(item_id, "question_format", f"{row['question_format']!r} is not MCQ or OEQ")
        scoring_type = self._text(row, "scoring_type", item_id)
        if scoring_type not in SCORING_TYPES:
            self._fail(item_id, "scoring_type", f"{scoring_type!r} is not one of {SCORING_TYPES}")
        kind = item_kind(template, fmt, self.questions.split)
        if EXPECTED_SCORING_TYPE[kind] != scoring_type:
            expected = EXPECTED_SCORING_TYPE[kind]
            message = f"{scoring_type!r} for a {fmt} {template} item (expected {expected!r})"
            self._fail(item_id, "scoring_type", message)
        question = self._text(row, "question", item_id)
        for name in ("scene_id", "group_id"):
            self._text(row, name, item_id)
        for name in ("object_id", "question_id"):
            if row.get(name) is not None and not isinstance(row[name], str):
                self._fail(
                    item_id, name, f"expected a string or null, got {type(row[name]).__name__}"
                )
        choices = self._choices(row, item_id, required=kind is Kind.MCQ)
        reference, problem = self._reference(row, item_id, kind, template, choices)
        family = row.get("task") if isinstance(row.get("task"), str) and row["task"] else None
        return TaskRow(
            index=index,
            item_id=item_id,
            raw=row,
            template=template,
            question_format=fmt,
            scoring_type=scoring_type,
            kind=kind,
            question=question,
            choices=choices,
            reference=reference,
            family=family or family_of(template),
            key=match_key(row),
            gt_problem=problem,
        )

    def _reference(
        self, row: dict[str, Any], item_id: str, kind: Kind, template: str, choices: dict[str, str]
    ) -> tuple[str | Points | None, str | None]:
        if row.get("ground_truth") is None:
            self._fail(item_id, "ground_truth", "missing")
        gold = row["ground_truth"]
        if kind is Kind.MCQ:
            letter = gold_letter(gold)
            if letter not in choices:
                self._fail(item_id, "ground_truth", f"{gold!r} is not one of the choices")
            return letter, None
        if kind is Kind.TRAJECTORY:
            points = parse_points(str(gold), expected_points(template))
            if points is None:
                return None, (
                    "does not read as a waypoint list; the release leaves this item out of the "
                    "trajectory means"
                )
            return points, None
        if not isinstance(gold, str) or not gold.strip():
            self._fail(item_id, "ground_truth", "empty reference text (the release judges none)")
        return gold.strip(), None

    def _choices(self, row: dict[str, Any], item_id: str, *, required: bool) -> dict[str, str]:
        value = row.get("choices")
        if value is None and not required:
            return {}
        if not isinstance(value, dict) or not value:
            self._fail(item_id, "choices", "an MCQ item needs a non-empty {letter: text} object")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            self._fail(item_id, "choices", "every choice must be text")
        return dict(value)

    def _text(self, row: dict[str, Any], name: str, item_id: str) -> str:
        value = row.get(name)
        if value is None:
            self._fail(item_id, name, "missing")
        if not isinstance(value, str) or not value.strip():
            self._fail(item_id, name, f"expected non-empty text, got {value!r}")
        return value

    def _fail(self, item_id: str, field: str | None, message: str) -> NoReturn:
        raise ItemError(ItemProblem(str(self.questions.path), None, field, message, item_id))
