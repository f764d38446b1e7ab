"""95% confidence intervals of headline metrics: the Wilson score interval for a share of 0/1
verdicts of independent items, a seeded percentile bootstrap over items for everything else,
over clusters of items where items share a scene, an image or a clip (docs/metrics.md).

Wilson rather than Clopper-Pearson: its coverage is close to 95% on average over p (Brown, Cai
and DasGupta, 2001), where Clopper-Pearson's is above it by construction (often 97-99% at the
sizes of these suites), so its wider intervals would hide real differences between models.
"""

from __future__ import annotations

import hashlib
import math
from statistics import NormalDist
from typing import Annotated

import numpy as np
from numpy.typing import NDArray
from pydantic import AfterValidator, BaseModel, ConfigDict

from roadeval.benchmarks.suite import Verdicts
from roadeval.bounds import Bound

LEVEL = 0.95
# 1,000 resamples put the 2.5% and 97.5% percentiles within a few hundredths of a standard error
# of their limit, and cost ~0.1 s per 10,000 items on one core.
RESAMPLES = Bound(
    100,
    100_000,
    "bootstrap draws: fewer than 100 leave the 95% interval's ends to chance, and each costs "
    "~0.1 ms per 10,000 items, so 100,000 take 10 s per headline of such a suite",
)
SEED = Bound(0, 2**63 - 1, "the bootstrap's seed: a 64-bit integer, as its readers hold one")
WILSON = "wilson"
BOOTSTRAP = "percentile bootstrap"
CLUSTERED = "cluster percentile bootstrap"
PAIRED = "paired percentile bootstrap"


class IntervalSettings(BaseModel):
    """The panel's `intervals:`: how many bootstrap resamples, and the seed they are drawn
    from (recorded in the run's manifest)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    resamples: Annotated[int, AfterValidator(RESAMPLES)] = 1000
    seed: Annotated[int, AfterValidator(SEED)] = 0


def wilson(verdicts: Verdicts, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of successes / trials, times the verdicts' scale."""
    n, k = verdicts.trials, verdicts.successes
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"no binomial interval for {k} successes in {n} trials")
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    share = k / n
    denominator = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denominator
    # At 0 (or n) successes the bound is 0 (or 1) exactly; the formula leaves rounding there.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low * verdicts.scale, high * verdicts.scale


def percentile(draws: NDArray[np.float64], level: float = LEVEL) -> tuple[float, float] | None:
    """The percentile interval of bootstrap draws; resamples where the metric is undefined (NaN:
    no item it covers was drawn) are left out. None when no resample defines it."""
    defined = draws[np.isfinite(draws)]
    if defined.size == 0:
        return None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_p(draws: NDArray[np.float64]) -> float | None:
    """The two-sided bootstrap p-value of a difference's draws against 0: twice the share of
    defined resamples on the far side of 0 (ties with 0 counted on both sides), at most 1. It
    is the level at which the percentile interval would just reach 0, so p < 1 - LEVEL where
    the 95% interval leaves 0 out; its resolution is one resample (0: none crossed 0). None
    when no resample defines the difference."""
    defined = draws[np.isfinite(draws)]
    if defined.size == 0:
        return None
    below = float(np.count_nonzero(defined <= 0)) / defined.size
    above = float(np.count_nonzero(defined >= 0)) / defined.size
    return min(1.0, 2 * min(below, above))


def seeded(seed: int, *scope: str) -> np.random.Generator:
    """The generator of one draw: the panel's seed and what is drawn (suite, variant, task, the
    item ids), so a draw does not depend on the order in which draws are made."""
    digest = hashlib.blake2b("\x1f".join(scope).encode(), digest_size=16).digest()
    words = np.frombuffer(digest, dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence([seed, *words.tolist()]))
