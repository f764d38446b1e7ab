"""The release's waypoint reader (`stride/trajectory.py: parse_points`), quirks included.

A leading code fence is stripped (only when the text starts with one); the candidates are the
balanced top-level `[...]` spans, then every non-greedy `\\[[\\s\\S]*?\\]` match, then the whole
text; they are tried from the LAST to the first, each as JSON, else with every single quote made
double. A candidate is valid when it is a non-empty list whose every element is a list of at least
two numbers (`float()` of each: numeric strings pass, extra coordinates are dropped). The first
valid candidate with the expected count wins; failing that, the first valid one seen. The ground
truth goes through the same reader.
"""

from __future__ import annotations

import json
import re
from typing import Any

from roadeval.benchmarks.stride.thinking import strip_thinking
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus

Points = list[list[float]]

_FENCE_OPEN = re.compile(r"^```(?:json|JSON)?\s*")
_FENCE_CLOSE = re.compile(r"\s*```$")
_LAZY_ARRAY = re.compile(r"\[[\s\S]*?\]")

EXPECTED_COUNT = "trajectory:expected-count"
OTHER_COUNT = "trajectory:other-count"
ORIGIN_FALLBACK = "trajectory:origin-fallback"


def strip_leading_fence(text: str) -> str:
    cleaned = text.strip()
    if cleaned.startswith("```"):
        cleaned = _FENCE_OPEN.sub("", cleaned)
        cleaned = _FENCE_CLOSE.sub("", cleaned)
    return cleaned.strip()


def balanced_arrays(text: str) -> list[str]:
    """The top-level bracketed spans, left to right (a stray `]` at depth 0 is ignored)."""
    spans: list[str] = []
    start = None
    depth = 0
    for index, char in enumerate(text):
        if char == "[":
            if depth == 0:
                start = index
            depth += 1
        elif char == "]" and depth > 0:
            depth -= 1
            if depth == 0 and start is not None:
                spans.append(text[start : index + 1])
                start = None
    return spans


# What `_load` returns for a candidate that is not JSON either way.
_INVALID = object()


def _load(candidate: str) -> Any:
    """The candidate as JSON, else with single quotes made double; `_INVALID` when neither reads."""
    for text in (candidate, candidate.replace("'", '"')):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            continue
    return _INVALID


def _points(payload: Any) -> Points | None:
    if not isinstance(payload, list) or not payload:
        return None
    points: Points = []
    for entry in payload:
        if not isinstance(entry, list | tuple) or len(entry) < 2:
            return None
        try:
            points.append([float(entry[0]), float(entry[1])])
        except (TypeError, ValueError, OverflowError):
            return None
    return points


def parse_points(text: str, expected: int | None = None) -> Points | None:
    """The waypoints the release reads from `text`, or None."""
    cleaned = strip_leading_fence(strip_thinking(text))
    candidates = balanced_arrays(cleaned)
    candidates.extend(match.group(0) for match in _LAZY_ARRAY.finditer(cleaned))
    candidates.append(cleaned)
    fallback: Points | None = None
    for candidate in reversed(candidates):
        points = _points(_load(candidate))
        if points is None:
            continue
        if expected is not None and len(points) != expected:
            if fallback is None:
                fallback = points
            continue
        return points
    return fallback


def origin(length: int) -> Points:
    """The release's stand-in for an unreadable prediction: stay at the origin, len(GT) steps."""
    return [[0.0, 0.0] for _ in range(length)]


def read_trajectory(text: str, expected: int, gt_length: int) -> ParsedAnswer:
    """The prediction as a ParsedAnswer. Unreadable: the origin trajectory, UNPARSED (a parse
    failure, still scored); another count than expected: ABNORMAL (scored as read)."""
    points = parse_points(text, expected)
    if points is None:
        detail = f"no waypoint list read: scored as {gt_length} points at the origin"
        return ParsedAnswer(ParseStatus.UNPARSED, origin(gt_length), ORIGIN_FALLBACK, detail)
    if len(points) != expected:
        detail = f"{len(points)} points read, {expected} expected"
        return ParsedAnswer(ParseStatus.ABNORMAL, points, OTHER_COUNT, detail)
    return ParsedAnswer(ParseStatus.OK, points, EXPECTED_COUNT)
