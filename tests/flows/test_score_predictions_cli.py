"""`roadeval score-predictions` through the CLI: the release's prediction files, scored as JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    report = json.loads(result.output)
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
    report = json.loads(result.output)
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
