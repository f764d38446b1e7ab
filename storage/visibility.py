"""Which parts a reader sees, by the landings' markers and a listing of the parts: the rule the
part index (`part_index`) keeps, and the way to read a store that keeps no index.

A part is visible when the marker of its landing (`landings/<name>`, the part's file name) exists,
except a run's other parts in a folder where its compacted part (`<run_id>-compacted`) is landed:
they hold the same rows (see `compaction`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from roadeval.storage.records import SCHEMAS
from roadeval.storage.store import Store

LANDINGS = "landings/"
# A run's landings are named `<run_id>-...` (flows.run.start makes the id).
_RUN_OF = re.compile(r"(\d{8}T\d{6}Z-[0-9a-f]{8})-")


def run_of(name: str) -> str | None:
    """The run a landing belongs to, from its name (None: a suite's items, shared by runs)."""
    found = _RUN_OF.match(name)
    return found.group(1) if found else None


def part_name(key: str) -> str:
    """The landing name of a part key: tables/<t>/.../<name>.parquet -> <name>."""
    return key.rsplit("/", 1)[-1].removesuffix(".parquet")


def table_keys(store: Store, table: str) -> list[str]:
    """Every Parquet part of `table`, landed or not."""
    return [k for k in store.list(f"tables/{table}/") if k.endswith(".parquet")]


def every_table_keys(store: Store) -> dict[str, list[str]]:
    """Every Parquet part of every table, landed or not, by table: one listing of `tables/`
    (on S3 a request per 1,000 parts; a listing per table costs a request per table at least)."""
    keys: dict[str, list[str]] = {table: [] for table in SCHEMAS}
    for key in store.list("tables/"):
        table = key.split("/", 2)[1]
        if key.endswith(".parquet") and table in keys:
            keys[table].append(key)
    return keys


# The landing of a run's compacted parts: `<run_id>-compacted`.
COMPACTED = "-compacted"


def compacted_name(run_id: str) -> str:
    return f"{run_id}{COMPACTED}"


def visible_keys(keys: Iterable[str], landed: Collection[str]) -> list[str]:
    """Of a table's part keys, those a reader sees: parts of landings in `landed`, except a
    run's other parts in a folder where its compacted part is landed (they hold the same rows)."""
    by_folder: dict[str, list[str]] = {}
    for key in keys:
        if part_name(key) in landed:
            by_folder.setdefault(key.rsplit("/", 1)[0], []).append(key)
    visible: list[str] = []
    for folder_keys in by_folder.values():
        names = [part_name(key) for key in folder_keys]
        compacted = tuple(f"{n.removesuffix(COMPACTED)}-" for n in names if n.endswith(COMPACTED))
        if not compacted:
            visible.extend(folder_keys)
            continue
        visible.extend(
            key
            for key, name in zip(folder_keys, names, strict=True)
            if name.endswith(COMPACTED) or not name.startswith(compacted)
        )
    return sorted(visible)


def listed_parts(
    store: Store,
    *,
    tables: Iterable[str] | None = None,
    runs: Iterable[str] | None = None,
    include_unlanded: bool = False,
) -> dict[str, list[str]]:
    """`visible_parts` by listing the markers and every part (`visible_keys`)."""
    landed = {key.removeprefix(LANDINGS) for key in store.list(LANDINGS)}
    wanted = None if runs is None else set(runs)
    visible: dict[str, list[str]] = {}
    every = every_table_keys(store) if tables is None else None
    for table in SCHEMAS if tables is None else tables:
        keys = every[table] if every is not None else table_keys(store, table)
        if wanted is not None:
            keys = [k for k in keys if (run := run_of(part_name(k))) is None or run in wanted]
        visible[table] = visible_keys(keys, landed)
        if include_unlanded:
            visible[table] += [key for key in keys if part_name(key) not in landed]
    return visible
