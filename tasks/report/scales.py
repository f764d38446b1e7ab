"""A heatmap's colour scale: the range the metric's kind spans at least (its suite's `Scale`),
widened to cover every value shown and rounded out to labelled ticks, so the bar's ends are
printed and no cell is brighter or darker than the bar can say."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from roadeval.benchmarks.vocabulary import Scale

# Tick steps tried per power of ten, and at most this many intervals on a bar.
_STEPS = (1.0, 2.0, 2.5, 5.0)
_MAX_INTERVALS = 5


@dataclass(frozen=True)
class ColourScale:
    """From `low` to `high`, labelled at `ticks` (both ends among them), in `unit`."""

    low: float
    high: float
    ticks: tuple[float, ...]
    unit: str

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high


def _step(span: float, intervals: int) -> float:
    power = 10.0 ** math.floor(math.log10(span / intervals))
    return next((s * power for s in (*_STEPS, 10.0) if span / (s * power) <= intervals), 10 * power)


def colour_scale(
    scale: Scale, values: Iterable[float], intervals: int = _MAX_INTERVALS
) -> ColourScale:
    """The scale's range (`scale.low`/`high`, None: from the data) widened to cover `values`,
    its ends rounded out to ticks, at most `intervals` between them (a short bar: fewer)."""
    seen = [v for v in values if math.isfinite(v)]
    low = min([*([scale.low] if scale.low is not None else []), *seen], default=0.0)
    high = max([*([scale.high] if scale.high is not None else []), *seen], default=1.0)
    if high <= low:
        high = low + 1.0
    step = _step(high - low, intervals)
    start = math.floor(low / step + 1e-9) * step
    end = math.ceil(high / step - 1e-9) * step
    count = round((end - start) / step)
    ticks = tuple(round(start + i * step, 10) for i in range(count + 1))
    return ColourScale(ticks[0], ticks[-1], ticks, scale.unit)
