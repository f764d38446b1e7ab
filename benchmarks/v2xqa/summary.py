"""Corpus figures over scored items: accuracy per task; per view (VS/IS/CO) and overall the
release's accuracy, ECE and Brier, with how many items had a confidence; accuracy per task
family (roadeval's slice; the release does not print it).

Accuracy is a fraction (0-1; the release prints percent). Overall accuracy is over all items
(the release's "ALL" row), not a mean of the views. ECE and Brier cover the items with a
confidence only (`confidence_items`; the others are `no_confidence_items`); with none, they
are left out rather than set to 0. `letters_seen_lt4` counts the items whose confidence rests
on fewer than four letters (the others had probability 0: see `confidence`), out of the
confidence items; a prediction file says nothing of it, so it has no such row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from roadeval.benchmarks.suite import GroupValue, ParseStatus, ScoredItem
from roadeval.benchmarks.v2xqa.answers import (
    parsed_confidence,
    parsed_letters_seen,
    parsed_probs,
)
from roadeval.benchmarks.v2xqa.calibration import (
    brier_item,
    expected_calibration_error,
    mean_brier,
)
from roadeval.benchmarks.v2xqa.tasks import VIEWS, Family

CORRECT = "correct"
BRIER = "brier"
NO_CONFIDENCE = "no_confidence_items"
LETTERS_SEEN_LT4 = "letters_seen_lt4"
SUITE_WIDE = "*"


@dataclass(frozen=True)
class Outcome:
    """What the corpus metrics need of one item, from a run or from a prediction file."""

    view: str
    family: str
    correct: float
    confidence: float | None = None
    brier: float | None = None
    # Letters among the alternatives the confidence was read from (None: not known, as in a
    # prediction file).
    letters_seen: int | None = None


def outcome_of(row: ScoredItem) -> Outcome:
    probs = parsed_probs(row.parsed)
    labels = row.item.labels
    return Outcome(
        labels["view"],
        labels["family"],
        row.values[CORRECT],
        parsed_confidence(row.parsed),
        brier_item(probs, str(row.item.reference)) if probs is not None else None,
        parsed_letters_seen(row.parsed),
    )


def task_summary(scored: Sequence[ScoredItem]) -> dict[str, float]:
    """accuracy (fraction), unparsed_count (replies with no letter, scored wrong)."""
    if not scored:
        return {}
    unparsed = sum(1 for row in scored if row.parsed.status is ParseStatus.UNPARSED)
    return {
        "accuracy": sum(row.values[CORRECT] for row in scored) / len(scored),
        "unparsed_count": float(unparsed),
    }


def group_metrics(outcomes: Sequence[Outcome]) -> list[tuple[str, float, int]]:
    """(metric, value, n) for one group: accuracy, confidence_items and no_confidence_items
    over all its items; letters_seen_lt4 and ece over those with a confidence, brier over
    those with probabilities, when there are any (letters_seen_lt4 when the letters seen are
    known)."""
    if not outcomes:
        return []
    rows = [("accuracy", sum(o.correct for o in outcomes) / len(outcomes), len(outcomes))]
    confident = [o for o in outcomes if o.confidence is not None]
    rows.append(("confidence_items", float(len(confident)), len(outcomes)))
    # Items with no confidence (no log-probabilities): counted, never given an invented one.
    rows.append((NO_CONFIDENCE, float(len(outcomes) - len(confident)), len(outcomes)))
    if confident and any(o.letters_seen is not None for o in confident):
        # A confidence from fewer than four letters gave the others 0: a diagram shows how many.
        partial = sum(1 for o in confident if o.letters_seen is not None and o.letters_seen < 4)
        rows.append((LETTERS_SEEN_LT4, float(partial), len(confident)))
    ece = expected_calibration_error(
        [o.confidence for o in confident if o.confidence is not None],
        [o.correct for o in confident],
    )
    if ece is not None:
        rows.append(("ece", ece, len(confident)))
    briers = [o.brier for o in outcomes if o.brier is not None]
    brier = mean_brier(briers)
    if brier is not None:
        rows.append((BRIER, brier, len(briers)))
    return rows


def group_values(outcomes: Sequence[Outcome]) -> list[GroupValue]:
    """Suite-wide rows (task '*'): slice 'view' per VS/IS/CO and slice '' overall, each with
    group_metrics; slice 'family' with accuracy only."""
    values: list[GroupValue] = []
    for view in VIEWS:
        members = [o for o in outcomes if o.view == view.value]
        values.extend(
            GroupValue(SUITE_WIDE, "view", view.value, metric, value, n)
            for metric, value, n in group_metrics(members)
        )
    values.extend(
        GroupValue(SUITE_WIDE, "", "", metric, value, n)
        for metric, value, n in group_metrics(outcomes)
    )
    for family in Family:
        members = [o for o in outcomes if o.family == family.value]
        if members:
            accuracy = sum(o.correct for o in members) / len(members)
            values.append(
                GroupValue(SUITE_WIDE, "family", family.value, "accuracy", accuracy, len(members))
            )
    return values
