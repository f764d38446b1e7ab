"""TRIP's offline baselines: a uniform guess seeded by its request and the always-A answer."""

from __future__ import annotations

from roadeval.benchmarks.registry import BaselineCall, register_baseline
from roadeval.benchmarks.trip.taxonomy import LETTERS, SUITE_NAME


@register_baseline("random", suite=SUITE_NAME)
def random_letter(call: BaselineCall) -> str:
    """A uniform letter A-D, fixed by the request (seed, prompt, attempt) so reruns reproduce
    it."""
    rng = call.rng()
    return rng.choice(LETTERS)


@register_baseline("always-a", suite=SUITE_NAME)
def always_a(call: BaselineCall) -> str:
    """The same letter every time: shows how far the gold letters are from balanced."""
    return LETTERS[0]
