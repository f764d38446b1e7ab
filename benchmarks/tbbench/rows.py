"""Reading the release's rows (`image`, `problem`, `task`, `choice`, `solution`, optional `id`).

Two layouts: Parquet files as on the Hugging Face hub (one split per task, frames embedded as
{bytes, path} structs), or JSONL files whose `image` holds frame paths relative to the file.
Rows are numbered from 1 in both, so an error names the file, the row and the field.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from roadeval.benchmarks.errors import ItemError, ItemProblem, SuiteSourceError
from roadeval.benchmarks.loading import READ_LIMITS, LoadLimits, checked_row, read_jsonl
from roadeval.benchmarks.source_shape import folder_listing
from roadeval.benchmarks.tbbench.tasks import TaskSpec, find_task

Row = dict[str, Any]
PARQUET_BATCH_ROWS = 32  # a batch holds its frames' bytes in memory; 8-frame rows are large
# The release's row fields (`id` only in some layouts); other keys are counted as unknown at load.
ROW_FIELDS: frozenset[str] = frozenset({"id", "image", "problem", "task", "choice", "solution"})
# What pyarrow raises on a file that is not Parquet or is damaged: ArrowInvalid for a bad footer,
# OSError for a page that does not decode (or a file that cannot be read).
_PARQUET_ERRORS = (pa.ArrowException, OSError)


class Layout(StrEnum):
    PARQUET = "parquet"
    JSONL = "jsonl"


@dataclass(frozen=True)
class SourceFiles:
    """The files of one source, in the (sorted) order their rows are read."""

    layout: Layout
    files: tuple[Path, ...]


def find_source_files(source: Path) -> SourceFiles:
    """A .parquet or .jsonl file, or a folder holding files of exactly one of those kinds."""
    if source.is_file():
        for layout in Layout:
            if source.suffix == f".{layout.value}":
                return SourceFiles(layout, (source,))
        raise SuiteSourceError(
            f"{source}: expected a TB-Bench split (a .parquet or .jsonl file) or a folder of "
            f"them; found a file named {source.name!r}"
        )
    if not source.is_dir():
        raise SuiteSourceError(f"{source}: no such file or folder")
    found = {layout: tuple(sorted(source.rglob(f"*.{layout.value}"))) for layout in Layout}
    present = [layout for layout, files in found.items() if files]
    if not present:
        raise SuiteSourceError(
            f"{source}: no .parquet or .jsonl files under this folder (TB-Bench's splits); "
            f"found {folder_listing(source)}"
        )
    if len(present) > 1:
        raise SuiteSourceError(
            f"{source}: holds both .parquet and .jsonl files; point at one layout's folder"
        )
    return SourceFiles(present[0], found[present[0]])


def iter_rows(
    path: Path,
    layout: Layout,
    columns: Sequence[str] | None = None,
    limits: LoadLimits = READ_LIMITS,
) -> Iterator[tuple[int, Row | ItemError]]:
    """(row number from 1, row) for each row; `columns` limits what Parquet decodes. A row
    beyond `limits` (`loading.LoadLimits`, the same in both layouts) is an ItemError."""
    if layout is Layout.JSONL:
        yield from read_jsonl(path, limits)
        return
    try:
        parquet = pq.ParquetFile(path)
        wanted = None
        if columns is not None:
            wanted = [name for name in columns if name in parquet.schema_arrow.names]
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted)
    except _PARQUET_ERRORS as exc:
        raise unreadable_parquet(path, exc) from None
    number = 0
    while True:
        # Only the reading is guarded: an error raised while the caller handles a row is not
        # the file's fault.
        try:
            batch = next(batches, None)
            rows = batch.to_pylist() if batch is not None else None
        except _PARQUET_ERRORS as exc:
            raise unreadable_parquet(path, exc, after_row=number) from None
        if rows is None:
            return
        for row in rows:
            number += 1
            yield number, checked_row(row, limits, path, number)


def unreadable_parquet(
    path: Path, exc: Exception, after_row: int | None = None
) -> SuiteSourceError:
    """The whole file is unusable: name it, say where reading stopped, keep pyarrow's reason."""
    # pyarrow's reasons span lines and can quote raw bytes; keep them on one printable line.
    reason = " ".join(str(exc).split())
    reason = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in reason)
    where = f" (reading from row {after_row + 1})" if after_row is not None else ""
    return SuiteSourceError(f"{path}: not a readable Parquet file{where}: {reason}")


def row_error(
    path: Path, line: int, field_name: str | None, message: str, item_id: str | None
) -> ItemError:
    """An error naming the file, the row (JSONL line, or Parquet row from 1) and the field."""
    return ItemError(ItemProblem(str(path), line, field_name, message, item_id))


@dataclass
class RowIds:
    """Gives each row its item id: the row's own `id` when the layout has one; otherwise
    `<task code>-<n>`, n counting that task's rows from 0 in file order (the index of the row in
    its Hugging Face split, which is what the release iterates). Ids must be unique."""

    _next_index: dict[str, int] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)

    def assign(self, path: Path, line: int, row: Row) -> tuple[str, TaskSpec]:
        """The row's id and task, or an ItemError for an unknown task or a repeated id."""
        own_id = row.get("id")
        item_id = str(own_id) if isinstance(own_id, str | int) and str(own_id) else None
        raw_task = row.get("task")
        spec = find_task(raw_task) if isinstance(raw_task, str) else None
        if spec is None:
            message = "missing" if raw_task is None else f"unknown TB-Bench task {raw_task!r}"
            raise row_error(path, line, "task", message, item_id)
        if item_id is None:
            index = self._next_index.get(spec.code, 0)
            self._next_index[spec.code] = index + 1
            item_id = f"{spec.code}-{index:04d}"
        if item_id in self._seen:
            raise row_error(path, line, "id", "duplicate item id", item_id)
        self._seen.add(item_id)
        return item_id, spec


def require_text(path: Path, line: int, row: Row, key: str, item_id: str) -> str:
    """row[key] as a string, or an ItemError naming file, row, item and field."""
    value = row.get(key)
    if value is None:
        raise row_error(path, line, key, "missing", item_id)
    if not isinstance(value, str):
        raise row_error(path, line, key, f"expected str, got {type(value).__name__}", item_id)
    return value


def read_choices(path: Path, line: int, row: Row, item_id: str) -> tuple[str, ...]:
    """The row's `choice` list; absent or null means no listed choices."""
    value = row.get("choice")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise row_error(path, line, "choice", "expected a list of strings", item_id)
    return tuple(value)
