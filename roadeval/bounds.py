"""The range of a number a person sets (a panel's counts, rates, durations and prices, the flags
that override them): wide enough for any run that could really use it, and each end with its
reason, so that a typo (`samples: 1000000000`) is refused at load, naming the field and why,
before anything is planned.

A `Bound` is a pydantic validator (`Annotated[int, AfterValidator(SAMPLES)]`) and checks a
flag's value the same way (`SAMPLES.problem(value)`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _shown(value: float) -> str:
    """A number as a person reads it: whole ones with thousands separators (a float up to
    10^18, an integer up to 10^30, past which an exponent reads better), others as %g."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e18:
        value = int(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) < 10**30 else f"{value:.3g}"
    return f"{value:g}"


@dataclass(frozen=True)
class Bound:
    """`low` <= value <= `high` (value > `low` when `low_open`), finite; `why` says what the
    number is and why its range ends where it does, in a line."""

    low: float
    high: float
    why: str
    low_open: bool = False

    def problem(self, value: float) -> str | None:
        """Why `value` is out of range (one line, with the reason), or None."""
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value} is not a number in range ({self.span}): {self.why}"
        if self.low_open and value <= self.low:
            return f"{_shown(value)} is not more than {_shown(self.low)}: {self.why}"
        if value < self.low:
            return (
                f"{_shown(value)} is less than {_shown(self.low)}, the least it may be: {self.why}"
            )
        if value > self.high:
            return (
                f"{_shown(value)} is more than {_shown(self.high)}, the most it may be: {self.why}"
            )
        return None

    @property
    def span(self) -> str:
        below = "over" if self.low_open else "from"
        return f"{below} {_shown(self.low)} to {_shown(self.high)}"

    def __call__(self, value: float) -> float:
        """The pydantic validator: `value` itself, or a ValueError with the problem."""
        if (problem := self.problem(value)) is not None:
            raise ValueError(problem)
        return value


# Seconds in a day: the longest wait any duration of a run is allowed (a request, a poll, an
# outage), since one longer than that is a run that hangs.
DAY_S = 86_400
# Processes or CPUs on one machine: more than the cores of any machine a run goes on.
MACHINE_PROCESSES = Bound(
    0, 256, "processes on one machine: past 256 they outnumber its cores and only cost memory"
)
