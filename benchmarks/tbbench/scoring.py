"""TB-Bench's per-item rules, one plain function per rule family, as the release computes them.

Distances: the first `<number> meter(s)` in the raw text, correct within +-25% of the gold; for
ego traverse distance a gold under 1 m instead accepts 0 to 1.25 m. Angles: lower-cased, '-degree'
read as ' degrees', the first `<number> degree(s)`, correct within 15 degrees by the release's
circular difference. Classes: keyword phrases as case-sensitive substrings, with a per-task rule
for answers that name several classes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from roadeval.benchmarks.tbbench.keywords import KeywordTable, MultiMatchRule

DISTANCE_PATTERN = re.compile(r"(\d+(?:\.\d+)?)\s*meters?")
ANGLE_PATTERN = re.compile(r"(-?\d+(?:\.\d+)?)\s*degrees?")
DISTANCE_TOLERANCE = 0.25
ANGLE_TOLERANCE_DEG = 15.0
# Below this gold distance (m) the ego-traverse rule switches from a relative band to [0, 1.25].
SMALL_TRAVERSE_GOLD_M = 1.0
# The release returns this value for "no number found"; a reading equal to it counts as missing.
_RELEASE_MISSING = -1000000000.0


def extract_distance(text: str) -> float | None:
    """The first distance in meters, case-sensitive ('12 Meters' and '12 m' are not read)."""
    match = DISTANCE_PATTERN.search(text)
    return float(match.group(1)) if match else None


def extract_angle(text: str) -> float | None:
    """The first angle in degrees, after lower-casing and reading '-degree' as ' degrees'."""
    normalised = text.lower().replace("-degree", " degrees")
    match = ANGLE_PATTERN.search(normalised)
    if match is None:
        return None
    value = float(match.group(1))
    return None if value == _RELEASE_MISSING else value


def distance_correct(predicted: float | None, gold: float | None) -> bool:
    """Correct iff 0.75 gold <= predicted <= 1.25 gold; a missing side is wrong."""
    if predicted is None or gold is None:
        return False
    return gold * (1 - DISTANCE_TOLERANCE) <= predicted <= gold * (1 + DISTANCE_TOLERANCE)


def traverse_distance_correct(predicted: float | None, gold: float | None) -> bool:
    """Ego traverse distance: the relative band, except that a gold under 1 m accepts [0, 1.25]."""
    if predicted is None or gold is None:
        return False
    if gold < SMALL_TRAVERSE_GOLD_M:
        return 0 <= predicted <= SMALL_TRAVERSE_GOLD_M * (1 + DISTANCE_TOLERANCE)
    return distance_correct(predicted, gold)


def angular_difference(first: float, second: float) -> float:
    """The release's circular difference min(d, 360 - d) with d = |first - second|.

    Angles are not reduced modulo 360 first, so |first - second| > 360 gives a negative value
    (which then passes the tolerance); kept because published numbers were computed this way.
    """
    diff = abs(first - second)
    return min(diff, 360 - diff)


def angle_correct(predicted: float | None, gold: float | None) -> bool:
    """Correct iff the circular difference is at most 15 degrees; a missing side is wrong."""
    if predicted is None or gold is None:
        return False
    return angular_difference(predicted, gold) <= ANGLE_TOLERANCE_DEG


def matched_classes(text: str, table: KeywordTable) -> tuple[str, ...]:
    """The classes (in the table's order) with at least one phrase occurring in the raw text."""
    return tuple(
        label for label, phrases in table.classes.items() if any(p in text for p in phrases)
    )


def keyword_correct(matched: Sequence[str], gold: str, rule: MultiMatchRule) -> bool:
    """Whether the matched classes score the gold class under the task's multi-match rule."""
    if rule is MultiMatchRule.EXACTLY_ONE and len(matched) != 1:
        return False
    if rule is MultiMatchRule.AT_MOST_ONE and len(matched) > 1:
        return False
    return gold in matched


def orientation_correct(
    matched: Sequence[str], predicted_angle: float | None, gold: str, table: KeywordTable
) -> bool:
    """Orientation: several classes named -> wrong, even for angle golds; a class gold is scored
    by keywords, any other gold as an angle."""
    if len(matched) > 1:
        return False
    if gold in table.classes:
        return gold in matched
    return angle_correct(predicted_angle, extract_angle(gold))
