"""Scoring released-style prediction files from their rows, and re-parsing their answers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import roadbench_reference as reference
from PIL import Image

from roadeval.benchmarks.errors import ItemError, SuiteSourceError
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.predictions import RoadBenchPredictions

SUITE = get_suite("roadbench")


def write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def row(item_id: str, answer: str, value: object, truth: object, error: str | None = None) -> dict:
    return {
        "id": item_id,
        "answer": answer,
        "llm_value": value,
        "ground_truth": truth,
        "error": error,
    }


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    return write(tmp_path / "task_1_2" / "labels.jsonl", [{"id": "a"}, {"id": "b"}])


def test_lane_counting_rows_by_the_release_rules(tmp_path: Path, labels: Path) -> None:
    rows = [
        row("a", "num_lanes: 2", 2, 2),
        row("b", "num_lanes: 3", 3, 4),
        row("c", "Error: timeout", 0, 3, "timeout"),
        row("d", "num_lanes: -1", -1, 1),
        row("e", "x", None, 2),
        row("f", "x", "None", 2),
    ]
    predictions = write(tmp_path / "task1_model.jsonl", rows)
    out = SUITE.score_predictions(RoadBenchPredictions(labels=labels, predictions=predictions))
    assert out["task"] == "1" and out["rows"] == 6
    assert out["rows_not_in_labels"] == 4
    truth, predicted = [2, 4, 3, 1, 2, 2], [2, 3, 0, 0, 0, 0]
    expected = reference.report(truth, predicted)
    for name in ("f1", "precision", "recall"):
        assert out["metrics"][name] == pytest.approx(expected[name])
    assert out["metrics"]["rmse"] == pytest.approx(math.sqrt((0 + 1 + 9 + 1 + 4 + 4) / 6))
    assert out["errors"] == 4 and out["abnormal"] == 0
    json.dumps(out)


def test_counts_sklearn_cannot_classify_are_abnormal_bad_answers(
    tmp_path: Path, labels: Path
) -> None:
    # The release's classification_report raises on 2.5, NaN, +inf and counts from 2**63 up
    # (for the whole file); we score them as 0 and mark them. -inf is negative: plain 0.
    values = [2.5, math.nan, math.inf, 1e20, 2**63, -math.inf, 3.0, 2**62]
    rows = [row(f"r{k}", "", value, 3) for k, value in enumerate(values)]
    predictions = write(tmp_path / "task1_model.jsonl", rows)
    out = SUITE.score_predictions(RoadBenchPredictions(labels=labels, predictions=predictions))
    assert out["abnormal_ids"] == ["r0", "r1", "r2", "r3", "r4"]
    assert out["errors"] == 6
    predicted = [0, 0, 0, 0, 0, 0, 3, 2**62]
    expected = reference.report([3] * 8, predicted)
    for name in ("f1", "precision", "recall"):
        assert out["metrics"][name] == pytest.approx(expected[name])
    assert out["metrics"]["rmse"] == pytest.approx(math.sqrt((6 * 9 + (2**62 - 3) ** 2) / 8))


def test_roadnet_values_the_release_key_test_fails_on(tmp_path: Path) -> None:
    folder = tmp_path / "task_3"
    labels = write(folder / "labels.jsonl", [])
    truth = {"junctions": ["POINT (100 100)"], "lines": ["LINESTRING (100 100, 400 100)"]}
    values = [5, True, "lines and junctions", ["lines", "junctions"], "lines only", None]
    rows = [row(f"r{k}", "", value, truth) for k, value in enumerate(values)]
    for k in range(len(rows)):
        Image.new("RGB", (1000, 800)).save(folder / f"r{k}.png")
    out = SUITE.score_predictions(
        RoadBenchPredictions(labels=labels, predictions=write(tmp_path / "task3_m.jsonl", rows))
    )
    # `"lines" in 5` raises; a string or list naming both keys passes and is then dropped.
    assert out["abnormal_ids"] == ["r0", "r1", "r2", "r3"]
    assert out["errors"] == 6
    bad = reference.network_item({"junctions": [], "lines": []}, truth, 1000, 800)
    for name, value in bad.items():
        assert out["metrics"][name] == pytest.approx(value)


def test_reparse_counts_disagreements(tmp_path: Path, labels: Path) -> None:
    rows = [
        row("a", "```yaml\nnum_lanes: 2\n```", 2, 2),
        row("b", "num_lanes: 3", 4, 4),  # the row says 4, the answer says 3
        row("c", "not yaml: [", 0, 3, "while parsing"),
    ]
    predictions = write(tmp_path / "preds.jsonl", rows)
    out = SUITE.score_predictions(
        RoadBenchPredictions(labels=labels, predictions=predictions, task="4", reparse=True)
    )
    assert out["task"] == "4"
    assert out["reparse"]["disagreements"] == 1
    assert out["reparse"]["disagreeing_ids"] == ["b"]
    assert out["metrics"]["rmse"] == pytest.approx(math.sqrt(9 / 3))
    assert out["reparse"]["metrics"]["rmse"] == pytest.approx(math.sqrt((1 + 9) / 3))


def test_designation_rows(tmp_path: Path, labels: Path) -> None:
    rows = [
        row("a", "", ["B", "CD"], ["B", "CD"]),
        row("b", "", ["B"], ["B", "C"]),
        row("c", "", [], ["G"], "KeyError"),
    ]
    predictions = write(tmp_path / "task5_m.jsonl", rows)
    out = SUITE.score_predictions(RoadBenchPredictions(labels=labels, predictions=predictions))
    assert out["metrics"]["exact_match"] == pytest.approx(2 / 5)
    assert out["metrics"]["hamming_loss"] == pytest.approx(3 / 25)
    assert out["errors"] == 1


def test_roadnet_rows_need_image_sizes(tmp_path: Path) -> None:
    folder = tmp_path / "task_3"
    labels = write(folder / "labels.jsonl", [])
    Image.new("RGB", (1000, 800)).save(folder / "p.png")
    truth = {"junctions": ["POINT (100 100)"], "lines": ["LINESTRING (100 100, 400 100)"]}
    answer = {"junctions": ["POINT (120 100)"], "lines": ["LINESTRING (100 120, 400 120)"]}
    rows = [row("p", "", answer, truth), row("q", "", answer, truth)]
    out = SUITE.score_predictions(
        RoadBenchPredictions(labels=labels, predictions=write(tmp_path / "task3_m.jsonl", rows))
    )
    assert out["missing_images"] == 1 and out["abnormal"] == 1 and out["abnormal_ids"] == ["q"]
    good = reference.network_item(answer, truth, 1000, 800)
    bad = reference.network_item({"junctions": [], "lines": []}, truth, 1000, 800)
    for name, value in good.items():
        assert out["metrics"][name] == pytest.approx((value + bad[name]) / 2)
    images = tmp_path / "elsewhere"
    images.mkdir()
    Image.new("RGB", (1000, 800)).save(images / "q.png")
    moved = SUITE.score_predictions(
        RoadBenchPredictions(labels=labels, predictions=tmp_path / "task3_m.jsonl", images=images)
    )
    assert moved["missing_images"] == 1 and moved["abnormal_ids"] == ["p"]


def test_task_must_be_known(tmp_path: Path, labels: Path) -> None:
    predictions = write(tmp_path / "model.jsonl", [row("a", "", 1, 1)])
    with pytest.raises(ValueError, match="task"):
        SUITE.score_predictions(RoadBenchPredictions(labels=labels, predictions=predictions))
    with pytest.raises(ValueError, match="unknown RoadBench task"):
        SUITE.score_predictions(
            RoadBenchPredictions(labels=labels, predictions=predictions, task="7")
        )


def test_bad_rows_name_line_and_field(tmp_path: Path, labels: Path) -> None:
    rows = [row("a", "", 1, 1), {"id": "b", "answer": "", "llm_value": 2}]
    predictions = write(tmp_path / "task1_m.jsonl", rows)
    with pytest.raises(ItemError) as caught:
        SUITE.score_predictions(RoadBenchPredictions(labels=labels, predictions=predictions))
    assert (caught.value.problem.line, caught.value.problem.field) == (2, "ground_truth")
    write(predictions, [row("a", "", 1, "two")])
    with pytest.raises(ItemError, match="ground truth"):
        SUITE.score_predictions(RoadBenchPredictions(labels=labels, predictions=predictions))


def test_missing_files_are_source_errors(tmp_path: Path, labels: Path) -> None:
    with pytest.raises(SuiteSourceError):
        SUITE.score_predictions(
            RoadBenchPredictions(labels=labels, predictions=tmp_path / "task1_none.jsonl")
        )
    predictions = write(tmp_path / "task1_m.jsonl", [row("a", "", 1, 1)])
    with pytest.raises(SuiteSourceError):
        SUITE.score_predictions(
            RoadBenchPredictions(labels=tmp_path / "nope.jsonl", predictions=predictions)
        )
