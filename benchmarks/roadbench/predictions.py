"""Scoring a released prediction file (rows {"id", "answer", "llm_value", "ground_truth",
"error"}) as the release's metric scripts do, from the rows' own values and errors; optionally
also from our own parse of the raw answers, with the rows where the two parsers disagree."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from roadeval.benchmarks.error_rows import ERROR_ROWS, ErrorRows
from roadeval.benchmarks.errors import ItemError, ItemProblem, SuiteSourceError
from roadeval.benchmarks.loading import read_jsonl
from roadeval.benchmarks.roadbench.answers import read_reply
from roadeval.benchmarks.roadbench.outcomes import Outcome, is_missing, outcome, release_row
from roadeval.benchmarks.roadbench.scoring import ERROR_VALUE, item_values, summarize_task
from roadeval.benchmarks.roadbench.tasks import (
    LANE_COUNTING_TASKS,
    LANE_DESIGNATION_TASKS,
    ROADNET_TASK,
    SUITE_NAME,
    task_spec,
)
from roadeval.benchmarks.suite import PredictionsRequest

FILE_TASK = re.compile(r"task(\d)_")
# Reported ids are capped so that the JSON stays readable for full-size files.
MAX_LISTED_IDS = 50


@dataclass(frozen=True, kw_only=True)
class RoadBenchPredictions(PredictionsRequest):
    """A RoadBench prediction file to score: `task` defaults to the one the file name gives
    (`task<N>_...`); `images` is where task 3 reads each image's size (default: the label
    file's folder); `reparse` also scores our own parse of the rows' raw answers."""

    images: Path | None = None
    reparse: bool = False


@dataclass(frozen=True)
class PredictionRow:
    line: int
    item_id: str
    answer: str
    llm_value: Any
    error: bool
    truth: Any


def resolve_task(task: str | None, predictions: Path) -> str:
    """The task given, else the N of the release's file name `taskN_<model>.jsonl`."""
    if task is None:
        found = FILE_TASK.match(predictions.name)
        if not found:
            raise ValueError(f"cannot tell the task of {predictions.name}; pass the task (1..6)")
        task = found.group(1)
    return task_spec(str(task)).task


def truth_fits(task: str, truth: Any) -> bool:
    if task in LANE_COUNTING_TASKS:
        return isinstance(truth, int | float) and not isinstance(truth, bool)
    if task in LANE_DESIGNATION_TASKS:
        return isinstance(truth, list)
    if task == ROADNET_TASK:
        return isinstance(truth, dict) and all(
            isinstance(truth.get(key), list) for key in ("junctions", "lines")
        )
    return isinstance(truth, str)


def read_rows(path: Path, task: str) -> list[PredictionRow]:
    """Every row; a row the scripts could not score at all is an error naming line and field."""
    rows: list[PredictionRow] = []
    for line, row in read_jsonl(path):
        if isinstance(row, ItemError):
            raise row
        item_id = row.get("id")
        if not isinstance(item_id, str) or not item_id:
            raise ItemError(ItemProblem(str(path), line, "id", "missing or not a string"))
        for key in ("llm_value", "ground_truth"):
            if key not in row:
                raise ItemError(ItemProblem(str(path), line, key, "missing", item_id))
        if not truth_fits(task, row["ground_truth"]):
            message = f"not a task-{task} ground truth: {row['ground_truth']!r}"
            raise ItemError(ItemProblem(str(path), line, "ground_truth", message, item_id))
        answer = row.get("answer")
        rows.append(
            PredictionRow(
                line=line,
                item_id=item_id,
                answer=answer if isinstance(answer, str) else "",
                llm_value=row["llm_value"],
                error=row.get("error") is not None,
                truth=row["ground_truth"],
            )
        )
    return rows


def read_size(path: Path) -> tuple[int, int] | None:
    try:
        with Image.open(path) as opened:
            return opened.size
    except (FileNotFoundError, UnidentifiedImageError, OSError):
        return None


def label_ids(labels: Path) -> set[str]:
    """Release ids in the label file (rows that are not JSON objects are ignored here)."""
    return {
        row["id"]
        for _, row in read_jsonl(labels)
        if isinstance(row, dict) and isinstance(row.get("id"), str)
    }


