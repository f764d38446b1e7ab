"""The release's letter parser (quirks included) and the confidence read from log-probs."""

from __future__ import annotations

import math

import pytest

from roadeval.benchmarks.output import ModelOutput, TokenLogprob
from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.v2xqa.answers import (
    EXACT_RULE,
    FIRST_STANDALONE_RULE,
    NO_LETTER_RULE,
    letter_probabilities,
    parse_output,
    read_letter,
)


@pytest.mark.parametrize(
    ("text", "letter", "rule"),
    [
        ("B", "B", EXACT_RULE),
        ("  c\n", "C", EXACT_RULE),  # stripped and upper-cased first
        ("a", "A", EXACT_RULE),  # a lone article reads as A
        ("A car is ahead", "A", FIRST_STANDALONE_RULE),  # so does a leading "a"/"A" in text
        ("The answer is D.", "D", FIRST_STANDALONE_RULE),
        ("I think B", "B", FIRST_STANDALONE_RULE),  # "I" is not one of A-D
        ("(C)", "C", FIRST_STANDALONE_RULE),
        ("B or C", "B", FIRST_STANDALONE_RULE),  # the first one wins
        ("Answer: ABC", None, NO_LETTER_RULE),  # no standalone letter
        ("E", None, NO_LETTER_RULE),
        ("", None, NO_LETTER_RULE),
        ("none of them", None, NO_LETTER_RULE),
    ],
)
def test_release_letter_rules(text: str, letter: str | None, rule: str) -> None:
    assert read_letter(text) == (letter, rule)


def test_no_letter_is_unparsed_where_the_release_would_abort() -> None:
    parsed = parse_output(ModelOutput("Sorry, cannot tell."))
    assert parsed.status is ParseStatus.UNPARSED
    assert parsed.rule == NO_LETTER_RULE
    assert parsed.value == {"letter": None, "confidence": None, "probs": None}
    assert "aborts" in parsed.detail


def _output(text: str, top: dict[str, float]) -> ModelOutput:
    chosen = max(top, key=lambda token: top[token])
    alternatives = tuple((t, lp) for t, lp in top.items() if t != chosen)
    return ModelOutput(text, logprobs=(TokenLogprob(chosen, top[chosen], alternatives),))


def test_confidence_is_a_softmax_over_the_four_letters_only() -> None:
    top = {
        "A": math.log(0.6),
        "B": math.log(0.2),
        "C": math.log(0.1),
        "D": math.log(0.05),
    }
    top["The"] = math.log(0.05)  # not a letter: left out of the softmax
    parsed = parse_output(_output("A", top))
    assert parsed.status is ParseStatus.OK and parsed.rule == EXACT_RULE
    probs = parsed.value["probs"]
    assert probs == pytest.approx(
        {"A": 0.6 / 0.95, "B": 0.2 / 0.95, "C": 0.1 / 0.95, "D": 0.05 / 0.95}
    )
    assert parsed.value["confidence"] == pytest.approx(0.6 / 0.95)
    assert parsed.value["letter"] == "A"


def test_tokens_are_compared_stripped_and_upper_cased() -> None:
    # " b" and "B" both spell B: the likelier one stands for it.
    probs = letter_probabilities({" b": math.log(0.3), "B": math.log(0.1), "A": math.log(0.3)})
    assert probs == pytest.approx({"A": 0.5, "B": 0.5, "C": 0.0, "D": 0.0})


def test_confidence_comes_from_the_first_token_even_when_the_text_says_more() -> None:
    top = {"**": math.log(0.5), "C": math.log(0.3), "D": math.log(0.1)}
    parsed = parse_output(_output("**C**", top))
    assert parsed.value["letter"] == "C" and parsed.rule == FIRST_STANDALONE_RULE
    assert parsed.value["confidence"] == pytest.approx(0.75)


def test_no_logprobs_means_no_confidence() -> None:
    parsed = parse_output(ModelOutput("B"))
    assert parsed.value == {"letter": "B", "confidence": None, "probs": None}
    no_letters = parse_output(_output("The", {"The": -0.1, "It": -2.0}))
    assert no_letters.value["confidence"] is None and no_letters.value["probs"] is None
    assert letter_probabilities(None) is None and letter_probabilities({}) is None
