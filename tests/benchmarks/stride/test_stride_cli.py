"""`roadeval score-predictions --suite stride` through the real command (typer's CliRunner): the
oracle sample, every figure of the JSON report on hand-computed answers (each `</think>`-wrapped
where stripping changes the result), and files that match nothing failing cleanly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stride_support import oracle_questions, write
from typer.testing import CliRunner

import roadeval.benchmarks.stride  # noqa: F401  (registers the suite by import, entry point aside)
from roadeval.flows.cli.main import app

runner = CliRunner()


def _invoke(labels: Path, predictions: Path) -> Any:
    return runner.invoke(
        app,
        [
            "score-predictions",
            "--suite",
            "stride",
            "--labels",
            str(labels),
            "--predictions",
            str(predictions),
        ],
    )


def _report(labels: Path, predictions: Path) -> dict[str, Any]:
    result = _invoke(labels, predictions)
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_oracle_sample_through_the_cli(samples: Path, tmp_path: Path) -> None:
    predictions = samples / "sample_predictions_nuscenes.json"
    mini = _report(samples / "nuscenes_mini.json", predictions)
    assert (mini["mcq"]["accuracy"], mini["mcq"]["n_mcq"], mini["mcq"]["n_correct"]) == (1.0, 2, 2)
    full = _report(oracle_questions(samples, tmp_path / "questions.json"), predictions)
    assert (full["mcq"]["accuracy"], full["mcq"]["n_mcq"]) == (1.0, 3)
    trajectory = full["trajectory"]
    assert (trajectory["ade"], trajectory["fde"], trajectory["min_fde"]) == (0.0, 0.0, 0.0)
    assert (trajectory["parsed"], trajectory["parse_failures"]) == (1, 0)


def _task(
    template: str, qid: str, fmt: str, scoring: str, gold: str, **extra: Any
) -> dict[str, Any]:
    return {
        "id": template,
        "question_id": qid,
        "question": f"Question {qid}?",
        "question_format": fmt,
        "scoring_type": scoring,
        "ground_truth": gold,
        "scene_id": "seg1",
        "group_id": "group_001",
        **extra,
    }


FOUR = {"A": "In front", "B": "Behind", "C": "Left", "D": "Right"}
QUESTIONS = [
    _task("SP-2", "q-sp2", "MCQ", "mcq", "A", choices=FOUR),
    _task("TM-2", "q-tm2", "MCQ", "mcq", "C", choices=FOUR),
    _task("TE-1", "q-te1", "MCQ", "mcq", "B", choices={"A": "Yes", "B": "No"}),
    _task("SC-1", "q-sc1", "MCQ", "mcq", "A", choices=FOUR),  # no prediction: wrong
    _task("TRJ-5", "q-trj5", "OEQ", "trajectory_waypoints", "[[1,0],[2,0],[3,0],[4,0],[5,0]]"),
    _task("TRJ-6", "q-trj6", "OEQ", "trajectory_waypoints", "[[1,0],[2,0],[3,0],[4,0]]"),
    _task("SC-4", "q-sc4", "OEQ", "open_oeq_text", "A clear road."),
    _task("SP-3a", "q-sp3a", "OEQ", "open_oeq_text", "Ahead, two lanes over."),
    _task("TRJ-7", "q-trj7", "OEQ", "open_oeq_text", "Straight on."),
    _task("TRJ-9", "q-trj9", "OEQ", "open_oeq_text", "Yield."),
]
PREDICTIONS = [
    # Without stripping, the first standalone letter would be the B in the reasoning.
    {"question_id": "q-sp2", "model_response": "<think>It is B, surely</think>A"},
    # The JSON answer's first character; answered through `response`, matched by question_id
    # alone (its question text differs from the question's).
    {"question_id": "q-tm2", "question": "other", "response": '{"answer": "C) Left"}'},
    {"question_id": "q-te1", "model_response": "I'd say B"},  # reads I: wrong
    # A leading code fence; errors 0, 0, 0, 0, 3.
    {"question_id": "q-trj5", "model_response": "```json\n[[1,0],[2,0],[3,0],[4,0],[5,3]]\n```"},
    # Only the reasoning holds a list: the origin, a parse failure; errors 1, 2, 3, 4.
    {"question_id": "q-trj6", "model_response": "<think>[[1,0],[2,0],[3,0],[4,0]]</think>No idea."},
    # Without stripping the verdict is not JSON and its first integer, 2, would win.
    {
        "question_id": "q-sc4",
        "model_response": "<think>hmm</think>A clear road.",
        "llm_judge_raw": '<think>maybe 2</think>{"score": 7, "rationale": "right"}',
    },
    # A fenced verdict is not JSON: the first 0-10 integer, in the rationale, wins.
    {
        "question_id": "q-sp3a",
        "model_response": "Ahead.",
        "llm_judge_raw": '```json\n{"rationale": "3 lanes", "score": 9}\n```',
    },
    {"question_id": "q-trj7", "model_response": "Straight.", "llm_judge_raw": "no verdict"},
    # Nothing after `</think>`: unanswered, whatever verdict the file holds.
    {
        "question_id": "q-trj9",
        "model_response": "<think>only thoughts</think>",
        "llm_judge_raw": '{"score": 10}',
    },
    {"question_id": "nowhere", "id": "SP-9", "model_response": "A"},
]


def test_every_figure_of_the_report(tmp_path: Path) -> None:
    labels = write(
        tmp_path / "questions.json",
        json.dumps({"meta": {"split": "waymo_v1"}, "tasks": QUESTIONS}),
    )
    predictions = write(
        tmp_path / "preds.json", json.dumps({"meta": {"model": "m"}, "tasks": PREDICTIONS})
    )
    report = _report(labels, predictions)
    assert report["split"] == "waymo"
    assert report["counts"] == {
        "questions": 10,
        "answered": 9,
        "missing_predictions": 1,
        "prediction_rows": 10,
        "shadowed_prediction_rows": 0,
        "unmatched_prediction_rows": 1,
    }
    mcq = report["mcq"]
    assert (mcq["accuracy"], mcq["n_mcq"], mcq["n_correct"]) == (0.5, 4, 2)
    assert mcq["random_baseline"] == pytest.approx((0.25 * 3 + 0.5) / 4)
    assert (mcq["unparsed"], mcq["missing"]) == (1, 1)
    trajectory = report["trajectory"]
    assert trajectory["ade"] == pytest.approx((0.6 + 2.5) / 2)
    assert trajectory["fde"] == pytest.approx((3.0 + 4.0) / 2)
    assert trajectory["min_fde"] == pytest.approx((3.0 + 1.0) / 2)
    assert (trajectory["n"], trajectory["parsed"], trajectory["parse_failures"]) == (2, 1, 1)
    per = trajectory["per_template"]
    assert per["TRJ-5"] == pytest.approx({"ade": 0.6, "fde": 3.0, "min_fde": 3.0, "n": 1})
    assert per["TRJ-6"] == pytest.approx({"ade": 2.5, "fde": 4.0, "min_fde": 1.0, "n": 1})
    judge = report["judge"]
    assert (judge["mean"], judge["scored"], judge["unscored"], judge["unanswered"]) == (
        5.0,
        2,
        1,
        1,
    )
    assert judge["per_template"] == {
        "SC-4": {"mean": 7.0, "n": 1},
        "SP-3a": {"mean": 3.0, "n": 1},
    }
    assert [row["question_id"] for row in report["unmatched_predictions"]] == ["nowhere"]
    assert report["error_rows"] == {
        "rows": 10,
        "errors": 4,
        "why": {
            "no prediction for the question": 1,
            "no trajectory read from the answer (scored as the origin)": 1,
            "a judge reply with no score read": 1,
            "no answer left once the reasoning is removed (the judge is not asked)": 1,
        },
    }


def test_a_predictions_file_matching_nothing_fails_cleanly(tmp_path: Path) -> None:
    labels = write(
        tmp_path / "questions.json",
        json.dumps({"meta": {"split": "waymo_v1"}, "tasks": QUESTIONS}),
    )
    other = write(
        tmp_path / "other_model.json",
        json.dumps({"tasks": [{"id": "SP-2", "question_id": "elsewhere", "model_response": "A"}]}),
    )
    result = _invoke(labels, other)
    text = " ".join(result.output.split())
    assert result.exit_code == 2
    assert "other_model.json: none of its 1 rows matches a question" in text
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    broken = write(tmp_path / "broken.json", "{not json")
    result = _invoke(labels, broken)
    assert result.exit_code == 2 and "broken.json" in result.output
    assert "Traceback" not in result.output
    result = _invoke(broken, other)  # a labels file that is not JSON
    assert result.exit_code == 2 and "broken.json: not JSON" in " ".join(result.output.split())


def test_error_rows_one_reason_per_question_and_most_of_them_fail(tmp_path: Path) -> None:
    # A truth the release cannot read is the reason even with no prediction (not two reasons);
    # an answer the file has no judge score for is left out of the judge mean, so counted.
    questions = [
        _task("SP-2", "q-sp2", "MCQ", "mcq", "A", choices=FOUR),
        _task("TRJ-5", "q-trj5", "OEQ", "trajectory_waypoints", "no list here"),
        _task("SC-4", "q-sc4", "OEQ", "open_oeq_text", "A clear road."),
    ]
    predictions = [
        {"question_id": "q-sp2", "model_response": "A"},
        {"question_id": "q-sc4", "model_response": "A clear road."},
    ]
    labels = write(
        tmp_path / "q.json", json.dumps({"meta": {"split": "waymo"}, "tasks": questions})
    )
    preds = write(tmp_path / "p.json", json.dumps({"tasks": predictions}))
    result = _invoke(labels, preds)
    assert result.exit_code == 1, result.output
    no_truth = "a ground-truth trajectory the release cannot read (left out of the means)"
    not_judged = "an answer the file carries no judge score for (left out of the judge mean)"
    assert json.loads(result.stdout)["error_rows"] == {
        "rows": 3,
        "errors": 2,
        "why": {no_truth: 1, not_judged: 1},
    }
    assert "rows counted as errors: 2 of 3 (66.7%)" in result.stderr
