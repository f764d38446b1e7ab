"""The part index's entries and segments this process wrote or read, kept for its next reads.

Each is written once and never changed (an entry by a conditional create, a segment by the one
writer that took its number), so reading one again is a store request for nothing: a writer
folds the entries it appended itself without reading them back, and every load of the index
in a process (the plan's baseline, the run's queries) reads only what it has not seen. What a
snapshot holds is forgotten once the snapshot is seen: readers start from it.
"""

from __future__ import annotations

import threading
from typing import ClassVar

import pyarrow as pa

# Index objects kept: `entry` and `segment` (a snapshot may be large, and a load reads one).
KINDS = ("entry", "segment")


class IndexMemo:
    """Per store (its URI): the rows of each entry and segment by number."""

    _rows: ClassVar[dict[tuple[str, str, int], pa.Table]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def get(cls, uri: str, kind: str, number: int) -> pa.Table | None:
        with cls._lock:
            return cls._rows.get((uri, kind, number))

    @classmethod
    def keep(cls, uri: str, kind: str, number: int, rows: pa.Table) -> None:
        if kind in KINDS:
            with cls._lock:
                cls._rows[(uri, kind, number)] = rows

    @classmethod
    def forget_through(cls, uri: str, number: int) -> None:
        """Forget the store's entries and segments up to `number`: a snapshot holds them."""
        with cls._lock:
            stale = [key for key in cls._rows if key[0] == uri and key[2] <= number]
            for key in stale:
                del cls._rows[key]
