"""Telling a suite's files from anything else before auditing them: `roadeval qc` refuses a source
that is not the suite's layout (another suite's file, a text file) in one line, rather than
reporting each of its rows as a bad item.

A file is of the layout when at least one of its rows carries every field of the suite's row
shape: one damaged row, or many, does not make a release file foreign, and a file of another
suite's rows has none that fit. A file without rows is left to the audit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from roadeval.benchmarks.errors import ItemError, SuiteSourceError

# How many of a foreign row's fields a message names.
_FIELDS_SHOWN = 8


@dataclass(frozen=True)
class RowShape:
    """The rows of one kind of file of a suite: what to call them, and the fields each has."""

    name: str
    fields: tuple[str, ...]


def require_shape(file: Path, rows: Iterable[tuple[str, object]], shape: RowShape) -> None:
    """Nothing when a row of `rows` ((where, row): `line 3`, `tasks[2]`) has every field of
    `shape`, or when there is no row; else a SuiteSourceError naming the file, what its rows
    should carry, and what its first row is."""
    first: str | None = None
    for where, row in rows:
        if isinstance(row, dict) and all(name in row for name in shape.fields):
            return
        if first is None:
            first = f"{where}: {describe_row(row)}"
    if first is not None:
        raise SuiteSourceError(
            f"{file} is not {shape.name} (rows with {', '.join(shape.fields)}); found {first}"
        )


def describe_row(row: object) -> str:
    """What a row (or a document) is, in a few words: why it could not be read, or the fields
    it has."""
    if isinstance(row, ItemError):
        return row.problem.message
    if isinstance(row, dict):
        if not row:
            return "an empty object"
        names = [repr(str(name)[:30]) for name in list(row)[:_FIELDS_SHOWN]]
        more = f" and {len(row) - _FIELDS_SHOWN} more" if len(row) > _FIELDS_SHOWN else ""
        return f"an object with the fields {', '.join(names)}{more}"
    return f"a JSON {type(row).__name__}, not an object"


def folder_listing(folder: Path, limit: int = 5) -> str:
    """What a folder holds, for a message: its first entries by name, and how many more."""
    try:
        names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir())
    except OSError as exc:
        return f"a folder that cannot be listed ({exc.strerror or exc})"
    if not names:
        return "an empty folder"
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
