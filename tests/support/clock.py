"""A clock that moves only when a test moves it, for code whose windows and expiries would
otherwise be measured on a machine whose load the test does not control."""

from __future__ import annotations


class ManualClock:
    """`clock()` (or `clock.time()`, as the time module spells it) is the time; `advance(s)`
    moves it on. It starts far from zero, as a monotonic clock does, so that no window reaches
    back before it."""

    def __init__(self, start: float = 10_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        assert seconds >= 0, "a clock does not go back"
        self.now += seconds
