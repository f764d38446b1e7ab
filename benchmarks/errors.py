"""Errors for bad benchmark input: each names the file, the line or item, and the field."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class BadItemPolicy(StrEnum):
    """What a loader does with a malformed row: stop with an error, or skip it and report it."""

    ERROR = "error"
    SKIP = "skip"


class UnknownFieldPolicy(StrEnum):
    """What loading does when rows carry fields the release does not define: the loader counts
    them in its report either way; under ERROR the suite does not load."""

    WARN = "warn"
    ERROR = "error"


@dataclass(frozen=True)
class ItemProblem:
    """Where a row is wrong and why; kept in the manifest when the row is skipped."""

    file: str
    line: int | None
    field: str | None
    message: str
    item_id: str | None = None

    def __str__(self) -> str:
        where = self.file + (f", line {self.line}" if self.line is not None else "")
        if self.item_id:
            where += f", item {self.item_id!r}"
        field = f", field {self.field!r}" if self.field else ""
        return f"{where}{field}: {self.message}"


class ItemError(ValueError):
    """A malformed benchmark row; carries the problem so callers can skip or report it."""

    def __init__(self, problem: ItemProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


class SuiteSourceError(ValueError):
    """A suite's source is missing or unreadable as a whole (not one bad row)."""
