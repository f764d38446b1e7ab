"""Responses stored in the object store under their request key: a journal and a cache at once.

Each successful answer is written the moment it arrives, so a crashed run loses only the calls in
flight, and any later run with the same request pays for nothing twice. An entry that cannot be
read back (truncated, emptied, edited by hand) is a miss that is reported, never a crash.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from roadeval.storage.store import Store
from roadeval.tasks.requests.request import CorruptCacheEntry, ModelCall, ModelRequest


@dataclass(frozen=True)
class CorruptEntry:
    """A cache entry that was ignored, and why; listed in the run's manifest."""

    request_key: str
    location: str
    reason: str

    def __str__(self) -> str:
        return f"{self.location}: {self.reason}"


class ResponseCache:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._corrupt: dict[str, CorruptEntry] = {}
        self._lock = threading.Lock()

    @property
    def corrupt(self) -> list[CorruptEntry]:
        """Entries found unreadable so far, each once however often it was looked up."""
        with self._lock:
            return list(self._corrupt.values())

    @staticmethod
    def key(request_key: str) -> str:
        return f"cache/responses/{request_key[:2]}/{request_key}.json"

    def get(self, request_key: str) -> ModelCall | None:
        key = self.key(request_key)
        try:
            data = self.store.get(key)
        except FileNotFoundError:
            return None
        try:
            return ModelCall.from_cache(data, request_key)
        except CorruptCacheEntry as exc:
            with self._lock:
                entry = CorruptEntry(request_key, self.store.location(key), str(exc))
                self._corrupt.setdefault(request_key, entry)
            return None

    def lookup(self, request: ModelRequest) -> ModelCall | None:
        """The cached answer to `request`; hashes the request first (its image bytes included)."""
        return self.get(request.key)

    def put(self, response: ModelCall) -> None:
        """Keep a successful answer; errors are not cached, so the next run asks again."""
        if response.ok:
            self.store.put(self.key(response.request_key), response.to_cache())
