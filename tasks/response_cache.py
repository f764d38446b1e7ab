"""Responses stored in the object store under their request key: a journal and a cache at once.

Each successful answer is written the moment it arrives, so a crashed run loses only the calls in
flight, and any later run with the same request pays for nothing twice.
"""

from __future__ import annotations

from roadeval.storage.store import Store
from roadeval.tasks.request import ModelRequest, ModelResponse


class ResponseCache:
    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def key(request_key: str) -> str:
        return f"cache/responses/{request_key[:2]}/{request_key}.json"

    def get(self, request_key: str) -> ModelResponse | None:
        key = self.key(request_key)
        if not self.store.exists(key):
            return None
        return ModelResponse.from_cache(self.store.get(key))

    def lookup(self, request: ModelRequest) -> ModelResponse | None:
        """The cached answer to `request`; hashes the request first (its image bytes included)."""
        return self.get(request.key)

    def put(self, response: ModelResponse) -> None:
        # Errors are not cached: the next run asks again.
        if response.ok:
            self.store.put(self.key(response.request_key), response.to_cache())
