"""The release's MCQ reader, rule by rule, each case naming the rule that fired."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.stride import mcq
from roadeval.benchmarks.suite import ParseStatus

CHOICES = {"A": "Moving toward ego", "B": "Moving away from ego", "C": "Static"}


@pytest.mark.parametrize(
    ("reply", "letter", "rule"),
    [
        ('{"answer": "Option C"}', "O", mcq.JSON_ANSWER),  # its FIRST character
        ('{"answer": " b "}', "B", mcq.JSON_ANSWER),
        ("b", "B", mcq.SINGLE_LETTER),
        ("  C \n", "C", mcq.SINGLE_LETTER),
        ("Answer: B", "B", mcq.LETTER_MATCH),
        ("(C)", "C", mcq.LETTER_MATCH),
        ("I'd say B", "I", mcq.LETTER_MATCH),  # the first standalone letter anywhere
        ("N/A", "N", mcq.LETTER_MATCH),
        # An answer that is not non-empty text falls through to the later rules.
        ('{"answer": "", "note": "B"}', "B", mcq.LETTER_MATCH),
        ('{"answer": 2}', None, mcq.NOTHING),
        ("it is moving away from ego", "B", mcq.OPTION_TEXT),
        ("static, clearly", "C", mcq.OPTION_TEXT),
        ("<think>maybe A</think>\nB", "B", mcq.SINGLE_LETTER),
        ("<think>A</think> <think>C</think> it is static", "C", mcq.OPTION_TEXT),
        ("", None, mcq.EMPTY),
        ("<think>only thoughts: A</think>", None, mcq.EMPTY),
        ("42 !!", None, mcq.NOTHING),
    ],
)
def test_extract_answer_key(reply: str, letter: str | None, rule: str) -> None:
    assert mcq.extract_answer_key(reply, CHOICES) == (letter, rule)


def test_option_text_goes_in_the_choices_order() -> None:
    # Both texts occur; the first option in the choices' order wins, not the first in the reply.
    choices = {"A": "left", "B": "turn left"}
    assert mcq.extract_answer_key("turn left.", choices) == ("A", mcq.OPTION_TEXT)


def test_parse_status_and_correctness() -> None:
    ok = mcq.read_choice("B", CHOICES)
    assert (ok.status, ok.value, ok.rule) == (ParseStatus.OK, "B", mcq.SINGLE_LETTER)
    # A letter that is not an option is read (and wrong), not dropped.
    stray = mcq.read_choice("I'd say B", CHOICES)
    assert (stray.status, stray.value) == (ParseStatus.ABNORMAL, "I")
    assert not mcq.is_correct(stray.value, "B")
    nothing = mcq.read_choice("no idea", CHOICES)
    assert (nothing.status, nothing.value, nothing.rule) == (
        ParseStatus.UNPARSED,
        None,
        mcq.NOTHING,
    )
    assert not mcq.is_correct(nothing.value, "B")
    assert mcq.gold_letter(" b) moving away") == "B"
