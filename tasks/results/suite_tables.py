"""The tables a suite adds to the store beyond the shared ones (TRIP's Pareto of errors, say).

A suite returns the rows from `Suite.extra_tables`; here they become parts, one per table,
partitioned by suite and model, for the run to land with its metrics: so they appear exactly
when the metrics do (a whole run), and a new suite's table needs no change to the flow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from roadeval.benchmarks.suite import ScoredItem, Suite
from roadeval.storage.landing import Part
from roadeval.storage.records import table_of


def suite_table_parts(
    suite: Suite, model: str, run_id: str, scored: Sequence[ScoredItem]
) -> list[Part]:
    """The suite's extra rows for one model, as one part per table (tables in name order)."""
    by_table: dict[str, list[Any]] = {}
    for row in suite.extra_tables(run_id, model, scored):
        by_table.setdefault(table_of(row), []).append(row)
    return [
        Part(name, rows, suite=suite.name, model=model) for name, rows in sorted(by_table.items())
    ]
