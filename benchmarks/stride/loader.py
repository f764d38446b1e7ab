"""Builds STRIDE Items from a questions file: one item per task row, its frames checked at load.

A row that breaks the release's schema, names frames that are missing or not images, or repeats
another row's matching key is an ItemError naming file, item and field (skipped and listed under
`--on-bad-item skip`). So is a TRJ-5 / TRJ-6 row whose ground truth does not read as waypoints:
the release silently leaves such an item out of the trajectory means; roadeval says so at load.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, ItemProblem
from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.loading import DEFAULT_LIMITS, LoadLimits, LoadReport, collect
from roadeval.benchmarks.stride.frames import FrameFinder
from roadeval.benchmarks.stride.rows import (
    ROW_FIELDS,
    OverLimitRow,
    QuestionsFile,
    RowReader,
    read_questions,
)
from roadeval.benchmarks.stride.tasks import SUITE_NAME, Kind

ANSWER_KINDS = {
    Kind.MCQ: AnswerKind.CHOICE,
    Kind.TRAJECTORY: AnswerKind.WAYPOINTS,
    Kind.JUDGED: AnswerKind.OPEN_TEXT,
    Kind.OPEN_UNJUDGED: AnswerKind.OPEN_TEXT,
}


def image_root_for(questions_file: Path, images: str | Path | None) -> Path:
    """The image root: `images` (relative to the questions file's folder), else that folder."""
    folder = questions_file.parent
    if images is None:
        return folder
    root = Path(images).expanduser()
    return root if root.is_absolute() else folder / root


def suite_version(questions: QuestionsFile) -> str:
    """The file's split name and a digest of its bytes: any change to the file is a new version."""
    digest = hashlib.sha256(questions.path.read_bytes()).hexdigest()[:12]
    return f"{questions.meta.get('split', questions.split.value)}@{digest}"


def _bbox(reader: RowReader, row: dict[str, Any], item_id: str) -> list[float] | None:
    """`bbox_xyxy` as the release draws it: ignored unless a list of at least 4 numbers."""
    value = row.get("bbox_xyxy")
    if not value:
        return None
    if not isinstance(value, list) or len(value) < 4:
        return None
    try:
        return [float(v) for v in value[:4]]
    except (TypeError, ValueError):
        problem = ItemProblem(
            str(reader.questions.path), None, "bbox_xyxy", f"not numbers: {value!r}", item_id
        )
        raise ItemError(problem) from None


def load_items(
    source: Path,
    *,
    images: str | Path | None,
    policy: BadItemPolicy = BadItemPolicy.ERROR,
    limits: LoadLimits = DEFAULT_LIMITS,
) -> LoadReport:
    questions = read_questions(source, limits)
    reader = RowReader(questions)
    finder = FrameFinder(questions.path, image_root_for(questions.path, images), questions.split)
    version = suite_version(questions)
    report = LoadReport()

    def rows() -> Iterator[tuple[int, dict[str, Any] | ItemError]]:
        for index, row in enumerate(questions.tasks):
            if isinstance(row, dict):
                yield index, row
                continue
            field, message = None, "task row is not a JSON object"
            if isinstance(row, OverLimitRow):
                field, message = row.field, row.message
            problem = ItemProblem(str(questions.path), None, field, message, reader.ids[index])
            yield index, ItemError(problem)

    def build(index: int, row: dict[str, Any]) -> Item:
        task = reader.read(index)
        if task.gt_problem is not None:
            problem = ItemProblem(
                str(questions.path), None, "ground_truth", task.gt_problem, task.item_id
            )
            raise ItemError(problem)
        media = finder.frames(task)
        labels = {
            "split": questions.split.value,
            "family": task.family,
            "scoring_type": task.scoring_type,
            "question_format": task.question_format,
        }
        if isinstance(task.raw.get("scenario_cluster"), str) and task.raw["scenario_cluster"]:
            labels["scenario"] = task.raw["scenario_cluster"]
        return Item(
            suite=SUITE_NAME,
            suite_version=version,
            item_id=task.item_id,
            task=task.template,
            question=task.question,
            options=task.choices if task.kind is Kind.MCQ else {},
            answer_kind=ANSWER_KINDS[task.kind],
            reference=task.reference,
            media=media,
            labels=labels,
            extra={
                "kind": task.kind.value,
                "has_target": bool(task.raw.get("object_id") or task.raw.get("bbox_xyxy")),
                "bbox": _bbox(reader, task.raw, task.item_id),
                "match_key": list(task.key),
            },
        )

    collect(
        rows(),
        build,
        policy,
        report,
        file=questions.path,
        known_fields=ROW_FIELDS,
        line_numbers=False,
    )
    return report
