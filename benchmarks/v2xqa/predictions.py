"""Scoring a prediction file against the annotation files, without images.

Prediction rows: {"task_id", "sample_id", "prediction"} and optionally "confidence" (0-1) and
"probs" ({"A".."D"}). The release's own prediction dump is read too: "pred_choice" stands for
"prediction" and "probabilities" for "probs"; other fields are ignored. The prediction is read
by the release's letter parser. A row that matches no question, or repeats one, is a
ValueError naming the file, line and (task_id, sample_id); a file none of whose rows matches
a question (an empty one, say) is a ValueError naming it; a question without a prediction is
scored wrong and counted. Accuracy is a fraction; ECE needs a confidence (given, else the
largest of `probs`), Brier needs `probs`; each is over the rows that have one.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roadeval.benchmarks.error_rows import ERROR_ROWS, ErrorRows
from roadeval.benchmarks.errors import ItemError
from roadeval.benchmarks.loading import read_jsonl
from roadeval.benchmarks.v2xqa.answers import NO_LETTER_RULE, read_letter
from roadeval.benchmarks.v2xqa.calibration import brier_item
from roadeval.benchmarks.v2xqa.rows import AnnotationRow, RowChecker, annotation_files
from roadeval.benchmarks.v2xqa.summary import NO_CONFIDENCE, Outcome, group_metrics
from roadeval.benchmarks.v2xqa.tasks import LETTERS, SUITE_NAME, TASK_BY_ID, TASKS, VIEWS, item_id

MISSING_RULE = "prediction:missing"
# Why a question was scored wrong without a letter read (`ERROR_ROWS`).
NO_PREDICTION = "no prediction for the question"
NO_LETTER = "no letter read from the prediction"


@dataclass(frozen=True)
class Prediction:
    text: str
    confidence: float | None
    probs: dict[str, float] | None


def read_labels(labels: Path) -> list[AnnotationRow]:
    """Every annotation row under `labels` (a folder, or one file), checked; any bad row raises."""
    checker = RowChecker()
    rows: list[AnnotationRow] = []
    for path in annotation_files(Path(labels)):
        for line, row in read_jsonl(path):
            if isinstance(row, ItemError):
                raise row
            rows.append(checker.check(path, line, row))
    return rows


def read_predictions(path: Path, known: set[str]) -> dict[str, Prediction]:
    """item id -> prediction; a row matching no question in `known`, or a repeat, raises."""
    found: dict[str, Prediction] = {}
    for line, row in read_jsonl(path):
        if isinstance(row, ItemError):
            raise row
        where = f"{path}, line {line}"
        task_id, sample_id = row.get("task_id"), row.get("sample_id")
        if not isinstance(task_id, str) or not isinstance(sample_id, str):
            raise ValueError(f"{where}: task_id and sample_id must be strings")
        key = item_id(task_id.strip(), sample_id.strip())
        ids = f"(task_id {task_id!r}, sample_id {sample_id!r})"
        if key not in known:
            raise ValueError(f"{where}: prediction {ids} matches no question in the labels")
        if key in found:
            raise ValueError(f"{where}: a second prediction for {ids}")
        found[key] = _prediction(row, where)
    return found


def _prediction(row: dict[str, Any], where: str) -> Prediction:
    text = row.get("prediction", row.get("pred_choice"))
    if text is not None and not isinstance(text, str):
        raise ValueError(f"{where}: prediction must be a string or null")
    raw_probs = row.get("probs", row.get("probabilities"))
    probs = None
    if raw_probs is not None:
        if not isinstance(raw_probs, dict) or sorted(raw_probs) != list(LETTERS):
            raise ValueError(f"{where}: probs must be an object with the keys A, B, C, D")
        probs = {letter: _unit(raw_probs[letter], where, f"probs.{letter}") for letter in LETTERS}
    confidence = row.get("confidence")
    if confidence is not None:
        confidence = _unit(confidence, where, "confidence")
    elif probs is not None:
        confidence = max(probs.values())
    return Prediction(text or "", confidence, probs)


def _unit(value: Any, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{where}: {name} must be a number, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{where}: {name} must lie in [0, 1], got {value!r}")
    return float(value)


def score_prediction_file(labels: Path, predictions: Path, task: str | None) -> dict[str, Any]:
    """Accuracy for the tasks, views and overall; calibration where available; join counts."""
    if task is not None and task not in TASK_BY_ID:
        raise ValueError(f"unknown V2X-QA task {task!r} (known: {', '.join(TASK_BY_ID)})")
    label_rows = read_labels(labels)
    answers = read_predictions(predictions, {row.item_id for row in label_rows})
    selected = [row for row in label_rows if task is None or row.spec.task_id == task]
    outcomes: dict[str, list[Outcome]] = {}
    rules: dict[str, Counter[str]] = {}
    for row in selected:
        prediction = answers.get(row.item_id)
        if prediction is None:
            letter, rule = None, MISSING_RULE
            outcome = Outcome(row.spec.view.value, row.spec.family.value, 0.0)
        else:
            letter, rule = read_letter(prediction.text)
            probs = prediction.probs
            outcome = Outcome(
                row.spec.view.value,
                row.spec.family.value,
                1.0 if letter == row.gold else 0.0,
                prediction.confidence,
                brier_item(probs, row.gold) if probs is not None else None,
            )
        outcomes.setdefault(row.spec.task_id, []).append(outcome)
        rules.setdefault(row.spec.task_id, Counter())[rule] += 1
    every = [o for spec in TASKS for o in outcomes.get(spec.task_id, [])]
    matched = sum(1 for row in selected if row.item_id in answers)
    if matched == 0:
        scope = f" of task {task}" if task is not None else ""
        raise ValueError(
            f"{predictions}: no prediction matches a question{scope} in {labels} "
            f"({len(answers)} prediction rows, {len(selected)} questions)"
        )
    why: Counter[str] = Counter()
    for counted in rules.values():
        why[NO_PREDICTION] += counted[MISSING_RULE]
        why[NO_LETTER] += counted[NO_LETTER_RULE]
    return {
        "suite": SUITE_NAME,
        "task_filter": task,
        ERROR_ROWS: ErrorRows.counted(len(selected), why).as_dict(),
        "units": "fractions (0-1); the release prints accuracy in percent",
        "tasks": {
            spec.task_id: {
                **_accuracy(outcomes[spec.task_id]),
                "missing_predictions": rules[spec.task_id][MISSING_RULE],
                "unparsed": rules[spec.task_id][NO_LETTER_RULE],
                "parse_rules": dict(sorted(rules[spec.task_id].items())),
            }
            for spec in TASKS
            if spec.task_id in outcomes
        },
        "views": {
            view.value: _group([o for o in every if o.view == view.value])
            for view in VIEWS
            if any(o.view == view.value for o in every)
        },
        "overall": _group(every),
        "counts": {
            "labels": len(selected),
            "predictions": len(answers),
            "matched": matched,
            # A row matching no question stops scoring with an error, so this stays 0.
            "unmatched_predictions": 0,
            "missing_predictions_scored_wrong": len(selected) - matched,
            "predictions_outside_task_filter": len(answers) - matched,
        },
    }


def _accuracy(outcomes: list[Outcome]) -> dict[str, Any]:
    correct = sum(o.correct for o in outcomes)
    return {"accuracy": correct / len(outcomes), "items": len(outcomes), "correct": int(correct)}


def _group(outcomes: list[Outcome]) -> dict[str, Any]:
    """accuracy, items, correct, confidence_items, no_confidence_items (rows without one, or
    with no prediction: never given an invented one); ece and brier (with brier_items) when
    any row has them."""
    if not outcomes:
        return {"accuracy": None, "items": 0, "correct": 0, "confidence_items": 0, NO_CONFIDENCE: 0}
    metrics = {metric: (value, n) for metric, value, n in group_metrics(outcomes)}
    result: dict[str, Any] = {
        **_accuracy(outcomes),
        "confidence_items": int(metrics["confidence_items"][0]),
        NO_CONFIDENCE: int(metrics[NO_CONFIDENCE][0]),
    }
    if "ece" in metrics:
        result["ece"] = metrics["ece"][0]
    if "brier" in metrics:
        result["brier"] = metrics["brier"][0]
        result["brier_items"] = metrics["brier"][1]
    return result
