"""score_predictions on hand-made labels and predictions, with hand-computed accuracies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.errors import ItemError
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import PredictionsRequest

LABELS = [
    {"id": "a1", "task": "relative_distance", "problem": "How far?", "solution": "10.0 meters"},
    {"id": "a2", "task": "relative_distance", "problem": "How far?", "solution": "4.0 meters"},
    {"id": "a3", "task": "spatial_reasoning", "problem": "Where?", "solution": "front left"},
    {"id": "a4", "task": "spatial_reasoning", "problem": "Where?", "solution": "back"},
    {"id": "a5", "task": "ego_traverse_distance", "problem": "How far?", "solution": "0.5 meters"},
]
PREDICTIONS = [
    {"id": "a1", "prediction": "They are about 12 meters apart."},  # within 7.5..12.5
    {"id": "a2", "prediction": "5.5 meters"},  # above 5.0: wrong
    {"id": "a3", "prediction": "It is in the front left."},
    # a4 has no prediction: kept, scored wrong, counted
    {"id": "a5", "prediction": "1.1 meters"},  # gold < 1 m: [0, 1.25] accepted
    {"id": "zz", "prediction": "unrelated"},
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_hand_computed_accuracies(tmp_path: Path) -> None:
    labels = _jsonl(tmp_path / "labels.jsonl", LABELS)
    predictions = _jsonl(tmp_path / "pred.jsonl", PREDICTIONS)
    result = get_suite("tbbench").score_predictions(
        PredictionsRequest(labels=labels, predictions=predictions)
    )
    assert json.loads(json.dumps(result)) == result  # JSON-able as it stands
    tasks = result["tasks"]
    assert list(tasks) == ["RD", "SR", "EGO-TRA"]
    assert tasks["RD"]["accuracy"] == 50.0
    assert tasks["SR"]["accuracy"] == 50.0
    assert tasks["EGO-TRA"]["accuracy"] == 100.0
    assert tasks["SR"]["missing_predictions"] == 1
    assert tasks["SR"]["parse_status"] == {"ok": 1, "unparsed": 1}
    assert result["mean_accuracy"] == pytest.approx(200.0 / 3)
    assert result["counts"] == {
        "label_rows": 5,
        "rows_scored": 4,
        "missing_predictions": 1,
        "unknown_prediction_ids": 1,
        "predictions_outside_task_filter": 0,
    }


def test_task_filter(tmp_path: Path) -> None:
    labels = _jsonl(tmp_path / "labels.jsonl", LABELS)
    predictions = _jsonl(tmp_path / "pred.jsonl", PREDICTIONS)
    result = get_suite("tbbench").score_predictions(
        PredictionsRequest(labels=labels, predictions=predictions, task="spatial_reasoning")
    )
    assert list(result["tasks"]) == ["SR"] and result["mean_accuracy"] == 50.0
    assert result["task_filter"] == "SR"
    assert result["counts"]["label_rows"] == 2
    assert result["counts"]["predictions_outside_task_filter"] == 3


def test_parquet_labels_without_ids_use_the_loader_ids(
    tmp_path: Path,
    write_parquet: Callable[..., Path],
    hf_row: Callable[..., dict[str, Any]],
) -> None:
    labels = write_parquet(
        [
            hf_row("other_turning", "left_turn", frames=8),
            hf_row("other_turning", "go_straight", frames=8),
            hf_row("orientation_reasoning", "30 degrees"),
        ]
    )
    predictions = _jsonl(
        tmp_path / "pred.jsonl",
        [
            {"id": "OBJ-TURN-0000", "prediction": "It turns left."},
            # 'no turn' and 'turn right' both match: the release scores several classes wrong.
            {"id": "OBJ-TURN-0001", "prediction": "no turn, or maybe turn right"},
            {"id": "OR-0000", "prediction": "at 350-degree"},  # 40 degrees off 30: wrong
        ],
    )
    result = get_suite("tbbench").score_predictions(
        PredictionsRequest(labels=labels, predictions=predictions)
    )
    assert result["tasks"]["OBJ-TURN"]["accuracy"] == 50.0
    assert result["tasks"]["OR"]["accuracy"] == 0.0
    assert result["mean_accuracy"] == 25.0
    assert result["counts"]["unknown_prediction_ids"] == 0


def test_bad_prediction_rows_are_named(tmp_path: Path) -> None:
    labels = _jsonl(tmp_path / "labels.jsonl", LABELS)
    repeated = _jsonl(tmp_path / "dup.jsonl", [PREDICTIONS[0], PREDICTIONS[0]])
    with pytest.raises(ItemError, match=r"line 2.*duplicate prediction id"):
        get_suite("tbbench").score_predictions(
            PredictionsRequest(labels=labels, predictions=repeated)
        )
    no_text = _jsonl(tmp_path / "none.jsonl", [{"id": "a1"}])
    with pytest.raises(ItemError, match="'prediction': missing"):
        get_suite("tbbench").score_predictions(
            PredictionsRequest(labels=labels, predictions=no_text)
        )


def test_label_without_solution_is_an_error(tmp_path: Path) -> None:
    broken = [*LABELS[:2], {"id": "b", "task": "spatial_reasoning", "problem": "Where?"}]
    labels = _jsonl(tmp_path / "labels.jsonl", broken)
    predictions = _jsonl(tmp_path / "pred.jsonl", PREDICTIONS)
    with pytest.raises(ItemError, match="line 3, item 'b', field 'solution'"):
        get_suite("tbbench").score_predictions(
            PredictionsRequest(labels=labels, predictions=predictions)
        )
