"""TRIP's own store table: `pareto`, the Pareto of errors, declared on the suite
(`TripSuite.tables`) and registered with it. Its name and columns are those of the table runs
have always landed, so stores written before it moved here read the same."""

from __future__ import annotations

from dataclasses import dataclass

from roadeval.storage.records import Int32

PARETO = "pareto"


@dataclass(frozen=True)
class ErrorParetoRow:
    """One bar of a Pareto chart of errors: for one model and one group of items (TRIP: a
    role), a category (TRIP: a knowledge point) with its errors, ranked by errors (most first,
    ties by name, rank 1 first); `share` is its part of the group's errors, `cumulative_share`
    the running total down to this rank (1.0 at the last). A group without errors has no rows."""

    run_id: str
    suite: str
    model: str
    role: str
    knowledge_point: str
    rank: Int32
    errors: int
    share: float
    cumulative_share: float


# The suite's tables, by name (see `Suite.tables`).
TABLES = {PARETO: ErrorParetoRow}
