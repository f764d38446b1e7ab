"""Scoring released prediction files: the release's oracle sample, matching by the release's key,
missing answers, and files that match nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stride_support import oracle_questions, write

from roadeval.benchmarks.stride.suite import StrideSuite
from roadeval.benchmarks.suite import PredictionsRequest


def _score(labels: Path, predictions: Path, **kw: Any) -> dict[str, Any]:
    return StrideSuite().score_predictions(
        PredictionsRequest(labels=labels, predictions=predictions, **kw)
    )


def test_oracle_sample_against_the_mini_split(samples: Path) -> None:
    result = _score(samples / "nuscenes_mini.json", samples / "sample_predictions_nuscenes.json")
    assert result["mcq"]["accuracy"] == 1.0
    assert (result["mcq"]["n_mcq"], result["mcq"]["n_correct"]) == (2, 2)
    assert result["mcq"]["random_baseline"] == pytest.approx(1 / 6)
    # The mini split has no waypoint question; its SC-6 question has no prediction.
    assert result["trajectory"]["n"] == 0 and result["judge"]["unanswered"] == 1
    assert result["counts"]["missing_predictions"] == 1
    # The sample's TRJ-1 and TRJ-5 rows match no question of the mini split: named with ids.
    assert [(row["id"], row["scene_id"]) for row in result["unmatched_predictions"]] == [
        ("TRJ-1", "scene_188"),
        ("TRJ-5", "scene_028"),
    ]


def test_oracle_sample_scores_full_marks_and_zero_ade(samples: Path, tmp_path: Path) -> None:
    """The mini questions plus the sample's two other questions, as the full split holds them."""
    labels = oracle_questions(samples, tmp_path / "questions.json")
    result = _score(labels, samples / "sample_predictions_nuscenes.json")
    assert result["mcq"]["accuracy"] == 1.0 and result["mcq"]["n_mcq"] == 3
    trajectory = result["trajectory"]
    assert (trajectory["ade"], trajectory["fde"], trajectory["min_fde"]) == (0.0, 0.0, 0.0)
    assert (trajectory["parsed"], trajectory["parse_failures"]) == (1, 0)
    assert trajectory["per_template"]["TRJ-5"] == {"ade": 0.0, "fde": 0.0, "min_fde": 0.0, "n": 1}
    assert result["unmatched_predictions"] == []


def _questions(tmp_path: Path) -> Path:
    tasks = [
        {
            "id": "SP-2", "question": "Where?", "question_format": "MCQ", "scoring_type": "mcq",
            "choices": {"A": "Front", "B": "Back"}, "ground_truth": "A", "scene_id": "s1",
            "group_id": "g1", "question_id": "q-sp2",
        },
        {
            "id": "TRJ-6", "question": "Predict.", "question_format": "OEQ",
            "scoring_type": "trajectory_waypoints", "scene_id": "s1", "group_id": "g1",
            "ground_truth": "[[1, 0], [2, 0], [3, 0], [4, 0]]", "question_id": "q-trj6",
        },
        {
            "id": "SC-4", "question": "Describe.", "question_format": "OEQ",
            "scoring_type": "open_oeq_text", "ground_truth": "A clear road.", "scene_id": "s1",
            "group_id": "g1", "question_id": "q-sc4",
        },
        {
            "id": "TRJ-7", "question": "Describe the path.", "question_format": "OEQ",
            "scoring_type": "open_oeq_text", "ground_truth": "Straight on.", "scene_id": "s2",
            "group_id": "g1", "question_id": "q-trj7",
        },
    ]  # fmt: skip
    return write(
        tmp_path / "questions.json", json.dumps({"meta": {"split": "waymo_v1"}, "tasks": tasks})
    )


def test_matching_missing_answers_and_judge_replies(tmp_path: Path) -> None:
    labels = _questions(tmp_path)
    rows = [
        # Matched by question_id alone (the question text differs): answered through `response`.
        {"question_id": "q-sp2", "question": "other text", "response": "<think>A?</think>B"},
        {
            "question_id": "q-sc4",
            "model_response": "A clear road.",
            "llm_judge_raw": '{"score": 12}',
        },
        {"question_id": "q-trj7", "model_response": "Straight.", "llm_judge_raw": "no idea"},
        {"question_id": "nowhere", "id": "SP-9", "model_response": "A"},
    ]
    predictions = write(tmp_path / "preds.json", json.dumps({"meta": {}, "tasks": rows}))
    result = _score(labels, predictions)
    assert (result["mcq"]["accuracy"], result["mcq"]["n_correct"]) == (0.0, 0)
    # The TRJ-6 question has no prediction: scored as the origin trajectory, a parse failure.
    trajectory = result["trajectory"]
    assert trajectory["parse_failures"] == 1 and trajectory["missing"] == 1
    assert trajectory["ade"] == pytest.approx(2.5) and trajectory["fde"] == pytest.approx(4.0)
    assert trajectory["min_fde"] == pytest.approx(1.0)
    judge = result["judge"]
    assert (judge["mean"], judge["scored"], judge["unscored"], judge["unanswered"]) == (
        12.0,
        1,
        1,
        0,
    )
    assert [row["question_id"] for row in result["unmatched_predictions"]] == ["nowhere"]


def test_a_file_matching_no_question_names_the_file(tmp_path: Path) -> None:
    labels = _questions(tmp_path)
    predictions = write(
        tmp_path / "other.json", json.dumps({"tasks": [{"id": "X", "model_response": "A"}]})
    )
    with pytest.raises(ValueError, match=r"other\.json: none of its 1 rows matches"):
        _score(labels, predictions)
    broken = write(tmp_path / "broken.json", "{not json")
    with pytest.raises(ValueError, match=r"broken\.json"):
        _score(labels, broken)


def test_template_filter(tmp_path: Path) -> None:
    labels = _questions(tmp_path)
    predictions = write(
        tmp_path / "p.json", json.dumps([{"question_id": "q-sp2", "model_response": "A"}])
    )
    result = _score(labels, predictions, task="SP-2")
    assert result["counts"]["questions"] == 1 and result["mcq"]["accuracy"] == 1.0
    with pytest.raises(ValueError, match="no template 'SP-1'"):
        _score(labels, predictions, task="SP-1")


@pytest.mark.parametrize(
    ("text", "why"),
    [("[" * 100_000, "nested deeper"), ('{"tasks": [' + "9" * 5000 + "]}", "a number too large")],
)
def test_a_hostile_predictions_file_is_a_clear_error(tmp_path: Path, text: str, why: str) -> None:
    from roadeval.benchmarks.stride.predictions import read_predictions

    path = tmp_path / "predictions.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"{path}: not a readable JSON predictions file: {why}"):
        read_predictions(path)