# Why a row was counted as an error (`release_error`), as `score-predictions` says it.
NO_IMAGE = "image missing (the release cannot open it and drops the row)"
NO_ANSWER = "no answer read (the row's error is set, or llm_value is missing)"
REFUSED = "an answer the release refuses (e.g. a negative count, an unknown road type)"
ANOMALY = "an answer the release would crash on or drop"


def error_reason(read: tuple[Any, bool], result: Outcome, image_missing: bool) -> str:
    """Why a row whose (llm_value, error) reads `read` was counted as an error."""
    value, error = read
    if image_missing:
        return NO_IMAGE
    if error or is_missing(value):
        return NO_ANSWER
    return ANOMALY if result.anomaly is not None else REFUSED


def score_outcomes(
    task: str,
    path: Path,
    rows: Sequence[PredictionRow],
    read: Sequence[tuple[Any, bool]],
    sizes: dict[str, tuple[int, int] | None],
) -> dict[str, Any]:
    """Official metrics and counts for one reading of the rows: each row's (llm_value, error)
    in `read`; the rows counted as errors with why (`ERROR_ROWS`)."""
    results = [
        outcome(task, value, error, row.truth)
        for row, (value, error) in zip(rows, read, strict=True)
    ]
    per_item: list[dict[str, float]] = []
    abnormal: list[str] = []
    why: Counter[str] = Counter()
    for row, result, given in zip(rows, results, read, strict=True):
        size = sizes.get(row.item_id)
        image_missing = task == ROADNET_TASK and size is None
        if image_missing:
            # The release cannot open the image and drops the row: we score the bad answer,
            # whose values do not depend on the image size.
            result = Outcome(outcome(task, None, True, row.truth).value, True, "no image")
            size = (1, 1)
        try:
            values, anomaly = item_values(task, row.truth, result, size)
        except ValueError as exc:
            raise ItemError(
                ItemProblem(str(path), row.line, "ground_truth", str(exc), row.item_id)
            ) from exc
        per_item.append(values)
        if anomaly is not None:
            abnormal.append(row.item_id)
        if values[ERROR_VALUE]:
            why[error_reason(given, result, image_missing)] += 1
    metrics = summarize_task(task, [row.truth for row in rows], results, per_item)
    return {
        "metrics": metrics,
        "errors": int(sum(values[ERROR_VALUE] for values in per_item)),
        ERROR_ROWS: ErrorRows.counted(len(rows), why).as_dict(),
        "abnormal": len(abnormal),
        "abnormal_ids": abnormal[:MAX_LISTED_IDS],
    }


def score_prediction_file(request: RoadBenchPredictions) -> dict[str, Any]:
    """Metrics of a released prediction file; JSON-able. With `reparse`, the same from our parse
    of each row's raw `answer`, and the rows where our (llm_value, error) differs from the row's."""
    labels, predictions = Path(request.labels), Path(request.predictions)
    for path in (labels, predictions):
        if not path.is_file():
            raise SuiteSourceError(f"{path} is not a file")
    task = resolve_task(request.task, predictions)
    rows = read_rows(predictions, task)
    sizes: dict[str, tuple[int, int] | None] = {}
    if task == ROADNET_TASK:
        folder = Path(request.images) if request.images is not None else labels.parent
        sizes = {row.item_id: read_size(folder / f"{row.item_id}.png") for row in rows}
    known = label_ids(labels)
    released = [(row.llm_value, row.error) for row in rows]
    report: dict[str, Any] = {
        "suite": SUITE_NAME,
        "task": task,
        "task_name": task_spec(task).name,
        "rows": len(rows),
        "rows_not_in_labels": sum(1 for row in rows if row.item_id not in known),
        "missing_images": sum(1 for size in sizes.values() if size is None),
        **score_outcomes(task, predictions, rows, released, sizes),
    }
    if request.reparse:
        ours = [release_row(task, read_reply(task, row.answer)) for row in rows]
        disagreeing = [
            row.item_id
            for row, (value, error) in zip(rows, ours, strict=True)
            if value != row.llm_value or error != row.error
        ]
        report["reparse"] = {
            **score_outcomes(task, predictions, rows, ours, sizes),
            "disagreements": len(disagreeing),
            "disagreeing_ids": disagreeing[:MAX_LISTED_IDS],
        }
    return report
