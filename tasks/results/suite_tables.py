"""The tables a suite adds to the store beyond the shared ones (TRIP's Pareto of errors, say).

A suite declares them (`Suite.tables`, registered with the suite) and returns their rows from
`Suite.extra_tables`; here they become parts, one per table, partitioned by suite and model, for
the run to land with its metrics: so they appear exactly when the metrics do (a whole run), and
a new suite's table needs no change to the flow or to storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from roadeval.benchmarks.suite import ScoredItem, Suite
from roadeval.storage.landing import Part
from roadeval.storage.records import TABLES


def suite_table_parts(
    suite: Suite, model: str, run_id: str, scored: Sequence[ScoredItem]
) -> list[Part]:
    """The suite's extra rows for one model, as one part per table (tables in name order). A
    row that is not the record of a table the suite declares (and so registered) fails here,
    before anything is landed."""
    table_of = {record: name for name, record in suite.tables.items()}
    by_table: dict[str, list[Any]] = {}
    for row in suite.extra_tables(run_id, model, scored):
        name = table_of.get(type(row))
        if name is None:
            declared = ", ".join(sorted(suite.tables)) or "none"
            raise TypeError(
                f"suite {suite.name!r} returned a {type(row).__name__} row, the record of none "
                f"of its tables (declared: {declared})"
            )
        by_table.setdefault(name, []).append(row)
    for name in by_table:
        if TABLES.get(name) is not suite.tables[name]:
            raise TypeError(f"table {name!r} of suite {suite.name!r} is not registered")
    return [
        Part(name, rows, suite=suite.name, model=model) for name, rows in sorted(by_table.items())
    ]
