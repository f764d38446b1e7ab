"""Reading replies: YAML from the fence or the whole text, the release's value extraction per
task, statuses and rules, and which failures are asked again."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.roadbench.answers import read_reply, should_reask
from roadeval.benchmarks.suite import ParseStatus


def test_fenced_block_wins_over_surrounding_text() -> None:
    text = "Sure!\n```yaml\n# Explanation: two arrows\nnum_lanes: 3\n```\nnum_lanes: 9"
    parsed = read_reply("1", text)
    assert (parsed.status, parsed.value, parsed.rule) == (ParseStatus.OK, 3, "yaml_fenced")


def test_whole_text_is_yaml_without_a_fence() -> None:
    parsed = read_reply("4", "# Explanation: three lanes\nnum_lanes: 3")
    assert (parsed.status, parsed.value, parsed.rule) == (ParseStatus.OK, 3, "yaml_whole_text")


def test_python_int_semantics_for_lane_counts() -> None:
    assert read_reply("1", "num_lanes: '4'").value == 4
    assert read_reply("1", "num_lanes: 3.7").value == 3
    bad = read_reply("1", "num_lanes: 3.5 lanes")
    assert bad.status is ParseStatus.UNPARSED and bad.rule == "bad_value"


def test_negative_count_is_abnormal_and_kept() -> None:
    parsed = read_reply("1", "num_lanes: -2")
    assert (parsed.status, parsed.value, parsed.rule) == (
        ParseStatus.ABNORMAL,
        -2,
        "negative_count",
    )


@pytest.mark.parametrize(
    ("text", "rule", "reask"),
    [
        ("", "empty_reply", True),
        ("num_lanes: [3", "yaml_error", True),
        ("```yaml\nnum_lanes: : :\n```", "yaml_error", True),
        ("day: 2024-13-45", "yaml_error", True),  # a ValueError inside the YAML reader
        ("   ", "not_a_mapping", False),
        ("three lanes", "not_a_mapping", False),
        ("lanes: 3", "missing_key", False),
        ("num_lanes: null", "bad_value", False),
    ],
)
def test_failures_and_which_are_asked_again(text: str, rule: str, reask: bool) -> None:
    parsed = read_reply("1", text)
    assert parsed.status is ParseStatus.UNPARSED
    assert parsed.value is None
    assert parsed.rule == rule
    assert should_reask(parsed) is reask


def test_designations_map_terms_case_insensitively_and_sort_letters() -> None:
    text = (
        'lane_designations: [["Straight", "left-turn"], ["straight"], ["right-turn", "straight"]]'
    )
    parsed = read_reply("2", text)
    assert (parsed.status, parsed.value) == (ParseStatus.OK, ["BC", "C", "CD"])
    uturn = read_reply("2", 'lane_designations: [["U-turn", "left-turn"]]')
    assert uturn.value == ["AB"]


def test_variable_is_a_letter_only_in_fpv() -> None:
    assert read_reply("5", 'lane_designations: [["variable"]]').value == ["G"]
    bev = read_reply("2", 'lane_designations: [["variable"]]')
    assert (bev.status, bev.value, bev.rule) == (
        ParseStatus.ABNORMAL,
        [""],
        "unknown_terms_dropped",
    )


def test_a_lane_given_as_a_string_is_read_letter_by_letter_like_the_release() -> None:
    parsed = read_reply("2", 'lane_designations: ["straight", ["right-turn"]]')
    assert parsed.value == ["", "D"]
    assert parsed.status is ParseStatus.ABNORMAL


def test_designations_that_are_not_lists_fail() -> None:
    assert read_reply("2", "lane_designations: 3").rule == "bad_value"
    assert read_reply("2", "lane_designations: [[straight], null]").rule == "bad_value"


def test_road_type_must_be_main_or_service() -> None:
    assert read_reply("6", 'road_type: "service"').value == "service"
    wrong = read_reply("6", "road_type: Main")
    assert (wrong.status, wrong.rule) == (ParseStatus.UNPARSED, "bad_value")


def test_network_answer_keeps_the_wkt_strings() -> None:
    text = (
        '```yaml\n# Explanation: split\njunctions: ["POINT (1 2)"]\n'
        'lines: ["LINESTRING (1 2, 3 4)"]\n```'
    )
    parsed = read_reply("3", text)
    assert parsed.status is ParseStatus.OK
    assert parsed.value == {"junctions": ["POINT (1 2)"], "lines": ["LINESTRING (1 2, 3 4)"]}


def test_network_answer_with_bad_wkt_or_missing_key_fails_without_reask() -> None:
    bad = read_reply("3", 'junctions: ["POINT (1)"]\nlines: []')
    assert (bad.status, bad.rule) == (ParseStatus.UNPARSED, "bad_value")
    assert not should_reask(bad)
    missing = read_reply("3", 'junctions: ["POINT (1 2)"]')
    assert missing.rule == "missing_key"


def test_empty_point_is_flagged_abnormal() -> None:
    parsed = read_reply("3", 'junctions: ["POINT EMPTY"]\nlines: []')
    assert (parsed.status, parsed.rule) == (ParseStatus.ABNORMAL, "empty_point")
