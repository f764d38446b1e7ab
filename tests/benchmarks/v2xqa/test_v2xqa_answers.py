"""The release's letter parser (quirks included) and the confidence read from log-probs: at the
first output position whose alternatives hold a letter, over the letters seen there."""

from __future__ import annotations

import math

import pytest

from roadeval.benchmarks.output import ModelOutput, TokenLogprob
from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.v2xqa.answers import (
    EXACT_RULE,
    FIRST_STANDALONE_RULE,
    NO_LETTER_RULE,
    parse_output,
    read_letter,
)
from roadeval.benchmarks.v2xqa.confidence import letter_probabilities, read_letters


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
    assert parsed.value == {
        "letter": None,
        "confidence": None,
        "probs": None,
        "letters_seen": 0,
        "position": None,
    }
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
    assert (parsed.value["letters_seen"], parsed.value["position"]) == (2, 0)


def test_no_logprobs_means_no_confidence() -> None:
    parsed = parse_output(ModelOutput("B"))
    assert parsed.value == {
        "letter": "B",
        "confidence": None,
        "probs": None,
        "letters_seen": 0,
        "position": None,
    }
    no_letters = parse_output(_output("The", {"The": -0.1, "It": -2.0}))
    assert no_letters.value["confidence"] is None and no_letters.value["probs"] is None
    assert (no_letters.value["letters_seen"], no_letters.value["position"]) == (0, None)
    assert letter_probabilities(None) is None and letter_probabilities({}) is None


def _tokens(*positions: dict[str, float]) -> ModelOutput:
    """An output whose position i has `positions[i]` as its alternatives (the likeliest chosen)."""
    chosen = [max(top, key=lambda token: top[token]) for top in positions]
    logprobs = tuple(
        TokenLogprob(token, top[token], tuple((t, lp) for t, lp in top.items() if t != token))
        for token, top in zip(chosen, positions, strict=True)
    )
    return ModelOutput("".join(chosen), logprobs=logprobs)


def test_spellings_of_one_letter_leave_the_others_unseen_in_a_top_four() -> None:
    # The release-sized top 4 at the first position: all spellings of A, so B-D get 0.
    spellings = {"A": math.log(0.90), " A": math.log(0.04), "a": math.log(0.02), "A.": -5.0}
    four = read_letters(_tokens(spellings))
    assert four.probs == {"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}
    assert (four.confidence, four.letters_seen, four.position) == (1.0, 1, 0)
    # With the top 20 the other letters are there further down: a confidence below 1.
    twenty = {**spellings, "B": math.log(0.01), "C": math.log(0.006), "D": math.log(0.004)}
    twenty.update({f"w{i}": -9.0 - i for i in range(13)})
    assert len(twenty) == 20
    reading = read_letters(_tokens(twenty))
    assert reading.letters_seen == 4 and reading.position == 0
    # " A" and "a" spell A but the likeliest spelling stands for it: 0.90 against 0.02 in all.
    assert reading.probs == pytest.approx(
        {"A": 0.90 / 0.92, "B": 0.01 / 0.92, "C": 0.006 / 0.92, "D": 0.004 / 0.92}
    )


@pytest.mark.parametrize(
    ("opening", "position"),
    [
        ([{"(": -0.05, "**": -3.5, "Answer": -4.0}], 1),
        (
            [
                {"The": -0.1, "Answer": -2.5, "**": -4.0},
                {" answer": -0.01, " correct": -5.0},
                {" is": -0.01, ":": -4.8},
            ],
            3,
        ),
    ],
    ids=["parenthesis", "the-answer-is"],
)
def test_a_reply_that_opens_with_another_token_is_read_at_its_letter(
    opening: list[dict[str, float]], position: int
) -> None:
    letters = {" B": math.log(0.7), " C": math.log(0.2), " A": math.log(0.05), " D": math.log(0.05)}
    output = _tokens(*opening, letters, {")": -0.1, ".": -2.4})
    parsed = parse_output(output)
    assert parsed.value["letter"] == "B"
    assert parsed.value["position"] == position and parsed.value["letters_seen"] == 4
    assert parsed.value["confidence"] == pytest.approx(0.7)
    assert parsed.value["probs"] == pytest.approx({"A": 0.05, "B": 0.7, "C": 0.2, "D": 0.05})


def test_fewer_than_four_letters_seen_are_counted_and_the_rest_get_zero() -> None:
    output = _tokens({"**": -0.4, "C": math.log(0.3), " d": math.log(0.1), "Option": -3.0})
    parsed = parse_output(output)
    assert (parsed.value["letters_seen"], parsed.value["position"]) == (2, 0)
    assert parsed.value["probs"] == pytest.approx({"A": 0.0, "B": 0.0, "C": 0.75, "D": 0.25})
    # A non-finite log-probability is no sighting of its letter.
    assert read_letters(_tokens({"B": -0.2, "A": -math.inf})).letters_seen == 1


def test_the_first_letter_bearing_position_wins_even_if_a_later_one_is_surer() -> None:
    # The rule reads one position, the first with a letter among its alternatives.
    output = _tokens({"Option": -0.1, " A": -6.0}, {" B": -0.01, " C": -5.0})
    reading = read_letters(output)
    assert (reading.position, reading.letters_seen, reading.confidence) == (0, 1, 1.0)
