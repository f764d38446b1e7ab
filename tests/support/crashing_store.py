"""A folder store that dies, as a killed process would, on its n-th write (a put or a create)."""

from __future__ import annotations

from pathlib import Path

from roadeval.storage.store import LocalStore


class Crash(Exception):
    pass


class CrashingStore(LocalStore):
    """Writes (puts and conditional creates) are counted; the `crash_on`-th raises Crash."""

    def __init__(self, root: Path, crash_on: int) -> None:
        super().__init__(root)
        self.crash_on, self.writes = crash_on, 0

    def _write(self, key: str) -> None:
        self.writes += 1
        if self.writes == self.crash_on:
            raise Crash(key)

    def put(self, key: str, data: bytes) -> None:
        self._write(key)
        super().put(key, data)

    def create(self, key: str, data: bytes) -> bool:
        self._write(key)
        return super().create(key, data)
