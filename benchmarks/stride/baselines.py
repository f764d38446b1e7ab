"""The random baseline: a random option letter for MCQ, a plausible forward trajectory for TRJ-5 /
TRJ-6, a short phrase for open questions; fixed by the request (seed, prompt, attempt), read
from the item alone (the gold is withheld)."""

from __future__ import annotations

import json

from roadeval.benchmarks.registry import BaselineCall, register_baseline
from roadeval.benchmarks.stride.tasks import SUITE_NAME, Kind, expected_points

PHRASES = (
    "The road ahead is clear; the ego vehicle keeps its lane at a steady speed.",
    "A vehicle ahead slows down, so the ego vehicle should brake gently.",
    "Daytime urban street with parked cars and light traffic.",
    "The object in the red bounding box is moving away from the ego vehicle.",
    "Proceed with caution and yield to pedestrians at the crossing.",
)
# Ego speed (m/s) and sampling step (s) a plausible trajectory is drawn with.
SPEED_RANGE = (0.0, 12.0)
STEP_S = 0.5


@register_baseline("random", suite=SUITE_NAME)
def random_answer(call: BaselineCall) -> str:
    rng = call.rng()
    kind = Kind(call.item.extra["kind"])
    if kind is Kind.MCQ:
        return rng.choice(sorted(call.item.options))
    if kind is Kind.TRAJECTORY:
        speed = rng.uniform(*SPEED_RANGE)
        drift = rng.uniform(-0.3, 0.3)
        points = [
            [round(speed * STEP_S * step, 3), round(drift * step * step / 4, 3)]
            for step in range(1, expected_points(call.task) + 1)
        ]
        return json.dumps(points)
    return rng.choice(PHRASES)
