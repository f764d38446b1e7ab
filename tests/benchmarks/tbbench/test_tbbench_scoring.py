"""The release's per-item rules, checked on hand-computed cases and their edges."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.tbbench.keywords import (
    EGO_TURNING,
    ORIENTATION,
    OTHER_LANE_CHANGING,
    OTHER_LANE_TO_EGO,
    OTHER_TURNING,
    SPATIAL_REASONING,
    MultiMatchRule,
)
from roadeval.benchmarks.tbbench.scoring import (
    angle_correct,
    angular_difference,
    distance_correct,
    extract_angle,
    extract_distance,
    keyword_correct,
    matched_classes,
    orientation_correct,
    traverse_distance_correct,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It is 12.5 meters away.", 12.5),
        ("about 1 meter", 1.0),
        ("12.5meters", 12.5),
        ("between 3 meters and 40 meters", 3.0),
        ("-3 meters", 3.0),  # the pattern has no sign
        ("1,200 meters", 200.0),  # no thousands separator: the digits after the comma are read
        ("12 Meters", None),  # case-sensitive
        ("12 m", None),
        ("twelve meters", None),
        ("", None),
    ],
)
def test_extract_distance(text: str, expected: float | None) -> None:
    assert extract_distance(text) == expected


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (7.5, 10.0, True),  # lower edge inclusive
        (12.5, 10.0, True),  # upper edge inclusive
        (7.49, 10.0, False),
        (12.51, 10.0, False),
        (0.0, 0.0, True),  # a zero gold accepts only zero
        (0.1, 0.0, False),
        (None, 10.0, False),  # missing number
        (10.0, None, False),  # unreadable gold
    ],
)
def test_distance_band(predicted: float | None, gold: float | None, expected: bool) -> None:
    assert distance_correct(predicted, gold) is expected


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (0.0, 0.6, True),  # gold < 1 m: anything in [0, 1.25]
        (1.25, 0.6, True),
        (1.26, 0.6, False),
        (0.1, 0.5, True),  # outside 0.375..0.625, still correct by the small-gold rule
        (1.25, 0.99, True),
        (0.5, 1.0, False),  # gold exactly 1 m: the relative band 0.75..1.25 applies
        (1.25, 1.0, True),
        (16.0, 20.0, True),
        (26.0, 20.0, False),
        (None, 0.5, False),
    ],
)
def test_traverse_distance(predicted: float | None, gold: float | None, expected: bool) -> None:
    assert traverse_distance_correct(predicted, gold) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a 30-degree turn", 30.0),  # '-degree' read as ' degrees'
        ("about 30-Degree", 30.0),  # lower-cased before the pattern
        ("-45 Degrees", -45.0),
        ("12.5 degree", 12.5),
        ("30-degrees", 30.0),
        ("30°", None),
        ("-1000000000 degrees", None),  # the release's own "no number" marker
        ("perpendicular", None),
    ],
)
def test_extract_angle(text: str, expected: float | None) -> None:
    assert extract_angle(text) == expected


def test_angular_difference_wraps_once_without_modulo() -> None:
    assert angular_difference(350.0, 5.0) == 15.0
    assert angular_difference(-5.0, 355.0) == 0.0
    assert angular_difference(180.0, -180.0) == 0.0
    assert angular_difference(10.0, 200.0) == 170.0
    # |d| > 360 gives a negative difference in the release, which then passes the tolerance.
    assert angular_difference(725.0, 5.0) == -360.0


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (350.0, 5.0, True),  # 15 degrees across 0, inclusive
        (349.0, 5.0, False),
        (45.0, 30.0, True),
        (46.0, 30.0, False),
        (725.0, 5.0, True),
        (None, 30.0, False),
        (30.0, None, False),
    ],
)
def test_angle_tolerance(predicted: float | None, gold: float | None, expected: bool) -> None:
    assert angle_correct(predicted, gold) is expected


def test_keywords_are_case_sensitive_substrings() -> None:
    assert matched_classes("It drives in the front left lane.", OTHER_LANE_TO_EGO) == (
        "front_left_lane",
    )
    assert matched_classes("Front left lane", OTHER_LANE_TO_EGO) == ()
    # 'front lane' is not a substring of 'front-left lane'
    assert matched_classes("the front-left lane", OTHER_LANE_TO_EGO) == ("front_left_lane",)
    assert matched_classes("it goes straight on", OTHER_LANE_CHANGING) == ("no_change",)
    assert matched_classes("Straight", OTHER_LANE_CHANGING) == ()


def test_exactly_one_rule_rejects_none_and_several() -> None:
    rule = OTHER_LANE_TO_EGO.rule
    assert rule is MultiMatchRule.EXACTLY_ONE
    hedged = matched_classes("front lane or oncoming lane", OTHER_LANE_TO_EGO)
    assert hedged == ("front_lane", "oncoming_traffic_lane")
    assert not keyword_correct(hedged, "front_lane", rule)
    assert not keyword_correct((), "front_lane", rule)
    assert keyword_correct(("front_lane",), "front_lane", rule)
    assert not keyword_correct(("front_lane",), "front_right_lane", rule)
    # A gold outside the table can never be scored correct.
    assert not keyword_correct(("front_lane",), "front lane", rule)


def test_lane_change_hedge_is_wrong() -> None:
    matched = matched_classes(
        "It maintains its lane, then changes to the left.", OTHER_LANE_CHANGING
    )
    assert matched == ("no_change", "left_lane_change")
    assert not keyword_correct(matched, "left_lane_change", OTHER_LANE_CHANGING.rule)


def test_turn_phrases_differ_between_other_and_ego_turning() -> None:
    assert matched_classes("It will turn left.", OTHER_TURNING) == ("left_turn",)
    # The ego-turning list knows 'left turn' but not 'turn left'.
    assert matched_classes("We turn left.", EGO_TURNING) == ()
    assert matched_classes("We made a left turn.", EGO_TURNING) == ("left_turn",)
    assert matched_classes("no turning maneuver", OTHER_TURNING) == ("go_straight",)


def test_spatial_reasoning_accepts_hedged_answers() -> None:
    assert SPATIAL_REASONING.rule is MultiMatchRule.ANY
    matched = matched_classes("positioned directly behind and to the right", SPATIAL_REASONING)
    assert matched == ("back", "back right")
    assert keyword_correct(matched, "back right", MultiMatchRule.ANY)
    assert keyword_correct(matched, "back", MultiMatchRule.ANY)
    assert not keyword_correct(matched, "front", MultiMatchRule.ANY)
    assert not keyword_correct((), "front", MultiMatchRule.ANY)


def test_orientation_classes_and_multi_match() -> None:
    assert orientation_correct(("opposite",), None, "opposite", ORIENTATION)
    assert not orientation_correct(("opposite", "similar"), None, "opposite", ORIENTATION)
    assert not orientation_correct((), None, "similar", ORIENTATION)
    assert matched_classes("Perpendicular", ORIENTATION) == ()


def test_orientation_angle_gold() -> None:
    # One class named does not block the angle branch; several do.
    assert orientation_correct(("perpendicular",), 35.0, "30 degrees", ORIENTATION)
    assert not orientation_correct(("similar", "opposite"), 30.0, "30 degrees", ORIENTATION)
    assert orientation_correct((), 5.0, "350 degrees", ORIENTATION)
    assert orientation_correct((), -10.0, "5-degree", ORIENTATION)
    assert not orientation_correct((), -11.0, "5-degree", ORIENTATION)
    # A gold that is neither a class nor an angle (here a capitalised class) is never matched.
    assert not orientation_correct(("similar",), 0.0, "Similar", ORIENTATION)
