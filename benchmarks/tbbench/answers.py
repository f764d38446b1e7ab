"""Reading one raw answer by its task's rule family, and grading the reading against the gold.

The reading keeps exactly what the release's scorer looks at (a distance, an angle, the named
classes), so a stored parse can be re-graded and audited without the raw text.
"""

from __future__ import annotations

from typing import Any

from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus
from roadeval.benchmarks.tbbench.keywords import KEYWORD_TABLES, ORIENTATION, MultiMatchRule
from roadeval.benchmarks.tbbench.scoring import (
    distance_correct,
    extract_angle,
    extract_distance,
    keyword_correct,
    matched_classes,
    orientation_correct,
    traverse_distance_correct,
)
from roadeval.benchmarks.tbbench.tasks import RuleFamily, task_spec

TRAVERSE_TASK = "EGO-TRA"


def read_answer(task: str, gold: str, text: str) -> ParsedAnswer:
    """What the release's scorer reads from `text` for an item of `task` with gold `gold`."""
    family = task_spec(task).family
    if family is RuleFamily.DISTANCE:
        return _read_distance(text)
    if family is RuleFamily.ORIENTATION:
        return _read_orientation(gold, text)
    return _read_keywords(task, text)


def grade(task: str, gold: str, parsed: ParsedAnswer) -> bool:
    """Whether the reading is correct for `gold`, by the release's rule for `task`."""
    spec = task_spec(task)
    value: Any = parsed.value
    if spec.family is RuleFamily.DISTANCE:
        rule = traverse_distance_correct if spec.code == TRAVERSE_TASK else distance_correct
        return rule(value, extract_distance(gold))
    if spec.family is RuleFamily.ORIENTATION:
        classes = value["classes"] if isinstance(value, dict) else []
        angle = value.get("angle") if isinstance(value, dict) else None
        return orientation_correct(classes, angle, gold, ORIENTATION)
    table = KEYWORD_TABLES[spec.code]
    return keyword_correct(value if isinstance(value, list) else [], gold, table.rule)


def _read_distance(text: str) -> ParsedAnswer:
    distance = extract_distance(text)
    if distance is None:
        return ParsedAnswer(ParseStatus.UNPARSED, None, "distance:no-meters", "no '<n> meter(s)'")
    return ParsedAnswer(ParseStatus.OK, distance, "distance:first-meters")


def _read_orientation(gold: str, text: str) -> ParsedAnswer:
    classes = list(matched_classes(text, ORIENTATION))
    angle = extract_angle(text)
    value = {"classes": classes, "angle": angle}
    if len(classes) > 1:
        detail = f"names {', '.join(classes)}; the release scores several classes as wrong"
        return ParsedAnswer(ParseStatus.UNPARSED, value, "orientation:several-classes", detail)
    if gold in ORIENTATION.classes:
        if not classes:
            return ParsedAnswer(ParseStatus.UNPARSED, value, "orientation:no-class")
        return ParsedAnswer(ParseStatus.OK, value, "orientation:class")
    if angle is None:
        return ParsedAnswer(ParseStatus.UNPARSED, value, "orientation:no-degrees")
    return ParsedAnswer(ParseStatus.OK, value, "orientation:first-degrees")


def _read_keywords(task: str, text: str) -> ParsedAnswer:
    table = KEYWORD_TABLES[task_spec(task).code]
    classes = list(matched_classes(text, table))
    if not classes:
        return ParsedAnswer(ParseStatus.UNPARSED, classes, "keywords:no-class")
    if len(classes) == 1:
        return ParsedAnswer(ParseStatus.OK, classes, "keywords:one-class")
    detail = f"names {', '.join(classes)}"
    if table.rule is MultiMatchRule.ANY:
        # The release only prints a warning here and still scores the answer.
        return ParsedAnswer(ParseStatus.ABNORMAL, classes, "keywords:several-classes-kept", detail)
    return ParsedAnswer(ParseStatus.UNPARSED, classes, "keywords:several-classes", detail)
