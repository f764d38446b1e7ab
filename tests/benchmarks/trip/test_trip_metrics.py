"""TRIP's figures on a hand-built set: per-label accuracy, penalties, abnormal counts, Pareto."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem
from roadeval.benchmarks.trip import metrics
from roadeval.benchmarks.trip.suite import TripSuite


def _item(item_id: str, modality: str, difficulty: str, role: str, point: str) -> Item:
    labels = {
        "role": role,
        "subject": "s",
        "knowledge_point": point,
        "capability": "logical reasoning",
        "difficulty": difficulty,
        "modality": modality,
    }
    return Item(
        suite="trip",
        suite_version="t",
        item_id=item_id,
        task="mcq",
        question="q",
        options={"A": "a", "B": "b", "C": "c", "D": "d"},
        answer_kind=AnswerKind.CHOICE,
        reference="A",
        labels=labels,
    )


# (id, modality, difficulty, role, knowledge point, reply)
ROWS = [
    ("t1", "text", "easy", "vehicle", "kp1", "A"),
    ("t2", "text", "easy", "vehicle", "kp1", "A"),
    ("t3", "text", "hard", "vehicle", "kp2", "B"),
    ("t4", "text", "hard", "traveler", "kp2", "A or B"),  # several letters: wrong by default
    ("i1", "image", "easy", "vehicle", "kp1", "A"),
    ("i2", "image", "medium", "vehicle", "kp3", ""),  # empty
    ("p1", "point cloud", "hard", "traveler", "kp3", "C"),
    ("p2", "point cloud", "medium", "vehicle", "kp2", "A"),
]


def _scored(suite: TripSuite) -> list[ScoredItem]:
    scored = []
    for item_id, modality, difficulty, role, point, reply in ROWS:
        item = _item(item_id, modality, difficulty, role, point)
        parsed = suite.parse(item, ModelOutput(reply))
        scored.append(ScoredItem(item, parsed, suite.score(item, parsed)))
    return scored


def test_accuracy_by_each_label_is_the_hand_computed_share() -> None:
    scored = _scored(TripSuite())
    assert metrics.accuracy(scored) == pytest.approx(4 / 8)
    assert metrics.accuracy_by_label(scored, "modality") == pytest.approx(
        {"image": 1 / 2, "point cloud": 1 / 2, "text": 2 / 4}
    )
    assert metrics.accuracy_by_label(scored, "difficulty") == pytest.approx(
        {"easy": 3 / 3, "hard": 0 / 3, "medium": 1 / 2}
    )
    assert metrics.accuracy_by_label(scored, "role") == pytest.approx(
        {"traveler": 0 / 2, "vehicle": 4 / 6}
    )


def test_summary_has_accuracy_abnormal_counts_and_both_penalties() -> None:
    summary = TripSuite().summarize("mcq", _scored(TripSuite()))
    assert summary == pytest.approx(
        {
            "accuracy": 0.5,
            "abnormal_count": 2.0,
            "abnormal_rate": 0.25,
            "abnormal.empty": 1.0,
            "abnormal.several-letters": 1.0,
            # text 0.5 minus the worst non-text modality (both 0.5)
            "modality_penalty": 0.0,
            # easy 1.0 minus hard 0.0
            "difficulty_penalty": 1.0,
        }
    )


def test_first_valid_rule_changes_the_score_of_an_abnormal_reply() -> None:
    suite = TripSuite(abnormal_rule="first-valid")
    summary = suite.summarize("mcq", _scored(suite))
    # t4 "A or B" now reads as A (correct); it is still counted as abnormal.
    assert summary["accuracy"] == pytest.approx(5 / 8)
    assert summary["abnormal_count"] == 2.0
    assert summary["abnormal.first-valid/several-letters"] == 1.0
    assert summary["modality_penalty"] == pytest.approx(3 / 4 - 1 / 2)
    assert summary["difficulty_penalty"] == pytest.approx(1.0 - 1 / 3)


def test_penalties_are_left_out_when_a_side_is_missing() -> None:
    scored = [row for row in _scored(TripSuite()) if row.item.labels["modality"] == "text"]
    summary = metrics.summarize_items(scored)
    assert "modality_penalty" not in summary
    assert summary["difficulty_penalty"] == pytest.approx(1.0 - 0.0)
    assert metrics.summarize_items([]) == {}


def test_overall_surfaces_the_task_figures() -> None:
    suite = TripSuite()
    per_task = {"mcq": suite.summarize("mcq", _scored(suite))}
    assert suite.overall(per_task) == pytest.approx(
        {"accuracy": 0.5, "abnormal_rate": 0.25, "modality_penalty": 0.0, "difficulty_penalty": 1.0}
    )


def test_error_pareto_ranks_knowledge_points_per_role() -> None:
    suite = TripSuite()
    extra = _item("x1", "text", "easy", "vehicle", "kp3")
    wrong = suite.parse(extra, ModelOutput("D"))
    scored = [*_scored(suite), ScoredItem(extra, wrong, suite.score(extra, wrong))]
    charts = metrics.error_pareto(scored)
    # Wrong: t3 (vehicle kp2), t4 (traveler kp2), i2 and x1 (vehicle kp3), p1 (traveler kp3).
    assert charts == {
        "traveler": [metrics.ParetoRow("kp2", 1, 0.5, 0.5), metrics.ParetoRow("kp3", 1, 0.5, 1.0)],
        "vehicle": [
            metrics.ParetoRow("kp3", 2, 2 / 3, 2 / 3),
            metrics.ParetoRow("kp2", 1, 1 / 3, 1.0),
        ],
    }


def test_score_marks_unparsed_replies_wrong() -> None:
    item = _item("x", "text", "easy", "vehicle", "kp")
    unparsed = ParsedAnswer(ParseStatus.UNPARSED, None, "empty")
    assert TripSuite().score(item, unparsed) == {"correct": 0.0}
    assert TripSuite().score(item, ParsedAnswer(ParseStatus.OK, "A", "single-letter")) == {
        "correct": 1.0
    }
