"""TRIP's offline baselines: a seeded uniform guess and the always-A answer."""

from __future__ import annotations

import random

from roadeval.benchmarks.registry import BaselineCall, register_baseline
from roadeval.benchmarks.trip.taxonomy import LETTERS, SUITE_NAME


@register_baseline("random", suite=SUITE_NAME)
def random_letter(call: BaselineCall) -> str:
    """A uniform letter A-D, fixed by (seed, item, attempt) so reruns reproduce it."""
    rng = random.Random(f"{call.seed}:{SUITE_NAME}:{call.item_id}:{call.attempt}")
    return rng.choice(LETTERS)


@register_baseline("always-a", suite=SUITE_NAME)
def always_a(call: BaselineCall) -> str:
    """The same letter every time: shows how far the gold letters are from balanced."""
    return LETTERS[0]
