"""A baseline table of one suite x model as the columns a rerun reads (its parses' attempts and
statuses, its scores' metrics and values), with a row made into a record only when one is
wanted: a rerun copies most outcomes whole and never needs their records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from roadeval.storage.landing import records_of

# Whose outcome a row is about: its item, sample and variant ('' as released, 'blind').
OutcomeKey = tuple[str, int, str]

# Records asked for a few rows at a time are taken from their rows alone up to this many asks;
# past it every record is made at once (a rescore wants them all), which costs less per row.
_FEW_ASKS = 512


class LandedColumns:
    """The `columns` of a landed table (`name`, read whole as Arrow), each row's outcome key,
    and its records made on demand: a few from their own rows (a rerun's fixed items), past
    that all of them once."""

    def __init__(self, name: str, table: pa.Table, columns: Sequence[str]) -> None:
        self.name, self.table = name, table
        self.values: dict[str, list[Any]] = {c: table.column(c).to_pylist() for c in columns}
        # Rows landed before samples (or variants) were kept: the first sample, as released.
        self.keys: list[OutcomeKey] = [
            (item, sample or 1, variant or "")
            for item, sample, variant in zip(
                table.column("item_id").to_pylist(),
                table.column("sample").to_pylist(),
                table.column("variant").to_pylist(),
                strict=True,
            )
        ]
        self._records: list[Any] | None = None
        self._asks = 0

    def rows_of(self) -> dict[OutcomeKey, list[int]]:
        """Row numbers by outcome, in landed order."""
        found: dict[OutcomeKey, list[int]] = {}
        for at, key in enumerate(self.keys):
            found.setdefault(key, []).append(at)
        return found

    def records(self, rows: Sequence[int]) -> tuple[Any, ...]:
        if self._records is None and self._asks < _FEW_ASKS:
            self._asks += 1
            return tuple(records_of(self.name, self.table.take(pa.array(rows, pa.int64()))))
        if self._records is None:
            self._records = records_of(self.name, self.table)
        return tuple(self._records[at] for at in rows)
