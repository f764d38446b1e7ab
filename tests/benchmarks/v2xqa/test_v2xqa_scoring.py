"""Scoring a run: per item `correct` and Brier (or the reason there is none), per task accuracy
and unparsed count, per view and overall accuracy, ECE and Brier over the items that have a
confidence, with the others counted as having none."""

from __future__ import annotations

import math

import pytest
from v2xqa_support import RowFactory, WriteSource

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.output import ModelOutput, TokenLogprob
from roadeval.benchmarks.suite import ScoredItem
from roadeval.benchmarks.v2xqa.suite import NO_LOGPROBS, V2XQASuite

SUITE = V2XQASuite()


@pytest.fixture
def items(write_source: WriteSource, row: RowFactory) -> dict[str, Item]:
    # Every gold is B (make_row's).
    source = write_source(
        {
            "VS1": [row("VS1", "000001"), row("VS1", "000002")],
            "IS3": [row("IS3", "000001")],
            "CO2": [row("CO2", "000001"), row("CO2", "000002")],
        }
    )
    return {item.item_id: item for item in SUITE.load(source).items}


def _with_probs(text: str, probs: dict[str, float]) -> ModelOutput:
    first = max(probs, key=lambda letter: probs[letter])
    top = tuple((k, math.log(v)) for k, v in probs.items() if k != first)
    return ModelOutput(text, logprobs=(TokenLogprob(first, math.log(probs[first]), top),))


def _score(item: Item, output: ModelOutput) -> ScoredItem:
    parsed = SUITE.parse(item, output)
    return ScoredItem(item, parsed, SUITE.score(item, parsed))


def test_item_scores_with_and_without_logprobs(items: dict[str, Item]) -> None:
    item = items["VS1:000001"]
    probs = {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}
    with_probs = SUITE.score_details(item, SUITE.parse(item, _with_probs("B", probs)))
    assert with_probs.values["correct"] == 1.0
    assert with_probs.values["brier"] == pytest.approx(0.01 + 0.16 + 0.04 + 0.01)
    assert with_probs.details == {
        "confidence": pytest.approx(0.6),
        "letters_seen": 4,
        "position": 0,
    }
    bare = SUITE.score_details(item, SUITE.parse(item, ModelOutput("C")))
    assert bare.values == {"correct": 0.0} and bare.unscored == {"brier": NO_LOGPROBS}
    assert bare.details == {"letters_seen": 0, "position": None}
    assert "no confidence" in NO_LOGPROBS


def test_corpus_metrics_by_hand(items: dict[str, Item]) -> None:
    scored = [
        # VS: right at 0.8; wrong ("D") with no log-probabilities.
        _score(items["VS1:000001"], _with_probs("B", {"A": 0.1, "B": 0.8, "C": 0.05, "D": 0.05})),
        _score(items["VS1:000002"], ModelOutput("D")),
        # IS: no letter at all: wrong, unparsed, no confidence.
        _score(items["IS3:000001"], ModelOutput("cannot tell")),
        # CO: wrong at 0.5 ("A"), right at 1.0.
        _score(
            items["CO2:000001"], _with_probs("A", {"A": 0.5, "B": 0.25, "C": 0.125, "D": 0.125})
        ),
        _score(items["CO2:000002"], _with_probs("B", {"B": 1.0})),
    ]
    assert SUITE.summarize("VS1", scored[:2]) == {"accuracy": 0.5, "unparsed_count": 0.0}
    assert SUITE.summarize("IS3", scored[2:3]) == {"accuracy": 0.0, "unparsed_count": 1.0}
    values = {
        (g.slice, g.slice_value, g.metric): (g.value, g.n) for g in SUITE.group_values(scored)
    }
    assert values[("view", "VS", "accuracy")] == (0.5, 2)
    assert values[("view", "VS", "confidence_items")] == (1.0, 2)
    assert values[("view", "VS", "no_confidence_items")] == (1.0, 2)
    assert values[("view", "VS", "letters_seen_lt4")] == (0.0, 1)
    assert values[("view", "VS", "ece")] == (pytest.approx(0.2), 1)
    assert values[("view", "VS", "brier")] == (pytest.approx(0.04 + 0.01 + 0.0025 * 2), 1)
    # IS: accuracy and the count of items without a confidence; no ECE or Brier is made up.
    assert values[("view", "IS", "accuracy")] == (0.0, 1)
    assert values[("view", "IS", "no_confidence_items")] == (1.0, 1)
    assert ("view", "IS", "ece") not in values and ("view", "IS", "brier") not in values
    assert ("view", "IS", "letters_seen_lt4") not in values
    # CO: 0.5 wrong in (5/12, 6/12], 1.0 right in (11/12, 1]: ECE (0.5 + 0) / 2.
    assert values[("view", "CO", "ece")] == (pytest.approx(0.25), 2)
    # The right answer at 1.0 saw one letter only: of the two confidences, one rests on fewer.
    assert values[("view", "CO", "letters_seen_lt4")] == (1.0, 2)
    co_brier = (0.25 + 0.5625 + 2 * 0.015625 + 0.0) / 2
    assert values[("view", "CO", "brier")] == (pytest.approx(co_brier), 2)
    # Overall: accuracy over all five; ECE over the three with a confidence, one bin each.
    assert values[("", "", "accuracy")] == (pytest.approx(2 / 5), 5)
    assert values[("", "", "no_confidence_items")] == (2.0, 5)
    assert values[("", "", "letters_seen_lt4")] == (1.0, 3)
    assert values[("", "", "ece")] == (pytest.approx((0.2 + 0.5 + 0.0) / 3), 3)
    # Families: VS1 and CO2 are perception, IS3 reasoning-planning.
    assert values[("family", "perception", "accuracy")] == (0.5, 4)
    assert values[("family", "reasoning-planning", "accuracy")] == (0.0, 1)
