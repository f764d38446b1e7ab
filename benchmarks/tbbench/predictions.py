"""Scoring a released-style prediction file against label rows, without the images.

Labels are rows of either layout (`id` optional as for the loader, `task`, `problem`, `solution`);
predictions are JSONL rows {"id", "prediction"} with the model's raw text. A label without a
prediction is kept in its task and scored by the bad-answer rule (wrong), and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roadeval.benchmarks.error_rows import ERROR_ROWS, ErrorRows
from roadeval.benchmarks.errors import ItemError
from roadeval.benchmarks.loading import read_jsonl
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus
from roadeval.benchmarks.tbbench.answers import grade, read_answer
from roadeval.benchmarks.tbbench.rows import (
    RowIds,
    find_source_files,
    iter_rows,
    require_text,
    row_error,
)
from roadeval.benchmarks.tbbench.summary import accuracy_percent, unweighted_mean
from roadeval.benchmarks.tbbench.tasks import SUITE_NAME, TASKS, task_spec

LABEL_COLUMNS = ("id", "task", "problem", "solution")
# Why a label row was scored wrong by the bad-answer rule (`ERROR_ROWS`).
NO_PREDICTION = "no prediction for the id"
NOT_READ = "a prediction the release's rules could not read"
MISSING = ParsedAnswer(
    ParseStatus.UNPARSED, None, "prediction:missing", "no prediction for this id"
)


@dataclass(frozen=True)
class LabelRow:
    item_id: str
    task: str
    solution: str


def read_labels(labels: Path) -> list[LabelRow]:
    """Every label row, with ids assigned exactly as the loader assigns them; any bad row raises."""
    found = find_source_files(labels)
    ids = RowIds()
    rows: list[LabelRow] = []
    for path in found.files:
        for line, row in iter_rows(path, found.layout, columns=LABEL_COLUMNS):
            if isinstance(row, ItemError):
                raise row
            item_id, spec = ids.assign(path, line, row)
            require_text(path, line, row, "problem", item_id)
            rows.append(
                LabelRow(item_id, spec.code, require_text(path, line, row, "solution", item_id))
            )
    return rows


def read_predictions(predictions: Path) -> dict[str, str | None]:
    """id -> raw prediction text (None when the row holds null); a repeated id is an error."""
    found: dict[str, str | None] = {}
    for line, row in read_jsonl(predictions):
        if isinstance(row, ItemError):
            raise row
        raw_id = row.get("id")
        if not isinstance(raw_id, str | int) or not str(raw_id):
            raise row_error(predictions, line, "id", "missing or not a string", None)
        item_id = str(raw_id)
        if "prediction" not in row:
            raise row_error(predictions, line, "prediction", "missing", item_id)
        text = row["prediction"]
        if text is not None and not isinstance(text, str):
            raise row_error(predictions, line, "prediction", "expected str or null", item_id)
        if item_id in found:
            raise row_error(predictions, line, "id", "duplicate prediction id", item_id)
        found[item_id] = text
    return found


def score_prediction_file(
    labels: Path, predictions: Path, task: str | None = None
) -> dict[str, Any]:
    """Accuracy x100 per task, their unweighted mean, parse statuses and the join counts."""
    label_rows = read_labels(labels)
    answers = read_predictions(predictions)
    wanted = task_spec(task).code if task is not None else None
    selected = [row for row in label_rows if wanted is None or row.task == wanted]
    per_task: dict[str, list[float]] = {}
    statuses: dict[str, Counter[str]] = {}
    missing: Counter[str] = Counter()
    why: Counter[str] = Counter()
    for row in selected:
        text = answers.get(row.item_id)
        if row.item_id not in answers:
            missing[row.task] += 1
            parsed = MISSING
            why[NO_PREDICTION] += 1
        else:
            parsed = read_answer(row.task, row.solution, text or "")
            why[NOT_READ] += parsed.status is ParseStatus.UNPARSED
        per_task.setdefault(row.task, []).append(float(grade(row.task, row.solution, parsed)))
        statuses.setdefault(row.task, Counter())[parsed.status.value] += 1
    tasks: dict[str, dict[str, Any]] = {
        spec.code: {
            "release_task": spec.release_name,
            "accuracy": accuracy_percent(per_task[spec.code]),
            "items": len(per_task[spec.code]),
            "correct": int(sum(per_task[spec.code])),
            "missing_predictions": missing[spec.code],
            "parse_status": dict(sorted(statuses[spec.code].items())),
        }
        for spec in TASKS
        if spec.code in per_task
    }
    label_ids = {row.item_id for row in label_rows}
    selected_ids = {row.item_id for row in selected}
    return {
        "suite": SUITE_NAME,
        "task_filter": wanted,
        "tasks": tasks,
        "mean_accuracy": unweighted_mean(t["accuracy"] for t in tasks.values()) if tasks else None,
        ERROR_ROWS: ErrorRows.counted(len(selected), why).as_dict(),
        "counts": {
            "label_rows": len(selected),
            "rows_scored": len(selected) - sum(missing.values()),
            "missing_predictions": sum(missing.values()),
            "unknown_prediction_ids": sum(1 for item_id in answers if item_id not in label_ids),
            "predictions_outside_task_filter": sum(
                1 for item_id in answers if item_id in label_ids and item_id not in selected_ids
            ),
        },
    }
