"""`roadeval score-predictions` through the CLI: the release's prediction files, scored as JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.tasks import TASKS
from roadeval.flows.cli.main import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def roadbench_samples() -> Path:
    configured = os.environ.get("ROADEVAL_SHARED")
    folder = (Path(configured) if configured else REPO.parent / "shared") / "samples" / "roadbench"
    if not folder.is_dir():
        pytest.skip("shared/samples/roadbench is not available")
    return folder


@pytest.mark.parametrize("task", ["1", "2", "4", "5", "6"])
def test_roadbench_release_predictions_score_and_reparse_agree(task: str) -> None:
    samples = roadbench_samples()
    result = runner.invoke(
        app,
        [
            "score-predictions",
            "--suite",
            "roadbench",
            "--task",
            task,
            "--labels",
            str(samples / TASKS[task].folder / "labels.jsonl"),
            "--predictions",
            str(samples / "predictions" / f"task{task}_openai_gpt-5.jsonl"),
            "--reparse",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    rows = [
        json.loads(line)
        for line in (samples / "predictions" / f"task{task}_openai_gpt-5.jsonl")
        .read_text()
        .splitlines()
        if line.strip()
    ]
    assert report["rows"] == len(rows)
    assert report["reparse"]["disagreements"] == 0
    metrics = report["metrics"]
    if task == "6":
        correct = sum(r["llm_value"] == r["ground_truth"] for r in rows)
        assert metrics["accuracy"] == pytest.approx(correct / len(rows))
    if task in ("1", "4"):
        squared = [(r["llm_value"] - r["ground_truth"]) ** 2 for r in rows]
        assert metrics["rmse"] == pytest.approx((sum(squared) / len(rows)) ** 0.5)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "score-predictions",
            "--suite",
            "roadbench",
            "--task",
            "1",
            "--labels",
            str(tmp_path / "nope.jsonl"),
            "--predictions",
            str(tmp_path / "p.jsonl"),
        ],
    )
    assert result.exit_code == 2
    assert "nope.jsonl: no such file" in " ".join(result.output.split())


def test_tbbench_predictions_accuracy_per_task_and_mean(tmp_path: Path) -> None:
    source = get_suite("tbbench").generate_demo(tmp_path / "tb")
    labels = sorted(Path(source).rglob("*.parquet"))
    assert labels
    rows = [row for path in labels for row in pq.read_table(path).to_pylist()]
    label_file = tmp_path / "labels.jsonl"
    with label_file.open("w") as handle:
        for index, row in enumerate(rows):
            handle.write(
                json.dumps(
                    {
                        "id": f"row{index}",
                        "task": row["task"],
                        "problem": row["problem"],
                        "solution": row["solution"],
                    }
                )
                + "\n"
            )
    predictions = tmp_path / "pred.jsonl"
    with predictions.open("w") as handle:
        # A phrase from the gold category's keyword set; numbers are answered as given.
        for index, row in enumerate(rows):
            answer = PHRASES.get(row["solution"], row["solution"])
            handle.write(json.dumps({"id": f"row{index}", "prediction": answer}) + "\n")
    result = runner.invoke(
        app,
        [
            "score-predictions",
            "--suite",
            "tbbench",
            "--labels",
            str(label_file),
            "--predictions",
            str(predictions),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    text = json.dumps(report)
    assert "100.0" in text
    means = [v for k, v in _walk(report) if "mean" in k]
    assert means and all(v == pytest.approx(100.0) for v in means)


PHRASES = {
    "left_turn": "left turn",
    "right_turn": "right turn",
    "go_straight": "go straight",
    "no_change": "no change",
    "left_lane_change": "left lane change",
    "right_lane_change": "right lane change",
    "front_lane": "front lane",
    "front_left_lane": "front left lane",
    "front_right_lane": "front right lane",
    "oncoming_traffic_lane": "oncoming lane",
    "front": "directly ahead",
    "back": "directly behind",
}


def _walk(node: object, prefix: str = "") -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_walk(value, f"{prefix}.{key}"))
    elif isinstance(node, int | float) and not isinstance(node, bool):
        found.append((prefix, float(node)))
    return found


def _score(*args: str) -> Any:
    return runner.invoke(app, ["score-predictions", *args])


def _roadnet_files(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """RoadBench's demo task 3 labels, and a prediction file in the release's format that
    answers every row with its ground truth."""
    source = get_suite("roadbench").generate_demo(tmp_path / "rb")
    labels = source / TASKS["3"].folder / "labels.jsonl"
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    predictions = tmp_path / "task3_demo.jsonl"
    with predictions.open("w") as handle:
        for row in rows:
            truth = row["ground_truth"]
            answer = {"id": row["id"], "answer": "", "llm_value": truth, "ground_truth": truth}
            handle.write(json.dumps({**answer, "error": None}) + "\n")
    return labels, predictions, [str(row["id"]) for row in rows]


def test_roadbench_rows_counted_as_errors_are_said_and_most_of_them_fail(tmp_path: Path) -> None:
    labels, predictions, ids = _roadnet_files(tmp_path)
    args = ["--suite", "roadbench", "--task", "3"]
    args += ["--labels", str(labels), "--predictions", str(predictions)]
    whole = _score(*args)
    assert whole.exit_code == 0, whole.output
    assert json.loads(whole.stdout)["metrics"]["buffer_f1@0.2"] == pytest.approx(1.0)
    assert whole.stderr.strip() == f"rows counted as errors: 0 of {len(ids)}"
    why = "image missing (the release cannot open it and drops the row)"
    # Half the images missing: said, not refused.
    half = len(ids) // 2
    for item_id in ids[:half]:
        (labels.parent / f"{item_id}.png").unlink()
    result = _score(*args)
    assert result.exit_code == 0, result.output
    share = f"{100 * half / len(ids):.1f}%"
    assert f"rows counted as errors: {half} of {len(ids)} ({share}): {half} {why}" in result.stderr
    # One more: most rows are errors, whose metrics measure the missing images, not the model.
    (labels.parent / f"{ids[half]}.png").unlink()
    result = _score(*args)
    assert result.exit_code == 1, result.output
    errors = half + 1
    line = f"rows counted as errors: {errors} of {len(ids)}"
    assert line in result.stderr and f"{errors} {why}" in result.stderr
    assert "more than half of the rows were counted as errors" in result.stderr
    assert "--accept-errors" in result.stderr and "Traceback" not in result.output
    report = json.loads(result.stdout)  # the report is printed all the same
    assert report["error_rows"] == {"rows": len(ids), "errors": errors, "why": {why: errors}}
    accepted = _score(*args, "--accept-errors")
    assert accepted.exit_code == 0, accepted.output
    assert line in accepted.stderr and "more than half" not in accepted.stderr


def test_tbbench_rows_without_a_prediction_are_errors(tmp_path: Path) -> None:
    source = get_suite("tbbench").generate_demo(tmp_path / "tb")
    rows = [
        row
        for path in sorted(Path(source).rglob("*.parquet"))
        for row in pq.read_table(path).to_pylist()
    ]
    labels, predictions = tmp_path / "labels.jsonl", tmp_path / "pred.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"id": f"row{i}", **{k: row[k] for k in ("task", "problem", "solution")}})
            + "\n"
            for i, row in enumerate(rows)
        )
    )
    answered = len(rows) // 3
    predictions.write_text(
        "".join(json.dumps({"id": f"row{i}", "prediction": "A"}) + "\n" for i in range(answered))
    )
    result = _score(
        "--suite", "tbbench", "--labels", str(labels), "--predictions", str(predictions)
    )
    assert result.exit_code == 1, result.output
    missing = len(rows) - answered
    assert f"{missing} no prediction for the id" in result.stderr
    assert "more than half of the rows were counted as errors" in result.stderr


def test_release_task_3_without_its_images_is_refused() -> None:
    # The release's own extract, whose images are not shipped: the real case.
    samples = roadbench_samples()
    predictions = samples / "predictions" / "task3_openai_gpt-5.jsonl"
    rows = len(predictions.read_text().splitlines())
    result = _score(
        "--suite",
        "roadbench",
        "--task",
        "3",
        "--labels",
        str(samples / TASKS["3"].folder / "labels.jsonl"),
        "--predictions",
        str(predictions),
    )
    assert result.exit_code == 1, result.output
    assert (
        f"rows counted as errors: {rows} of {rows} (100.0%): {rows} image missing" in result.stderr
    )
