"""Live per-model counters of a run's calls, for the progress display: written by the gateway as
calls end, read by whoever draws the progress (a plain snapshot; no locks needed to read)."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True)
class StatsSnapshot:
    """One model's counters at one moment."""

    model: str
    planned: int
    done: int
    failed: int
    rate_limited: int
    spent_usd: float
    per_minute: float

    @property
    def left(self) -> int:
        return max(0, self.planned - self.done)


@dataclass
class CallStats:
    """One model's calls in this run: planned, done, failed, 429s, USD spent, recent rate."""

    model: str
    planned: int = 0
    done: int = 0
    failed: int = 0
    rate_limited: int = 0
    spent_usd: float = 0.0
    _recent: deque[float] = field(default_factory=deque, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    WINDOW_S = 30.0

    def plan(self, requests: int) -> None:
        with self._lock:
            self.planned += requests

    def record(self, *, ok: bool, cost_usd: float | None, rate_limited: int = 0) -> None:
        """A request ended (its last try): answered or failed, at this cost, after these 429s."""
        self.record_many(1, failed=int(not ok), cost_usd=cost_usd, rate_limited=rate_limited)

    def record_many(
        self, done: int, *, failed: int, cost_usd: float | None, rate_limited: int = 0
    ) -> None:
        """`done` requests ended (`failed` of them failed), at this cost in all, after these
        429s: an answer worker's calls of one moment, counted at once."""
        now = time.monotonic()
        with self._lock:
            self.done += done
            self.failed += failed
            self.rate_limited += rate_limited
            self.spent_usd += cost_usd or 0.0
            self._recent.extend([now] * done)
            while self._recent and self._recent[0] < now - self.WINDOW_S:
                self._recent.popleft()

    def snapshot(self) -> StatsSnapshot:
        now = time.monotonic()
        with self._lock:
            while self._recent and self._recent[0] < now - self.WINDOW_S:
                self._recent.popleft()
            span = min(self.WINDOW_S, max(1e-9, now - self._recent[0])) if self._recent else 1.0
            rate = 60.0 * len(self._recent) / span if self._recent else 0.0
            return StatsSnapshot(
                self.model,
                self.planned,
                self.done,
                self.failed,
                self.rate_limited,
                self.spent_usd,
                rate,
            )
