"""Per-model call limits: concurrency and requests per minute, shared by every caller of a model."""

from __future__ import annotations

import asyncio
import time


class CallLimiter:
    """Admits a call when a concurrency slot is free and the rpm spacing allows it."""

    def __init__(self, max_concurrency: int, rpm: float | None) -> None:
        self._slots = asyncio.Semaphore(max_concurrency)
        self._interval = 60.0 / rpm if rpm else 0.0
        self._next_start = 0.0
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> CallLimiter:
        await self._slots.acquire()
        if self._interval:
            async with self._lock:
                now = time.monotonic()
                wait = self._next_start - now
                self._next_start = max(now, self._next_start) + self._interval
            if wait > 0:
                await asyncio.sleep(wait)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._slots.release()
