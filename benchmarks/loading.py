"""Shared reading helpers for suite loaders: JSONL rows with line numbers, bad-row policy, and the
count of fields a release does not define."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, ItemProblem, SuiteSourceError
from roadeval.benchmarks.item import Item

# file -> field name -> how many rows of that file carry the field.
UnknownFields = dict[str, dict[str, int]]


@dataclass
class LoadReport:
    """The items a loader produced, the rows it skipped (only under `BadItemPolicy.SKIP`), and
    the fields outside the release's format that rows carried (counted, never printed here)."""

    items: list[Item] = field(default_factory=list)
    skipped: list[ItemProblem] = field(default_factory=list)
    unknown_fields: UnknownFields = field(default_factory=dict)

    def note_fields(self, file: Path, row: Mapping[str, Any], known: Collection[str]) -> None:
        """Count the keys of `row` that are not in `known` against `file`."""
        for name in row:
            if name not in known:
                counts = self.unknown_fields.setdefault(str(file), {})
                counts[name] = counts.get(name, 0) + 1


def describe_unknown_fields(unknown: Mapping[str, Mapping[str, int]]) -> str:
    """One line for people: `file: 'a' (3 rows), 'b' (1 row); other file: ...`."""
    parts = []
    for file, counts in unknown.items():
        fields = ", ".join(
            f"{name!r} ({n} row{'' if n == 1 else 's'})" for name, n in sorted(counts.items())
        )
        parts.append(f"{file}: {fields}")
    return "; ".join(parts)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | ItemError]]:
    """Yield (line number, row) for each non-blank line; a broken line yields an ItemError.

    Lines are decoded one by one, so a line that is not UTF-8 is one bad row, not the end of
    the file."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise SuiteSourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, _not_utf8(path, number, raw, start, exc)
                continue
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


def _not_utf8(
    path: Path, number: int, raw: bytes, start: int, exc: UnicodeDecodeError
) -> ItemError:
    """Where the bad bytes are; and the item and field, when the rest of the line still reads."""
    bad = raw[exc.start : exc.end]
    message = (
        f"not UTF-8: {bad!r} at byte {exc.start} of the line "
        f"(byte {start + exc.start} of the file): {exc.reason}"
    )
    try:
        row = json.loads(raw.decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        row = None
    item_id = field_name = None
    if isinstance(row, dict):
        field_name = next(
            (
                key
                for key, value in row.items()
                if "\ufffd" in key or "\ufffd" in json.dumps(value, ensure_ascii=False)
            ),
            None,
        )
        raw_id = row.get("id")
        if isinstance(raw_id, str) and raw_id and field_name != "id":
            item_id = raw_id
    return ItemError(ItemProblem(str(path), number, field_name, message, item_id))


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
    *,
    file: Path,
    known_fields: Collection[str],
) -> None:
    """Build items from the rows of `file`; a bad row raises (ERROR) or is recorded and skipped
    (SKIP). Keys outside `known_fields` (the release's row format) are counted in the report."""
    for line, row in rows:
        try:
            if isinstance(row, ItemError):
                raise row
            report.note_fields(file, row, known_fields)
            built = build(line, row)
        except ItemError as exc:
            if policy is BadItemPolicy.ERROR:
                raise
            report.skipped.append(exc.problem)
            continue
        report.items.extend(built if isinstance(built, list) else [built])
