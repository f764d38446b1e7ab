"""What the release's metric scripts score for one item: its `llm_value` after their bad-answer
rules, whether they count it in `error_cnt`, and where they would crash or drop it instead."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

from roadeval.benchmarks.roadbench.tasks import (
    LANE_COUNTING_TASKS,
    LANE_DESIGNATION_TASKS,
    ROAD_TYPES,
    ROADNET_TASK,
)
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem

UNKNOWN_ROAD_TYPE = "unknown"


@dataclass(frozen=True)
class Outcome:
    """The value the metric scores; `error`: counted by the release; `anomaly`: why the release
    would crash on or drop this item (we score it by the bad-answer rule instead)."""

    value: Any
    error: bool
    anomaly: str | None = None


def task_error_value(task: str) -> Any:
    """The `llm_value` each task script writes when it could not read an answer."""
    if task in LANE_COUNTING_TASKS:
        return 0
    if task in LANE_DESIGNATION_TASKS:
        return []
    if task == ROADNET_TASK:
        return {"junctions": [], "lines": []}
    return ""


def release_row(task: str, parsed: ParsedAnswer) -> tuple[Any, bool]:
    """(llm_value, error is set) as the task script would have written them for this reply."""
    if parsed.status is ParseStatus.UNPARSED:
        return task_error_value(task), True
    return parsed.value, False


def is_missing(value: Any) -> bool:
    """The scripts' `llm_value is None or llm_value == "None"` test."""
    return value is None or (isinstance(value, str) and value == "None")


# sklearn reads counts from 2**63 up as "continuous" (the int64 cast overflows).
CLASS_LIMIT = 2**63


def is_class_label(value: Real) -> bool:
    """Whether sklearn's `classification_report` takes this count as a class: a whole, finite
    number below 2**63. Anything else (2.5, NaN, inf, 1e20) makes it raise for the whole file."""
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return False
    return value < CLASS_LIMIT


def count_outcome(value: Any, error: bool) -> Outcome:
    """Tasks 1 and 4: a missing, errored or negative count scores 0 and counts as an error."""
    if is_missing(value) or error:
        return Outcome(0, True)
    if not isinstance(value, Real):
        # The script compares `llm_value < 0` and crashes on a non-number.
        return Outcome(0, True, f"lane count {value!r} is not a number")
    if value < 0:
        return Outcome(0, True)
    if not is_class_label(value):
        # Past the `< 0` test (so NaN and +inf too), sklearn's report raises on it.
        return Outcome(0, True, f"lane count {value!r} is not a whole number below 2**63")
    return Outcome(value, False)


def designation_outcome(value: Any, error: bool, lanes: int) -> Outcome:
    """Tasks 2 and 5: a bad answer, or a lane count that differs from the truth (not counted as
    an error), becomes one empty lane per true lane."""
    if is_missing(value) or error or not isinstance(value, list):
        return Outcome([""] * lanes, True)
    if len(value) != lanes:
        return Outcome([""] * lanes, False)
    return Outcome(value, False)


def network_outcome(value: Any, error: bool) -> Outcome:
    """Task 3: a bad answer or one without both keys has no junction and no line.

    The script tests the keys with `in`, not the type: on a number or bool that test raises
    (the whole script fails), and a string or list holding both key names passes it and the
    item is then dropped. We score those as bad answers too, and say why.
    """
    bad = task_error_value(ROADNET_TASK)
    if value is None or error:
        return Outcome(bad, True)
    if not isinstance(value, dict):
        try:
            has_keys = "lines" in value and "junctions" in value
        except TypeError:
            return Outcome(bad, True, f"the release's key test fails on llm_value {value!r}")
        if has_keys:
            return Outcome(bad, True, f"the release drops this item: llm_value {value!r}")
        return Outcome(bad, True)
    if "lines" not in value or "junctions" not in value:
        return Outcome(bad, True)
    return Outcome(value, False)


def road_type_outcome(value: Any, error: bool) -> Outcome:
    """Task 6: anything but "main" or "service" (or an error) is the class "unknown"."""
    if value is None or error or value not in ROAD_TYPES:
        return Outcome(UNKNOWN_ROAD_TYPE, True)
    return Outcome(value, False)


def outcome(task: str, value: Any, error: bool, truth: Any) -> Outcome:
    """The metric script's view of one (llm_value, error) for an item with this ground truth."""
    if task in LANE_COUNTING_TASKS:
        return count_outcome(value, error)
    if task in LANE_DESIGNATION_TASKS:
        return designation_outcome(value, error, len(truth))
    if task == ROADNET_TASK:
        return network_outcome(value, error)
    return road_type_outcome(value, error)


def parsed_outcome(task: str, parsed: ParsedAnswer, truth: Any) -> Outcome:
    """The metric script's view of our parse of a reply."""
    value, error = release_row(task, parsed)
    return outcome(task, value, error, truth)


def scored_outcome(row: ScoredItem) -> Outcome:
    """The metric script's view of a scored item: the one its scoring kept, or, scored without
    the scoring stage (a test, a notebook), read again from its parse."""
    if isinstance(row.state, Outcome):
        return row.state
    return parsed_outcome(row.item.task, row.parsed, row.item.reference)
