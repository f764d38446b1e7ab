"""Conformance with the release extracts in ../shared/samples/roadbench: every task loads, the
released prediction files score as their rows say, and our parser reads their raw answers the
way the release did. Skips when the extracts are absent."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import roadbench_reference as reference
from PIL import Image
from roadbench_shared import require_samples

from roadeval.benchmarks.errors import BadItemPolicy, ItemError
from roadeval.benchmarks.messages import message_images, message_text
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.predictions import RoadBenchPredictions
from roadeval.benchmarks.roadbench.tasks import TASKS

SUITE = get_suite("roadbench")


@pytest.fixture(scope="module")
def samples() -> Path:
    return require_samples()


def prediction_rows(samples: Path, task: str) -> list[dict]:
    path = samples / "predictions" / f"task{task}_openai_gpt-5.jsonl"
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def score(samples: Path, task: str, images: Path | None = None) -> dict:
    return SUITE.score_predictions(
        RoadBenchPredictions(
            labels=samples / TASKS[task].folder / "labels.jsonl",
            predictions=samples / "predictions" / f"task{task}_openai_gpt-5.jsonl",
            images=images,
            reparse=True,
        )
    )


def test_all_six_tasks_load_and_rows_without_images_are_reported(samples: Path) -> None:
    with pytest.raises(ItemError) as caught:
        SUITE.load(samples)
    assert caught.value.problem.field == "image"
    report = SUITE.load(samples, on_bad_item=BadItemPolicy.SKIP)
    assert sorted(item.task for item in report.items) == ["1", "2", "3", "4", "5", "6"]
    assert all(problem.field == "image" for problem in report.skipped)
    label_rows = sum(
        len((samples / folder / "labels.jsonl").read_text().splitlines())
        for folder in ("task_1_2", "task_3", "task_4_5", "task_6")
    )
    assert len(report.skipped) == label_rows - 4


def test_release_rows_have_no_unknown_fields(samples: Path) -> None:
    report = SUITE.load(samples, on_bad_item=BadItemPolicy.SKIP)
    assert report.unknown_fields == {}


def test_sample_items_carry_real_sizes_and_lines(samples: Path) -> None:
    items = {item.task: item for item in SUITE.load(samples, on_bad_item=BadItemPolicy.SKIP).items}
    assert items["1"].extra["image_size"] == list(Image.open(items["1"].media[0].path).size)
    assert items["2"].reference == ["C", "CD"]
    assert items["4"].labels["condition"] == "none"
    assert items["6"].reference == "service"
    text = message_text(SUITE.messages(items["1"]))
    width, height = items["1"].extra["image_size"]
    assert f"  width: {width}\n  height: {height}\n" in text
    assert "coordinates:\n- x: 403.0\n  y: 400.0\n- x: 400.0\n  y: 1035.0\n```" in text
    task3 = message_text(SUITE.messages(items["3"]))
    assert "**Task: Road Network Modification and Junction Identification**" in task3
    assert Image.open(items["3"].media[0].path).size == tuple(items["3"].extra["image_size"])
    assert message_images(SUITE.messages(items["6"]))


def count_metrics(rows: list[dict]) -> dict[str, float]:
    truth, predicted, errors = [], [], 0
    for one in rows:
        value = one["llm_value"]
        if value is None or value == "None" or one["error"] is not None or value < 0:
            value, errors = 0, errors + 1
        truth.append(one["ground_truth"])
        predicted.append(value)
    metrics = reference.report(truth, predicted)
    squared = [(p - t) ** 2 for t, p in zip(truth, predicted, strict=True)]
    metrics["rmse"] = math.sqrt(sum(squared) / len(squared))
    metrics["errors"] = errors
    return metrics


@pytest.mark.parametrize("task", ["1", "4"])
def test_lane_counting_predictions(samples: Path, task: str) -> None:
    rows = prediction_rows(samples, task)
    out = score(samples, task)
    expected = count_metrics(rows)
    for name in ("f1", "precision", "recall", "rmse"):
        assert out["metrics"][name] == pytest.approx(expected[name], abs=1e-12), name
    assert out["errors"] == expected["errors"] and out["abnormal"] == 0
    assert out["reparse"]["disagreements"] == 0
    assert out["reparse"]["metrics"] == out["metrics"]


@pytest.mark.parametrize(("task", "letters"), [("2", "ABCD"), ("5", "ABCDG")])
def test_lane_designation_predictions(samples: Path, task: str, letters: str) -> None:
    rows = prediction_rows(samples, task)
    wrong = exact = lanes = 0
    for one in rows:
        value = one["llm_value"]
        truth = one["ground_truth"]
        if one["error"] is not None or not isinstance(value, list) or len(value) != len(truth):
            value = [""] * len(truth)
        for guess, gold in zip(value, truth, strict=True):
            row_wrong = sum((letter in guess) != (letter in gold) for letter in letters)
            wrong += row_wrong
            exact += row_wrong == 0
            lanes += 1
    out = score(samples, task)
    assert out["metrics"]["hamming_loss"] == pytest.approx(wrong / (lanes * len(letters)))
    assert out["metrics"]["exact_match"] == pytest.approx(exact / lanes)
    assert out["reparse"]["disagreements"] == 0


def test_road_type_predictions(samples: Path) -> None:
    rows = prediction_rows(samples, "6")
    predicted = [
        one["llm_value"]
        if one["llm_value"] in ("main", "service") and one["error"] is None
        else "unknown"
        for one in rows
    ]
    expected = reference.report([one["ground_truth"] for one in rows], predicted)
    out = score(samples, "6")
    for name in ("accuracy", "recall", "f1"):
        assert out["metrics"][name] == pytest.approx(expected[name], abs=1e-12)
    assert out["reparse"]["disagreements"] == 0


def test_roadnet_predictions_with_stand_in_images(samples: Path, tmp_path: Path) -> None:
    # The extracts ship no task-3 images for these rows; stand-in sizes exercise the metric.
    rows = prediction_rows(samples, "3")
    sizes = {}
    for index, one in enumerate(rows):
        sizes[one["id"]] = (1200 + 37 * index, 1100 + 23 * index)
        Image.new("RGB", sizes[one["id"]]).save(tmp_path / f"{one['id']}.png")
    out = score(samples, "3", images=tmp_path)
    assert out["missing_images"] == 0 and out["abnormal"] == 0
    per_item = [
        reference.network_item(
            one["llm_value"] if one["error"] is None else {"junctions": [], "lines": []},
            one["ground_truth"],
            *sizes[one["id"]],
        )
        for one in rows
    ]
    for name in per_item[0]:
        expected = sum(values[name] for values in per_item) / len(per_item)
        assert out["metrics"][name] == pytest.approx(expected, abs=1e-12), name
    assert out["reparse"]["disagreements"] == 0


def test_roadnet_predictions_without_images_are_kept_as_bad_answers(samples: Path) -> None:
    out = score(samples, "3")
    rows = prediction_rows(samples, "3")
    present = sum((samples / "task_3" / f"{one['id']}.png").is_file() for one in rows)
    assert out["missing_images"] == len(rows) - present
    assert out["metrics"]["items"] == len(rows)
