"""An S3 store's concurrency: its requests in flight at once, however many threads call it.

Callers take one of the store's slots for each request, and the client's connection pool is as
large as the slots, so urllib3 never opens a connection past the pool only to discard it
("Connection pool is full, discarding connection"). An event loop's calls run in the store's own
threads, as many as the slots, not behind the loop's few default ones.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

VARIABLE = "ROADEVAL_S3_CONCURRENCY"
DEFAULT = 32


def s3_concurrency() -> int:
    """Requests an S3 store has in flight at once: ROADEVAL_S3_CONCURRENCY, else 32."""
    configured = os.environ.get(VARIABLE)
    if configured is None:
        return DEFAULT
    try:
        value = int(configured)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{VARIABLE}={configured!r}: give a whole number of requests, >= 1")
    return value


class S3Slots:
    """`with slots:` around each request; `executor()` for an event loop's calls."""

    def __init__(self) -> None:
        self.concurrency = s3_concurrency()
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        self._slots.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._slots.release()

    def executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.concurrency, thread_name_prefix="roadeval-s3"
                )
            return self._executor
