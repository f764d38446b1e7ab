"""V2X-QA's offline baselines: a uniform letter seeded by its request, and always "A" (the
release's gold letters are skewed: A is right on about 40% of the test split).

Each reports the distribution it really draws from (uniform; all mass on A) as log-probabilities
when asked, so the demo's calibration figures are computed, not left empty.
"""

from __future__ import annotations

import math

from roadeval.benchmarks.registry import BaselineCall, BaselineReply, register_baseline
from roadeval.benchmarks.v2xqa.tasks import LETTERS, SUITE_NAME

UNIFORM = {letter: math.log(1 / len(LETTERS)) for letter in LETTERS}


@register_baseline("random", suite=SUITE_NAME)
def random_letter(call: BaselineCall) -> BaselineReply:
    """A uniform letter A-D, fixed by the request (seed, prompt, attempt) so reruns reproduce
    it."""
    rng = call.rng()
    return BaselineReply(rng.choice(LETTERS), UNIFORM)


@register_baseline("always-a", suite=SUITE_NAME)
def always_a(call: BaselineCall) -> BaselineReply:
    """The majority-prior answer: what the skew of the gold letters alone is worth."""
    return BaselineReply(LETTERS[0], {LETTERS[0]: 0.0})
