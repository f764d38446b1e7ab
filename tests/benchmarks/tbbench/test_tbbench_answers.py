"""Reading raw answers by task (status and rule) and grading the readings against the gold."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import BaselineCall, find_baseline
from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.tbbench.answers import grade, read_answer
from roadeval.benchmarks.tbbench.baselines import CLASS_PHRASES, random_answer
from roadeval.benchmarks.tbbench.keywords import KEYWORD_TABLES
from roadeval.tasks.requests.request import request_key


@pytest.mark.parametrize(
    ("task", "gold", "text", "status", "rule", "correct"),
    [
        ("RD", "10.0 meters", "Roughly 11 meters apart.", "ok", "distance:first-meters", True),
        ("RD", "10.0 meters", "Roughly 11 Meters apart.", "unparsed", "distance:no-meters", False),
        ("relative_distance", "4.0 meters", "5.5 meters", "ok", "distance:first-meters", False),
        ("EGO-TRA", "0.4 meters", "1.2 meters", "ok", "distance:first-meters", True),
        ("EGO-TRA", "12.0 meters", "1.2 meters", "ok", "distance:first-meters", False),
        ("OR", "similar", "a similar direction", "ok", "orientation:class", True),
        ("OR", "similar", "similar, or opposite", "unparsed", "orientation:several-classes", False),
        ("OR", "opposite", "facing away", "unparsed", "orientation:no-class", False),
        ("OR", "30 degrees", "About 40 Degrees.", "ok", "orientation:first-degrees", True),
        ("OR", "30 degrees", "perpendicular", "unparsed", "orientation:no-degrees", False),
        ("SR", "back", "directly behind, to the right", "ok", "keywords:one-class", True),
        ("SR", "back", "back right", "ok", "keywords:one-class", False),
        (
            "SR",
            "back",
            "behind, in the back right",
            "abnormal",
            "keywords:several-classes-kept",
            True,
        ),
        ("SR", "front", "to the left", "unparsed", "keywords:no-class", False),
        ("EGO-LANE", "front_lane", "front lane", "ok", "keywords:one-class", True),
        (
            "EGO-LANE",
            "front_lane",
            "front lane, oncoming lane",
            "unparsed",
            "keywords:several-classes",
            False,
        ),
        ("OBJ-TURN", "left_turn", "it turns left", "ok", "keywords:one-class", True),
        ("EGO-TURN", "left_turn", "we turn left", "unparsed", "keywords:no-class", False),
    ],
)
def test_read_and_grade(
    task: str, gold: str, text: str, status: str, rule: str, correct: bool
) -> None:
    parsed = read_answer(task, gold, text)
    assert (parsed.status.value, parsed.rule) == (status, rule)
    assert grade(task, gold, parsed) is correct


def test_orientation_reading_keeps_classes_and_angle() -> None:
    parsed = read_answer("OR", "30 degrees", "perpendicular, at 35-degree")
    assert parsed.value == {"classes": ["perpendicular"], "angle": 35.0}
    assert grade("OR", "30 degrees", parsed)


def test_unknown_task_is_an_error() -> None:
    with pytest.raises(KeyError, match="unknown TB-Bench task"):
        read_answer("lane_counting", "x", "y")


def test_baseline_phrases_name_exactly_their_class() -> None:
    for task, phrases in CLASS_PHRASES.items():
        assert set(phrases) == set(KEYWORD_TABLES[task].classes)
        for gold, phrase in phrases.items():
            parsed = read_answer(task, gold, phrase)
            assert parsed.status is ParseStatus.OK, (task, phrase)
            assert parsed.value == ([gold] if task != "OR" else {"classes": [gold], "angle": None})
            assert grade(task, gold, parsed)


def _call(task: str, item_id: str, question: str, seed: int = 0, attempt: int = 1) -> BaselineCall:
    item = Item(
        suite="tbbench",
        suite_version="test",
        item_id=item_id,
        task=task,
        question=question,
        answer_kind=AnswerKind.LABEL,
        reference="front",
    )
    # Keyed by a request (this bare item has no release labels to build the suite's prompt from;
    # its question stands for the prompt).
    messages = [{"role": "user", "content": question}]
    key = request_key("roadeval/random", {"seed": seed}, messages, attempt)
    return BaselineCall.blind(item, seed, attempt, key)


def test_random_baseline_is_registered_seeded_and_readable() -> None:
    entry = find_baseline("random", "tbbench", "EGO-TURN")
    assert entry is not None and entry.fn is random_answer
    first = random_answer(_call("RD", "RD-0001", "How far?"))
    assert first == random_answer(_call("RD", "RD-0001", "How far?"))
    answers = {random_answer(_call("SR", f"SR-{i:04d}", f"Where is car {i}?")) for i in range(60)}
    assert answers == set(CLASS_PHRASES["SR"].values())
    angle = random_answer(_call("OR", "OR-0001", "At what angle in degrees?"))
    assert read_answer("OR", "30 degrees", angle).status is ParseStatus.OK
    for task in ("RD", "EGO-TRA"):
        distance = read_answer(task, "5 meters", random_answer(_call(task, "x", "How far?")))
        assert distance.status is ParseStatus.OK
    seeds = {random_answer(_call("RD", "RD-0001", "How far?", seed=s)) for s in range(5)}
    assert len(seeds) > 1
