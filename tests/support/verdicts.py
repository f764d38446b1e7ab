"""Scored items made up for the intervals' tests: TRIP-shaped items (the labels its metrics
read) and 0/1 verdicts or values drawn for them, without asking any model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem

MODALITIES = ("text", "text", "image", "point cloud")
DIFFICULTIES = ("easy", "medium", "hard")
CAPABILITIES = ("knowledge memory", "logical reasoning")


def trip_items(n: int, prefix: str = "i") -> list[Item]:
    """`n` TRIP items with modality, difficulty and capability labels spread over them."""
    return [
        Item(
            suite="trip",
            suite_version="test",
            item_id=f"{prefix}{k:05d}",
            task="mcq",
            question=f"question {k}",
            options={"A": "a", "B": "b", "C": "c", "D": "d"},
            answer_kind=AnswerKind.CHOICE,
            reference="A",
            labels={
                "modality": MODALITIES[k % len(MODALITIES)],
                "difficulty": DIFFICULTIES[k % len(DIFFICULTIES)],
                "capability": CAPABILITIES[k % len(CAPABILITIES)],
            },
        )
        for k in range(n)
    ]


def task_items(tasks: Sequence[str], per_task: int, suite: str = "tbbench") -> list[Item]:
    """`per_task` plain items in each task."""
    return [
        Item(
            suite=suite,
            suite_version="test",
            item_id=f"{task}-{k:05d}",
            task=task,
            question=f"question {k}",
            answer_kind=AnswerKind.LABEL,
            reference="x",
        )
        for task in tasks
        for k in range(per_task)
    ]


def scored(items: Sequence[Item], values: Sequence[Any], key: str = "correct") -> list[ScoredItem]:
    """Each item scored `key` = its value (a 0/1 verdict: a bool or a number)."""
    parsed = ParsedAnswer(ParseStatus.OK, "A", "letter")
    return [
        ScoredItem(item, parsed, {key: float(value)})
        for item, value in zip(items, values, strict=True)
    ]


def drawn_verdicts(items: Sequence[Item], accuracy: float, seed: int) -> list[ScoredItem]:
    """Verdicts drawn independently with probability `accuracy` of being right."""
    rng = np.random.default_rng(seed)
    return scored(items, rng.random(len(items)) < accuracy)
