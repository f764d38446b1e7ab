"""The release's keyword sets: per task, each gold class and the phrases that count as saying it.

Phrases are matched as case-sensitive substrings of the raw answer, exactly as the release does.
Keys are the gold spellings found in the dataset's `solution` column.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class MultiMatchRule(StrEnum):
    """What the release does when an answer names several classes."""

    EXACTLY_ONE = "exactly_one"  # lane, lane-change and turn tasks: zero or several -> wrong
    AT_MOST_ONE = "at_most_one"  # orientation: several -> wrong (the angle branch may still pass)
    ANY = "any"  # spatial reasoning: no check, a hedged answer can pass


@dataclass(frozen=True)
class KeywordTable:
    """Gold class -> phrases, in the release's order, with the task's multi-match rule."""

    classes: MappingProxyType[str, tuple[str, ...]]
    rule: MultiMatchRule

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.classes)


def _table(rule: MultiMatchRule, classes: dict[str, tuple[str, ...]]) -> KeywordTable:
    return KeywordTable(MappingProxyType(classes), rule)


ORIENTATION = _table(
    MultiMatchRule.AT_MOST_ONE,
    {
        "perpendicular": ("perpendicular", "perpendicular to the ego-vehicle"),
        "opposite": (
            "opposite",
            "opposite direction",
            "opposite to the ego-vehicle",
            "diametrically opposed",
            "directly contrary",
        ),
        "similar": (
            "similar",
            "similar direction",
            "similar to the ego-vehicle",
            "closely resembles",
        ),
    },
)

OTHER_LANE_TO_EGO = _table(
    MultiMatchRule.EXACTLY_ONE,
    {
        "front_lane": ("front lane",),
        "front_left_lane": ("front-left lane", "front left lane"),
        "front_right_lane": ("front-right lane", "front right lane"),
        "oncoming_traffic_lane": ("oncoming traffic lane", "oncoming lane", "oncoming traffic"),
    },
)

OTHER_LANE_CHANGING = _table(
    MultiMatchRule.EXACTLY_ONE,
    {
        "no_change": (
            "maintains its lane",
            "maintaining its lane",
            "no change",
            "go straight",
            "straight",
        ),
        "left_lane_change": (
            "change to the left lane",
            "changes to the left lane",
            "changes to the left",
            "change to the left",
            "left lane change",
            "from the right to the left",
            "transitions to the left",
        ),
        "right_lane_change": (
            "change to the right lane",
            "changes to the right lane",
            "changes to the right",
            "change to the right",
            "right lane change",
            "from the left to the right",
            "transitions to the right",
        ),
    },
)

OTHER_TURNING = _table(
    MultiMatchRule.EXACTLY_ONE,
    {
        "left_turn": (
            "turn left",
            "turns left",
            "left turn",
            "left-turn maneuver",
            "turn left maneuver",
            "turns left maneuver",
            "turning left",
        ),
        "right_turn": (
            "turn right",
            "turns right",
            "right turn",
            "right-turn maneuver",
            "turn right maneuver",
            "turns right maneuver",
            "turning right",
        ),
        "go_straight": (
            "go straight",
            "no turn",
            "no turns",
            "no turning",
            "no turning maneuver",
            "proceeds directly ahead",
        ),
    },
)

EGO_TURNING = _table(
    MultiMatchRule.EXACTLY_ONE,
    {
        "right_turn": ("executed a precise right-turn maneuver", "right turn"),
        "left_turn": ("executed a precise left-turn maneuver", "left turn"),
        "go_straight": (
            "proceeds directly ahead",
            "go straight",
            "proceeds in a linear trajectory",
        ),
    },
)

# The release's front-right list also holds 'front-right quadrantforward-right direction' (two
# literals fused by a missing comma); it can only match where 'front-right quadrant' does, so it
# is left out without changing any score.
SPATIAL_REASONING = _table(
    MultiMatchRule.ANY,
    {
        "front": (
            "positioned directly ahead of our car",
            "positioned directly ahead",
            "directly ahead",
        ),
        "front right": (
            "front right",
            "to the front and to the right",
            "forward-right direction",
            "positioned to the front and to the right",
            "directly ahead and to the right of",
            "front-right quadrant",
        ),
        "front left": (
            "front left",
            "to the front and to the left",
            "forward-left direction",
            "positioned to the front and to the left",
            "directly ahead and to the left of",
            "front-left quadrant",
        ),
        "back": (
            "positioned directly behind",
            "located directly behind",
            "directly behind",
            "behind",
        ),
        "back right": (
            "back right",
            "positioned directly behind and to the right",
            "rear right quadrant",
            "rear-right quadrant",
        ),
        "back left": (
            "back left",
            "positioned directly behind and to the left",
            "rear-left quadrant",
            "rear left quadrant",
        ),
    },
)

KEYWORD_TABLES: MappingProxyType[str, KeywordTable] = MappingProxyType(
    {
        "SR": SPATIAL_REASONING,
        "OR": ORIENTATION,
        "EGO-LANE": OTHER_LANE_TO_EGO,
        "OBJ-LANE": OTHER_LANE_CHANGING,
        "OBJ-TURN": OTHER_TURNING,
        "EGO-TURN": EGO_TURNING,
    }
)
