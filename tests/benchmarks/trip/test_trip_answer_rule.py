"""TRIP's abnormal-output rule under both settings: every parse records the rule it applied."""

from __future__ import annotations

import pytest

from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.trip.answers import AbnormalRule, parse_reply

CLEAN = [
    "B",
    " B\n",
    "B.",
    "(B)",
    "[B]",
    "**B**",
    "Answer: B",
    "The answer is B.",
    "final answer: B",
    "Option B",
    "答案：B",
    "（Ｂ）",
    "B)",
]


@pytest.mark.parametrize("rule", list(AbnormalRule))
@pytest.mark.parametrize("reply", CLEAN)
def test_a_clean_single_letter_is_ok_under_both_rules(reply: str, rule: AbnormalRule) -> None:
    parsed = parse_reply(reply, rule)
    assert (parsed.status, parsed.value, parsed.rule) == (ParseStatus.OK, "B", "single-letter")


# reply -> (class, letters the first-valid rule takes or None)
ABNORMAL = {
    "": ("empty", None),
    "   \n": ("empty", None),
    "E": ("not-a-d", None),
    "b": ("not-a-d", None),
    "I cannot tell from the question.": ("not-a-d", None),
    "AB": ("several-letters", "A"),
    "C, A": ("several-letters", "C"),
    "B or D": ("several-letters", "B"),
    "A reasonable answer is C": ("several-letters", "A"),
    "B. 70 m": ("extra-text", "B"),
    "I think the answer is D because of the grade": ("extra-text", "D"),
    "BB": ("extra-text", "B"),
}


@pytest.mark.parametrize(("reply", "expected"), ABNORMAL.items())
def test_wrong_rule_leaves_abnormal_replies_unparsed(reply: str, expected: tuple) -> None:
    kind, _ = expected
    parsed = parse_reply(reply, AbnormalRule.WRONG)
    assert (parsed.status, parsed.value, parsed.rule) == (ParseStatus.UNPARSED, None, kind)
    assert parsed.detail


@pytest.mark.parametrize(("reply", "expected"), ABNORMAL.items())
def test_first_valid_rule_takes_the_first_letter(reply: str, expected: tuple) -> None:
    kind, letter = expected
    parsed = parse_reply(reply, AbnormalRule.FIRST_VALID)
    if letter is None:
        assert (parsed.status, parsed.value, parsed.rule) == (ParseStatus.UNPARSED, None, kind)
    else:
        assert parsed.status is ParseStatus.ABNORMAL
        assert (parsed.value, parsed.rule) == (letter, f"first-valid/{kind}")


def test_default_rule_is_wrong() -> None:
    assert parse_reply("A or B").status is ParseStatus.UNPARSED
