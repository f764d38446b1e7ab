"""Shared reading helpers for suite loaders: JSONL rows with line numbers, bad-row policy, the
count of fields a release does not define, and the limits every row is read within.

The limits (`LoadLimits`) hold for every suite and every layout (a JSONL line, a Parquet row, a
task row of a JSON file): a row nested deeper than `max_depth` levels (the row object is level 1),
a text (a string value, or a key) longer than `max_text_chars` characters, a JSONL line longer
than `max_row_bytes` bytes, an integer of thousands of digits (which Python will not read) and a
lone surrogate (text no file can hold) are each a bad row naming the file, the line and the
field, never a traceback. A suite's panel `options` may set the three bounds (`take_limits`).
Files read outside a suite's load (a release's prediction files, whose replies may be long) are
held to `READ_LIMITS`: the same, with no bound on text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, ItemProblem, SuiteSourceError
from roadeval.benchmarks.item import Item
from roadeval.names import describe_character, quoted, refused_character

# file -> field name -> how many rows of that file carry the field.
UnknownFields = dict[str, dict[str, int]]

# The deepest `max_depth` a suite option may set: Python's JSON reader itself stops near 1,000
# levels (a RecursionError, reported as too deep), so a larger bound could not be honoured.
MAX_DEPTH_CEILING = 512
# How much of an over-long line is read at a time while it is skipped.
_SKIP_CHUNK = 1 << 20


@dataclass(frozen=True)
class LoadLimits:
    """What one row may hold (see the module docstring); a suite's options may set each."""

    # Levels of nesting of a row: the row object is level 1, a list in one of its fields 2.
    max_depth: int = 64
    # Characters in any one text of a row (a question, an option, an id, a key).
    max_text_chars: int = 1_000_000
    # Bytes in one JSONL line (its newline not counted); a longer line is not read into memory.
    max_row_bytes: int = 64 * 2**20


DEFAULT_LIMITS = LoadLimits()
# For files read outside a suite's load (prediction files): a model's reply may be any length.
READ_LIMITS = replace(DEFAULT_LIMITS, max_text_chars=sys.maxsize)
LIMIT_OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(LoadLimits))


# The most `max_text_chars` and `max_row_bytes` may be set to: a row is read into memory whole
# (and its JSON several times over), and a model's context holds a few MB of text, so a row of a
# GiB is no benchmark row.
MAX_ROW_CEILING = 2**30


def limit_option_problem(name: str, value: Any) -> str | None:
    """Why `value` cannot be the load limit option `name` (a positive integer, max_depth up to
    MAX_DEPTH_CEILING, the others up to MAX_ROW_CEILING), or None (also for another option)."""
    if name not in LIMIT_OPTIONS:
        return None
    ceiling = MAX_DEPTH_CEILING if name == "max_depth" else MAX_ROW_CEILING
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= ceiling:
        return f"must be a positive integer up to {ceiling:,}, got {value!r}"
    return None


def take_limits(
    suite: str, options: dict[str, Any], default: LoadLimits = DEFAULT_LIMITS
) -> LoadLimits:
    """The limits a suite's `options` set (over `default`), removed from `options`; a value out
    of range (`limit_option_problem`) is a ValueError naming the suite and the option."""
    given: dict[str, int] = {}
    for name in LIMIT_OPTIONS:
        if name not in options:
            continue
        value = options.pop(name)
        if (problem := limit_option_problem(name, value)) is not None:
            raise ValueError(f"suite {suite!r}: option {name} {problem}")
        given[name] = value
    return replace(default, **given)


def _field_name(key: Any) -> str:
    """A key as a field name in a message: long or odd keys shortened and quoted."""
    text = str(key)
    if text and len(text) <= 60 and text.isprintable():
        return text
    return repr(text[:40]) + "..."


