"""`score-predictions` for V2X-QA: accuracy per task, view and overall, ECE and Brier on a case
worked out by hand, "no confidence" counted, and bad prediction files as clear errors; through
the suite and through the real CLI (typer's CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from v2xqa_support import RowFactory

import roadeval.benchmarks.v2xqa  # noqa: F401  (registers the suite for the CLI)
from roadeval.benchmarks.suite import PredictionsRequest
from roadeval.benchmarks.v2xqa.suite import V2XQASuite
from roadeval.flows.cli.main import app

runner = CliRunner()
SUITE = V2XQASuite()

# (task, sample, gold) of the labels; the predictions below are scored against them by hand.
LABELS = [
    ("VS1", "000001", "B"),
    ("VS1", "000002", "A"),
    ("IS2", "000001", "C"),
    ("IS2", "000002", "B"),
    ("CO3", "000001", "D"),
    ("CO3", "000002", "D"),
]
PREDICTIONS: list[dict[str, Any]] = [
    # right, confidence as given
    {"task_id": "VS1", "sample_id": "000001", "prediction": "B", "confidence": 0.9},
    # "a car" reads as A by the release's first standalone letter: right
    {"task_id": "VS1", "sample_id": "000002", "prediction": "a car", "confidence": 0.6},
    # wrong; confidence = max(probs) = 0.5 (on the bin edge 6/12); Brier .01+.01+.49+.25
    {
        "task_id": "IS2",
        "sample_id": "000001",
        "prediction": "D",
        "probs": {"A": 0.1, "B": 0.1, "C": 0.3, "D": 0.5},
    },
    # no letter: wrong, no confidence
    {"task_id": "IS2", "sample_id": "000002", "prediction": "no idea"},
    # CO3:000001 has no prediction: wrong, counted; CO3:000002 right, Brier .0625+.0625
    {
        "task_id": "CO3",
        "sample_id": "000002",
        "prediction": " D\n",
        "probs": {"A": 0.0, "B": 0.0, "C": 0.25, "D": 0.75},
    },
]


def write_labels(folder: Path, row: RowFactory, labels: list[tuple[str, str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[str]] = {}
    for task_id, sample_id, gold in labels:
        line = json.dumps(row(task_id, sample_id, selected_option_id=gold))
        by_task.setdefault(task_id, []).append(line)
    for task_id, lines in by_task.items():
        (folder / f"{task_id}_annotations.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def write_predictions(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def labels(tmp_path: Path, row: RowFactory) -> Path:
    return write_labels(tmp_path / "labels", row, LABELS)


def cli(labels: Path, predictions: Path, *extra: str) -> Any:
    return runner.invoke(
        app,
        [
            "score-predictions",
            "--suite",
            "v2xqa",
            "--labels",
            str(labels),
            "--predictions",
            str(predictions),
            *extra,
        ],
    )


def test_accuracy_ece_and_brier_by_hand_through_the_cli(labels: Path, tmp_path: Path) -> None:
    predictions = write_predictions(tmp_path / "p.jsonl", PREDICTIONS)
    result = cli(labels, predictions)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    tasks = report["tasks"]
    assert list(tasks) == ["VS1", "IS2", "CO3"]
    assert [tasks[t]["accuracy"] for t in tasks] == [1.0, 0.0, 0.5]
    assert tasks["VS1"]["parse_rules"] == {"letter:exact": 1, "letter:first-standalone": 1}
    assert (tasks["IS2"]["unparsed"], tasks["CO3"]["missing_predictions"]) == (1, 1)

    views, overall = report["views"], report["overall"]
    assert {v: views[v]["accuracy"] for v in views} == {"VS": 1.0, "IS": 0.0, "CO": 0.5}
    assert (overall["accuracy"], overall["items"], overall["correct"]) == (0.5, 6, 3)
    # ECE, 12 bins: VS 0.6 -> (7/12, 8/12], 0.9 -> (10/12, 11/12]; both right.
    assert views["VS"]["ece"] == pytest.approx((0.4 + 0.1) / 2)
    assert views["IS"]["ece"] == pytest.approx(0.5)  # one confidence, 0.5, wrong
    assert views["CO"]["ece"] == pytest.approx(0.25)  # one confidence, 0.75, right
    # Overall: every confidence in a bin of its own.
    assert overall["ece"] == pytest.approx((0.1 + 0.4 + 0.5 + 0.25) / 4)
    assert (overall["confidence_items"], overall["no_confidence_items"]) == (4, 2)
    assert (views["IS"]["confidence_items"], views["IS"]["no_confidence_items"]) == (1, 1)
    # Brier only where probs were given: IS 0.76, CO 0.125; VS has none.
    assert "brier" not in views["VS"]
    assert (views["IS"]["brier"], views["IS"]["brier_items"]) == (pytest.approx(0.76), 1)
    assert views["CO"]["brier"] == pytest.approx(0.125)
    assert overall["brier"] == pytest.approx((0.76 + 0.125) / 2)
    assert overall["brier_items"] == 2
    assert report["counts"]["missing_predictions_scored_wrong"] == 1


def test_no_confidence_is_counted_never_invented(labels: Path, tmp_path: Path) -> None:
    rows = [
        {"task_id": r["task_id"], "sample_id": r["sample_id"], "prediction": r["prediction"]}
        for r in PREDICTIONS
    ]
    report = SUITE.score_predictions(
        PredictionsRequest(labels=labels, predictions=write_predictions(tmp_path / "p.jsonl", rows))
    )
    for group in [*report["views"].values(), report["overall"]]:
        assert group["confidence_items"] == 0
        assert group["no_confidence_items"] == group["items"]
        assert "ece" not in group and "brier" not in group
    assert report["overall"]["accuracy"] == 0.5  # accuracy does not need a confidence


def test_the_release_prediction_dump_is_read(labels: Path, tmp_path: Path) -> None:
    # The release's --save_predictions rows: pred_choice, confidence, probabilities.
    rows = [
        {
            "task_id": "IS2",
            "sample_id": "000001",
            "pred_choice": "C",
            "gold_choice": "C",
            "confidence": 0.7,
            "probabilities": {"A": 0.1, "B": 0.1, "C": 0.7, "D": 0.1},
        }
    ]
    report = SUITE.score_predictions(
        PredictionsRequest(
            labels=labels, predictions=write_predictions(tmp_path / "p.jsonl", rows), task="IS2"
        )
    )
    assert report["tasks"]["IS2"]["accuracy"] == 0.5
    assert report["overall"]["ece"] == pytest.approx(abs(1.0 - 0.7))
    assert report["overall"]["brier"] == pytest.approx(0.09 + 3 * 0.01)
    assert report["counts"]["missing_predictions_scored_wrong"] == 1


def _error_text(result: Any) -> str:
    # rich folds long words at the console width: compare with every space removed.
    return "".join(result.output.split())


@pytest.mark.parametrize(
    "rows",
    [
        [],  # an empty file
        [{"task_id": "VS1", "sample_id": "000001", "prediction": "B"}],  # outside --task
    ],
)
def test_a_file_matching_no_question_is_an_error_naming_it(
    labels: Path, tmp_path: Path, rows: list[dict[str, Any]]
) -> None:
    predictions = write_predictions(tmp_path / "nothing.jsonl", rows)
    result = cli(labels, predictions, "--task", "CO3")
    assert result.exit_code == 2
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    assert f"{predictions}:nopredictionmatchesaquestion" in _error_text(result)


def test_a_row_naming_an_unknown_item_names_file_and_line(labels: Path, tmp_path: Path) -> None:
    rows = [PREDICTIONS[0], {"task_id": "VS1", "sample_id": "999999", "prediction": "A"}]
    predictions = write_predictions(tmp_path / "unknown.jsonl", rows)
    result = cli(labels, predictions)
    assert result.exit_code == 2
    text = _error_text(result)
    assert f"{predictions},line2:" in text and "'999999'" in text
    assert "matchesnoquestion" in text


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"task_id": "VS1", "sample_id": "000001", "prediction": "B"}, "a second prediction"),
        ({"task_id": "VS1", "prediction": "B"}, "must be strings"),
        ({"task_id": "VS1", "sample_id": "000002", "confidence": 1.5}, "[0, 1]"),
        ({"task_id": "VS1", "sample_id": "000002", "probs": {"A": 1.0}}, "keys A, B, C, D"),
    ],
)
def test_bad_rows_name_file_and_line(
    labels: Path, tmp_path: Path, bad: dict[str, Any], message: str
) -> None:
    predictions = write_predictions(tmp_path / "p.jsonl", [PREDICTIONS[0], bad])
    with pytest.raises(ValueError) as caught:
        SUITE.score_predictions(PredictionsRequest(labels=labels, predictions=predictions))
    assert f"{predictions}, line 2: " in str(caught.value) and message in str(caught.value)


def test_bad_labels_and_unknown_task(labels: Path, tmp_path: Path, row: RowFactory) -> None:
    predictions = write_predictions(tmp_path / "p.jsonl", PREDICTIONS)
    with pytest.raises(ValueError, match="unknown V2X-QA task 'VS9'"):
        SUITE.score_predictions(
            PredictionsRequest(labels=labels, predictions=predictions, task="VS9")
        )
    broken = write_labels(tmp_path / "broken", row, [("VS1", "000001", "E")])
    result = cli(broken, predictions)
    assert result.exit_code == 2 and "selected_option_id" in result.output
