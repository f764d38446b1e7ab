"""The release's waypoint reader on nasty answers, and the origin fallback."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.stride import waypoints
from roadeval.benchmarks.stride.waypoints import parse_points, read_trajectory
from roadeval.benchmarks.suite import ParseStatus

FIVE = [[1.0, 0.0], [2.0, 0.1], [3.0, 0.2], [4.0, 0.3], [5.0, 0.4]]
FIVE_TEXT = "[[1, 0], [2, 0.1], [3, 0.2], [4, 0.3], [5, 0.4]]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (FIVE_TEXT, FIVE),
        (f"Sure! Here are the waypoints: {FIVE_TEXT}. Drive safely.", FIVE),
        (FIVE_TEXT.replace("], [", "],\n  ["), FIVE),
        (f"```json\n{FIVE_TEXT}\n```", FIVE),
        (f"<think>[[9, 9]]</think>{FIVE_TEXT}", FIVE),
        # Single quotes and numeric strings.
        ("[['1', '0'], ['2', '0.1'], ['3', '0.2'], ['4', '0.3'], ['5', '0.4']]", FIVE),
        # Extra coordinates are dropped.
        ("[[1, 0, 7], [2, 0.1, 7], [3, 0.2, 7], [4, 0.3, 7], [5, 0.4, 7]]", FIVE),
        # Nested inside an object: the balanced top-level array is found.
        ('{"waypoints": ' + FIVE_TEXT + "}", FIVE),
    ],
)
def test_reads_the_expected_points(text: str, expected: list[list[float]]) -> None:
    assert parse_points(text, 5) == expected


def test_the_expected_count_wins_over_a_later_candidate() -> None:
    # Candidates are tried from the last one; the 4-point list comes last but 5 are expected.
    text = f"Plan: {FIVE_TEXT}. Alternative: [[1, 1], [2, 2], [3, 3], [4, 4]]"
    assert parse_points(text, 5) == FIVE
    assert parse_points(text, 4) == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]


def test_without_the_expected_count_the_first_valid_one_seen_wins() -> None:
    # Seen first means tried first: the LAST valid candidate in the text.
    text = "[[1, 1], [2, 2], [3, 3]] or [[5, 5], [6, 6]]"
    assert parse_points(text, 5) == [[5.0, 5.0], [6.0, 6.0]]
    too_many = "[[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6]]"
    parsed = read_trajectory(too_many, expected=5, gt_length=5)
    assert parsed.status is ParseStatus.ABNORMAL and len(parsed.value) == 6
    assert parsed.rule == waypoints.OTHER_COUNT


def test_too_few_points_are_scored_as_read() -> None:
    parsed = read_trajectory("Next: [[1, 0], [2, 0.1], [3, 0.2]].", expected=5, gt_length=5)
    assert (parsed.status, parsed.rule) == (ParseStatus.ABNORMAL, waypoints.OTHER_COUNT)
    assert parsed.value == FIVE[:3]
    assert parsed.detail == "3 points read, 5 expected"


def test_a_list_only_in_the_reasoning_is_not_read() -> None:
    parsed = read_trajectory(f"<think>{FIVE_TEXT}</think>I cannot tell.", expected=5, gt_length=5)
    assert (parsed.status, parsed.rule) == (ParseStatus.UNPARSED, waypoints.ORIGIN_FALLBACK)
    assert parsed.value == [[0.0, 0.0]] * 5


def test_only_a_leading_fence_is_stripped() -> None:
    # A fence after prose is not stripped, but the array inside it is still a candidate.
    assert parse_points(f"Answer:\n```json\n{FIVE_TEXT}\n```", 5) == FIVE
    assert waypoints.strip_leading_fence("```json\n[1]\n```") == "[1]"
    assert waypoints.strip_leading_fence("x ```json\n[1]\n```") == "x ```json\n[1]\n```"


def test_invalid_elements_reject_a_candidate() -> None:
    assert parse_points("[[1, 2], [3]]", 2) is None  # a point with one coordinate
    assert parse_points("[[1, 2], ['a', 3]]", 2) is None  # not a number
    assert parse_points("[]", 2) is None
    assert parse_points("[1, 2, 3]", 2) is None  # numbers, not points


@pytest.mark.parametrize("text", ["", "I cannot predict that.", "[[1, 2], [3, oops]]", "```\n```"])
def test_nothing_readable_is_the_origin_and_a_parse_failure(text: str) -> None:
    parsed = read_trajectory(text, expected=5, gt_length=4)
    assert parsed.status is ParseStatus.UNPARSED
    assert parsed.rule == waypoints.ORIGIN_FALLBACK
    assert parsed.value == [[0.0, 0.0]] * 4


def test_a_well_formed_answer_is_ok() -> None:
    parsed = read_trajectory(FIVE_TEXT, expected=5, gt_length=5)
    assert (parsed.status, parsed.rule, parsed.value) == (
        ParseStatus.OK,
        waypoints.EXPECTED_COUNT,
        FIVE,
    )