def _text_problem(text: str, limits: LoadLimits) -> str | None:
    if len(text) > limits.max_text_chars:
        return (
            f"text of {len(text):,} characters, over the limit of {limits.max_text_chars:,} "
            "(suite option max_text_chars)"
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"holds a lone surrogate ({text[exc.start]!r}), which is not text"
    return None


def limit_problem(row: Mapping[Any, Any], limits: LoadLimits) -> tuple[str, str] | None:
    """(field, why) for the first value of `row` beyond `limits` (in field order), else None.

    The field is a path into the row (`options.A`, `choice[2]`); for a row nested too deeply,
    its top-level field. Walked without recursion, so any depth Python's JSON reader returns is
    checked. Bytes (Parquet's embedded images) are not text and are not measured."""
    stack: list[tuple[Any, str, str, int]] = []
    for key in reversed(list(row)):
        name = _field_name(key)
        if isinstance(key, str) and (problem := _text_problem(key, limits)):
            return name, f"the key: {problem}"
        stack.append((row[key], name, name, 2))
    while stack:
        value, path, top, depth = stack.pop()
        if isinstance(value, str):
            if problem := _text_problem(value, limits):
                return path, problem
        elif isinstance(value, dict | list | tuple):
            if depth > limits.max_depth:
                return top, f"nested deeper than {limits.max_depth} levels (suite option max_depth)"
            if isinstance(value, dict):
                for key in reversed(list(value)):
                    name = f"{path}.{_field_name(key)}"
                    if isinstance(key, str) and (problem := _text_problem(key, limits)):
                        return name, f"the key: {problem}"
                    stack.append((value[key], name, top, depth + 1))
            else:
                for index in range(len(value) - 1, -1, -1):
                    stack.append((value[index], f"{path}[{index}]", top, depth + 1))
    return None


def checked_row(
    row: dict[str, Any], limits: LoadLimits, file: Path, line: int | None
) -> dict[str, Any] | ItemError:
    """`row` when it is within `limits`, else the ItemError naming file, line, field and item."""
    found = limit_problem(row, limits)
    if found is None:
        return row
    field_name, message = found
    return ItemError(ItemProblem(str(file), line, field_name, message, _row_id(row, field_name)))


def _row_id(row: Mapping[str, Any], bad_field: str | None) -> str | None:
    """The row's `id` for a message, when it is a short text and not the field at fault."""
    raw_id = row.get("id")
    if not isinstance(raw_id, str) or not raw_id or len(raw_id) > 200:
        return None
    if bad_field is not None and bad_field.split(".")[0].split("[")[0] == "id":
        return None
    return raw_id if _text_problem(raw_id, DEFAULT_LIMITS) is None else None


def parse_json(text: str, limits: LoadLimits) -> tuple[Any, str | None]:
    """(value, None) for JSON text, or (None, why not): not JSON, nested too deeply for Python's
    reader, or an integer too long to convert. Never raises for any text."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc}"
    except RecursionError:
        return None, f"nested deeper than {limits.max_depth} levels (suite option max_depth)"
    except ValueError as exc:
        # Python refuses integers of more than 4,300 digits (sys.get_int_max_str_digits).
        if "integer string conversion" in str(exc):
            return None, "a number too large (an integer of more than 4,300 digits)"
        return None, f"not JSON: {exc}"


@dataclass(frozen=True)
class ItemOrigin:
    """Where an item was read: its file and line (a Parquet row's number; None where the file
    has no lines to speak of, as a JSON document's task list)."""

    file: str
    line: int | None


@dataclass
class LoadReport:
    """The items a loader produced, the rows it skipped (only under `BadItemPolicy.SKIP`), the
    fields outside the release's format that rows carried (counted, never printed here), and
    where each item was read (item id -> origin, for `roadeval qc` to point at the line)."""

    items: list[Item] = field(default_factory=list)
    skipped: list[ItemProblem] = field(default_factory=list)
    unknown_fields: UnknownFields = field(default_factory=dict)
    origins: dict[str, ItemOrigin] = field(default_factory=dict)

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


def is_file(path: Path) -> bool:
    """Whether `path` is a regular file. False, not an error, for a path the system cannot look
    up at all (a name too long, a NUL byte, a loop), for which `Path.is_file` raises."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def read_jsonl(
    path: Path, limits: LoadLimits = READ_LIMITS
) -> Iterator[tuple[int, dict[str, Any] | ItemError]]:
    """Yield (line number, row) for each non-blank line; a broken line yields an ItemError.

    Lines are decoded one by one, so a line that is not UTF-8 is one bad row, not the end of
    the file; a line beyond `limits` is one bad row too (a too-long one is skipped, not read
    into memory)."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise SuiteSourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        offset = 0
        number = 0
        while True:
            raw = _read_line(handle, path, limits.max_row_bytes + 1)
            if not raw:
                return
            number += 1
            start, offset = offset, offset + len(raw)
            length = len(raw) - int(raw.endswith(b"\n"))
            if length > limits.max_row_bytes:
                while not raw.endswith(b"\n"):
                    raw = _read_line(handle, path, _SKIP_CHUNK)
                    if not raw:
                        break
                    offset += len(raw)
                    length += len(raw) - int(raw.endswith(b"\n"))
                message = (
                    f"line of {length:,} bytes, over the limit of {limits.max_row_bytes:,} "
                    "(suite option max_row_bytes)"
                )
                yield number, ItemError(ItemProblem(str(path), number, None, message))
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, _not_utf8(path, number, raw, start, exc)
                continue
            if not line.strip():
                continue
            row, why = parse_json(line, limits)
            if why is not None:
                yield number, ItemError(ItemProblem(str(path), number, None, why))
                continue
            if not isinstance(row, dict):
                yield (
                    number,
                    ItemError(ItemProblem(str(path), number, None, "row is not a JSON object")),
                )
                continue
            yield number, checked_row(row, limits, path, number)


def _read_line(handle: Any, path: Path, size: int) -> bytes:
    try:
        return handle.readline(size)
    except OSError as exc:
        raise SuiteSourceError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _not_utf8(
    path: Path, number: int, raw: bytes, start: int, exc: UnicodeDecodeError
) -> ItemError:
    """Where the bad bytes are; and the item and field, when the rest of the line still reads."""
    bad = raw[exc.start : exc.end]
    message = (
        f"not UTF-8: {bad!r} at byte {exc.start} of the line "
        f"(byte {start + exc.start} of the file): {exc.reason}"
    )
    row, _ = parse_json(raw.decode("utf-8", errors="replace"), DEFAULT_LIMITS)
    item_id = field_name = None
    if isinstance(row, dict) and limit_problem(row, DEFAULT_LIMITS) is None:
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
    line_numbers: bool = True,
) -> None:
    """Build items from the rows of `file`; a bad row raises (ERROR) or is recorded and skipped
    (SKIP). Keys outside `known_fields` (the release's row format) are counted in the report.
    Each item's origin is `file` and the row's number (None without `line_numbers`: the rows
    are numbered otherwise, as a JSON task list's indices)."""
    for line, row in rows:
        try:
            if isinstance(row, ItemError):
                raise row
            report.note_fields(file, row, known_fields)
            built = build(line, row)
            items = built if isinstance(built, list) else [built]
            for item in items:
                _check_item_id(item.item_id, row, file, line)
        except ItemError as exc:
            if policy is BadItemPolicy.ERROR:
                raise
            report.skipped.append(exc.problem)
            continue
        origin = ItemOrigin(str(file), line if line_numbers else None)
        for item in items:
            report.origins[item.item_id] = origin
        report.items.extend(items)


def _check_item_id(item_id: str, row: Mapping[str, Any], file: Path, line: int) -> None:
    """Refuse an item id that a terminal would act on (`roadeval.names`): ids are printed in
    tables, warnings and progress. Every suite builds its ids from the row's own fields, so the
    field named is the one that holds the character."""
    char = refused_character(item_id)
    if char is None:
        return
    field = next(
        (str(key) for key, value in row.items() if isinstance(value, str) and char in value),
        "id",
    )
    raise ItemError(
        ItemProblem(
            str(file),
            line,
            field,
            f"the item id {quoted(item_id)} holds {describe_character(char)}: ids are shown on "
            "terminals and in reports, so they may hold no control, line-break or "
            "bidirectional-formatting character",
        )
    )
