"""Lane-designation metrics: every lane is a multi-label vector over the task's letters;
Hamming loss over lanes x letters and exact match per LANE, as the release computes them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LaneComparison:
    """Mismatched letters and exactly matched lanes of one item (or of many, summed)."""

    lanes: int
    letter_mismatches: int
    exact_lanes: int


def lane_bits(lane: Any, alphabet: str) -> int:
    """A lane's letters as a bit mask over `alphabet`; a non-string lane has no letters."""
    if not isinstance(lane, str):
        return 0
    return sum(1 << index for index, letter in enumerate(alphabet) if letter in lane)


def aligned_prediction(predicted: Any, truth: Sequence[Any]) -> list[Any]:
    """The release's rule: a prediction that is not a list, or has the wrong number of lanes,
    becomes one empty lane per true lane (the true lane count is given in the prompt)."""
    if not isinstance(predicted, list) or len(predicted) != len(truth):
        return [""] * len(truth)
    return predicted


def compare_lanes(predicted: Any, truth: Sequence[Any], alphabet: str) -> LaneComparison:
    """Letter mismatches and exactly matched lanes of one item, after `aligned_prediction`."""
    mismatches = exact = 0
    for guess, gold in zip(aligned_prediction(predicted, truth), truth, strict=True):
        wrong = (lane_bits(guess, alphabet) ^ lane_bits(gold, alphabet)).bit_count()
        mismatches += wrong
        exact += wrong == 0
    return LaneComparison(len(truth), mismatches, exact)


def hamming_loss(total: LaneComparison, alphabet: str) -> float:
    """Share of wrong letters over all lanes x letters; 1.0 when there is no lane at all
    (the release's value for a file without any lane)."""
    if total.lanes == 0:
        return 1.0
    return total.letter_mismatches / (total.lanes * len(alphabet))


def lane_exact_match(total: LaneComparison) -> float:
    """Share of lanes whose letters all match (per lane, not per item); 0.0 without lanes."""
    if total.lanes == 0:
        return 0.0
    return total.exact_lanes / total.lanes


def add_comparisons(parts: Sequence[LaneComparison]) -> LaneComparison:
    """Sum over items: the release pools all lanes of all items before averaging."""
    return LaneComparison(
        lanes=sum(part.lanes for part in parts),
        letter_mismatches=sum(part.letter_mismatches for part in parts),
        exact_lanes=sum(part.exact_lanes for part in parts),
    )


def rule_designations(num_lanes: int) -> list[str]:
    """The release's rule baseline: 1 lane "BCD"; 2 lanes "BC", "CD"; else B, C..., D."""
    if num_lanes <= 0:
        return []
    if num_lanes == 1:
        return ["BCD"]
    if num_lanes == 2:
        return ["BC", "CD"]
    return ["B", *["C"] * (num_lanes - 2), "D"]
