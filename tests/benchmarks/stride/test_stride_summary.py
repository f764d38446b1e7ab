"""Corpus figures: per-template summaries and the suite-wide, per-split and per-family rows."""

from __future__ import annotations

from typing import Any

import pytest

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.stride.frames import overview_indices
from roadeval.benchmarks.stride.scoring import ItemState, JudgeStatus
from roadeval.benchmarks.stride.suite import StrideSuite
from roadeval.benchmarks.stride.tasks import Kind
from roadeval.benchmarks.suite import ScoredItem


def _item(item_id: str, task: str, kind: Kind, reference: Any, **extra: Any) -> Item:
    options = {"A": "a", "B": "b", "C": "c", "D": "d"} if kind is Kind.MCQ else {}
    if task == "TM-2":
        options = {"A": "a", "B": "b"}
    family = {"SP-2": "space-perception", "TM-2": "time-memory"}.get(task, "trajectory-prediction")
    return Item(
        suite="stride",
        suite_version="t",
        item_id=item_id,
        task=task,
        question="q",
        options=options,
        answer_kind=AnswerKind.CHOICE if kind is Kind.MCQ else AnswerKind.OPEN_TEXT,
        reference=reference,
        labels={"split": "waymo", "family": family, "question_format": "MCQ"},
        extra={"kind": kind.value, "has_target": False, "bbox": None, **extra},
    )


def _scored(suite: StrideSuite, item: Item, reply: str) -> ScoredItem:
    parsed = suite.parse(item, ModelOutput(reply))
    return ScoredItem(item, parsed, suite.score(item, parsed))


def test_mcq_is_micro_averaged_over_items_across_templates() -> None:
    suite = StrideSuite()
    rows = [
        _scored(suite, _item("a", "SP-2", Kind.MCQ, "A"), "A"),
        _scored(suite, _item("b", "SP-2", Kind.MCQ, "A"), "I'd say A"),  # reads I: wrong
        _scored(suite, _item("c", "SP-2", Kind.MCQ, "B"), "42 !!"),  # unparsed: wrong
        _scored(suite, _item("d", "TM-2", Kind.MCQ, "B"), "B"),
    ]
    sp2 = suite.summarize("SP-2", rows[:3])
    assert sp2 == {
        "accuracy": pytest.approx(1 / 3),
        "correct": 1.0,
        "random_baseline": 0.25,
        "unparsed": 1.0,
        "not_an_option": 1.0,
    }
    groups = {(g.slice, g.slice_value, g.metric): (g.value, g.n) for g in suite.group_values(rows)}
    # 2 of 4 items, not the mean of the two templates' accuracies (1/3 and 1).
    assert groups[("", "", "mcq_accuracy")] == (0.5, 4)
    assert groups[("", "", "mcq_random_baseline")] == (pytest.approx((0.25 * 3 + 0.5) / 4), 4)
    assert groups[("family", "time-memory", "mcq_accuracy")] == (1.0, 1)


def test_judged_counts_from_states_and_without_them() -> None:
    item = _item("j", "SC-4", Kind.JUDGED, "ref")
    parsed = StrideSuite().parse(item, ModelOutput("x"))

    def row(values: dict[str, float], status: JudgeStatus | None) -> ScoredItem:
        state = ItemState(Kind.JUDGED, True, status) if status is not None else None
        return ScoredItem(item, parsed, values, state)

    rows = [
        row({"judge_score": 12.0}, JudgeStatus.SCORED),
        row({"judge_score": 4.0}, None),
        row({}, JudgeStatus.UNSCORED),
        row({}, JudgeStatus.UNANSWERED),
        row({}, None),  # scored elsewhere without a state: counted as unscored
    ]
    assert StrideSuite().summarize("SC-4", rows) == {
        "judge_scored": 2.0,
        "judge_unscored": 2.0,
        "unanswered": 1.0,
        "judge_score": 8.0,
    }


async def test_mcq_scores_without_a_judge() -> None:
    suite = StrideSuite()
    item = _item("m", "SP-2", Kind.MCQ, "C")
    output = ModelOutput('{"answer": "C"}')
    score = await suite.score_item(item, suite.parse(item, output), output, None)
    assert score.values == {"correct": 1.0} and score.judged is None


def test_scene_overview_subsample_uses_pythons_rounding() -> None:
    assert overview_indices(5) == [0, 1, 2, 3, 4]
    assert overview_indices(10) == [0, 1, 3, 4, 5, 6, 8, 9]
    assert overview_indices(40) == [0, 6, 11, 17, 22, 28, 33, 39]
