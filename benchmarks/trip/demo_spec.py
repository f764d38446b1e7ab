"""The record a demo item is written from: its labels, question, options and optional drawing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image


@dataclass(frozen=True)
class DemoSpec:
    """One demo question. The generator decides the gold letter, so options are given as the
    correct one plus three near-miss distractors, each built from one identifiable error."""

    role: str
    subject: str
    knowledge_point: str
    capability: str
    difficulty: str
    question: str
    correct: str
    distractors: tuple[str, str, str]
    explanation: str
    # Draws the image the question is about; None for a text item.
    picture: Callable[[], Image.Image] | None = None
    # The seed of the synthetic scan a point-cloud item is about; None for other items.
    scan_seed: int | None = None
