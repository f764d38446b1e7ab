"""Per-item scores and official per-task summaries through the Suite, against hand values and
the plain reference computation."""

from __future__ import annotations

import math

import pytest
import roadbench_reference as reference

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem

SUITE = get_suite("roadbench")


def item(task: str, index: int, reference_value: object, **extra: object) -> Item:
    return Item(
        suite="roadbench",
        suite_version="test",
        item_id=f"{task}:{index}",
        task=task,
        question="q",
        answer_kind=AnswerKind.YAML,
        reference=reference_value,
        extra=dict(extra),
    )


def scored(task: str, cases: list[tuple[object, str]], **extra: object) -> list[ScoredItem]:
    rows = []
    for index, (truth, reply) in enumerate(cases):
        it = item(task, index, truth, **extra)
        parsed = SUITE.parse(it, ModelOutput(reply))
        rows.append(ScoredItem(it, parsed, SUITE.score(it, parsed)))
    return rows


def test_protocol_settings() -> None:
    assert SUITE.max_attempts == 4
    it = item("1", 0, 2)
    assert SUITE.should_reask(it, SUITE.parse(it, ModelOutput("num_lanes: [2")))
    assert not SUITE.should_reask(it, SUITE.parse(it, ModelOutput("lanes: 2")))
    assert not SUITE.should_reask(it, SUITE.parse(it, ModelOutput("num_lanes: 2")))


def test_lane_counting_summary_with_bad_answers() -> None:
    cases = [
        (2, "num_lanes: 2"),
        (3, "num_lanes: 3"),
        (3, "num_lanes: 2"),
        (4, "num_lanes: -1"),  # negative: scored 0, an error
        (2, "I think two"),  # unparsed: 0, an error
        (1, "num_lanes: 1"),
    ]
    rows = scored("1", cases)
    assert rows[3].values == {
        "correct": 0.0,
        "abs_error": 4.0,
        "squared_error": 16.0,
        "release_error": 1.0,
    }
    summary = SUITE.summarize("1", rows)
    truth = [2, 3, 3, 4, 2, 1]
    predicted = [2, 3, 2, 0, 0, 1]
    expected = reference.report(truth, predicted)
    assert summary["f1"] == pytest.approx(expected["f1"])
    assert summary["precision"] == pytest.approx(expected["precision"])
    assert summary["recall"] == pytest.approx(expected["recall"])
    assert summary["rmse"] == pytest.approx(math.sqrt((0 + 0 + 1 + 16 + 4 + 0) / 6))
    assert (summary["items"], summary["errors"]) == (6.0, 2.0)


def test_lane_designation_summary_pools_lanes() -> None:
    cases = [
        (
            ["B", "C", "CD"],
            'lane_designations: [["left-turn"], ["straight"], ["straight", "right-turn"]]',
        ),
        (["BC", "CD"], 'lane_designations: [["left-turn", "straight"]]'),  # count mismatch
        (["C"], "no yaml: ["),  # unparsed
    ]
    rows = scored("2", cases)
    assert rows[1].values["release_error"] == 0.0 and rows[1].values[
        "hamming_loss"
    ] == pytest.approx(4 / 8)
    assert rows[2].values["release_error"] == 1.0
    summary = SUITE.summarize("2", rows)
    # Lanes: 3 exact, then BC, CD, C against empty lanes: 2 + 2 + 1 wrong letters.
    assert summary["hamming_loss"] == pytest.approx(5 / (6 * 4))
    assert summary["exact_match"] == pytest.approx(3 / 6)
    assert (summary["lanes"], summary["errors"]) == (6.0, 1.0)


def test_road_type_summary_with_unknown() -> None:
    cases = [
        ("main", "road_type: main"),
        ("service", "road_type: highway"),
        ("main", "road_type: service"),
    ]
    summary = SUITE.summarize("6", scored("6", cases))
    expected = reference.report(["main", "service", "main"], ["main", "unknown", "service"])
    assert summary["accuracy"] == pytest.approx(expected["accuracy"])
    assert summary["recall"] == pytest.approx(expected["recall"])
    assert summary["f1"] == pytest.approx(expected["f1"])
    assert summary["errors"] == 1.0


def test_roadnet_summary_is_the_mean_of_item_values() -> None:
    truth = {"junctions": ["POINT (100 100)"], "lines": ["LINESTRING (100 100, 300 100)"]}
    cases = [
        (truth, 'junctions: ["POINT (110 100)"]\nlines: ["LINESTRING (100 110, 300 110)"]'),
        (truth, "```yaml\njunctions: [\n```"),
        (truth, 'junctions: ["POINT EMPTY"]\nlines: []'),
    ]
    rows = scored("3", cases, image_size=[1000, 500])
    first = reference.network_item(
        {"junctions": ["POINT (110 100)"], "lines": ["LINESTRING (100 110, 300 110)"]},
        truth,
        1000,
        500,
    )
    for name, value in first.items():
        assert rows[0].values[name] == pytest.approx(value)
    worst = reference.network_item({"junctions": [], "lines": []}, truth, 1000, 500)
    assert rows[1].values == rows[2].values
    summary = SUITE.summarize("3", rows)
    for name in first:
        assert summary[name] == pytest.approx((first[name] + 2 * worst[name]) / 3)
    assert (summary["items"], summary["errors"]) == (3.0, 2.0)


def test_empty_task_has_no_summary() -> None:
    assert SUITE.summarize("1", []) == {}


def test_parsed_value_is_not_replaced_for_unparsed_answers() -> None:
    it = item("4", 0, 3)
    parsed = SUITE.parse(it, ModelOutput("no"))
    assert parsed == ParsedAnswer(ParseStatus.UNPARSED, None, parsed.rule, parsed.detail)
    assert SUITE.score(it, parsed)["abs_error"] == 3.0
