"""Table records for storage tests: the fields a test names, every other one left empty."""

from __future__ import annotations

import dataclasses
from typing import Any

from roadeval.storage.records import TABLES


def record(table: str, **given: Any) -> Any:
    """A record of `table` with `given` fields and None elsewhere (every column is nullable)."""
    cls = TABLES[table]
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(given) - names
    if unknown:
        raise TypeError(f"{table} has no fields {sorted(unknown)}")
    return cls(**{name: given.get(name) for name in names})
