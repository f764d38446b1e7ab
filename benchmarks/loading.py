"""Shared reading helpers for suite loaders: JSONL rows with line numbers, bad-row policy."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, ItemProblem
from roadeval.benchmarks.item import Item


@dataclass
class LoadReport:
    """The items a loader produced and the rows it skipped (only under `BadItemPolicy.SKIP`)."""

    items: list[Item] = field(default_factory=list)
    skipped: list[ItemProblem] = field(default_factory=list)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | ItemError]]:
    """Yield (line number, row) for each non-blank line; a broken line yields an ItemError."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, ItemError(ItemProblem(str(path), number, None, f"not JSON: {exc}"))
                continue
            if not isinstance(row, dict):
                yield (
                    number,
                    ItemError(ItemProblem(str(path), number, None, "row is not a JSON object")),
                )
                continue
            yield number, row


def require(
    row: dict[str, Any], key: str, path: Path, line: int | None, kinds: type | tuple = object
) -> Any:
    """Return row[key], or raise an ItemError naming file, line, field (and item id if known)."""
    item_id = row.get("id") if isinstance(row.get("id"), str) else None
    if key not in row or row[key] is None:
        raise ItemError(ItemProblem(str(path), line, key, "missing", item_id))
    value = row[key]
    if not isinstance(value, kinds):
        names = kinds.__name__ if isinstance(kinds, type) else "/".join(k.__name__ for k in kinds)
        raise ItemError(
            ItemProblem(
                str(path), line, key, f"expected {names}, got {type(value).__name__}", item_id
            )
        )
    return value


def collect(
    rows: Iterator[tuple[int, dict[str, Any] | ItemError]],
    build: Callable[[int, dict[str, Any]], Item | list[Item]],
    policy: BadItemPolicy,
    report: LoadReport,
) -> None:
    """Build items from rows; a bad row raises (ERROR) or is recorded and skipped (SKIP)."""
    for line, row in rows:
        try:
            if isinstance(row, ItemError):
                raise row
            built = build(line, row)
        except ItemError as exc:
            if policy is BadItemPolicy.ERROR:
                raise
            report.skipped.append(exc.problem)
            continue
        report.items.extend(built if isinstance(built, list) else [built])
