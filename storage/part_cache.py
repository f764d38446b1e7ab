"""Landed parts read at most once per process from a remote store.

A part never changes once written (every landing writes new keys; compaction writes new parts
and deletes the old), so its bytes can be kept by key. A run reads its own parts back several
times as it ends (metrics, the cost table, the report, each over a connection of its own): on
S3 each scan cost a HEAD and a GET or two per part. Here a part this process wrote is kept as
it is written, any other is fetched whole by one GET on its first read, and the queries read
memory. The cache is bounded (least recently used out first); a local folder has the OS's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from roadeval.environment import number_from_env
from roadeval.storage.store import Store

DEFAULT_BUDGET_MB = 256.0


class _Kept:
    """The bytes of parts read or written in this process, by (store, key), within a budget."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.parts: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self.size = 0


_KEPT = _Kept()


def _budget() -> int:
    """ROADEVAL_PART_CACHE_MB (0: keep nothing), else 256 MB."""
    return int(number_from_env("ROADEVAL_PART_CACHE_MB", DEFAULT_BUDGET_MB, "MB") * 2**20)


def keep_part(store: Store, key: str, data: bytes) -> None:
    """Keep the bytes of a part just written to `store` (a remote one): read back, they cost
    no request."""
    if store.runs_inline:
        return
    budget = _budget()
    if len(data) > budget // 4:
        return  # one part must not push every other out
    with _KEPT.lock:
        slot = (store.uri, key)
        if slot in _KEPT.parts:
            _KEPT.parts.move_to_end(slot)
            return
        _KEPT.parts[slot] = data
        _KEPT.size += len(data)
        while _KEPT.size > budget and _KEPT.parts:
            _, dropped = _KEPT.parts.popitem(last=False)
            _KEPT.size -= len(dropped)


def part_bytes(store: Store, key: str) -> bytes:
    """The bytes of the part `key` of `store`: kept ones from memory, others read (and kept)."""
    if store.runs_inline:
        return store.get(key)
    with _KEPT.lock:
        data = _KEPT.parts.get((store.uri, key))
        if data is not None:
            _KEPT.parts.move_to_end((store.uri, key))
            return data
    data = store.get(key)
    keep_part(store, key, data)
    return data


def forget_parts() -> None:
    """Drop every kept part (tests count the requests a cold process makes)."""
    with _KEPT.lock:
        _KEPT.parts.clear()
        _KEPT.size = 0


class _PartFiles(pafs.FileSystemHandler):
    """A read-only pyarrow filesystem of one store's parts, each path a key, read through
    `part_bytes`: what a dataset's scans open comes from memory after the first."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get_type_name(self) -> str:
        return "roadeval-parts"

    def normalize_path(self, path: str) -> str:
        return path

    def equals(self, other: Any) -> bool:
        return isinstance(other, _PartFiles) and other.store.uri == self.store.uri

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return [
            pafs.FileInfo(path, pafs.FileType.File, size=len(part_bytes(self.store, path)))
            for path in paths
        ]

    def open_input_file(self, path: str) -> pa.NativeFile:
        return pa.BufferReader(part_bytes(self.store, path))

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.open_input_file(path)

    def _read_only(self, *_: object, **__: object) -> Any:
        raise OSError(f"{self.store.uri}: parts are read here, never written")

    get_file_info_selector = _read_only
    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = _read_only
    delete_file = move = copy_file = _read_only
    open_output_stream = open_append_stream = _read_only


def parts_dataset(
    store: Store, schema: pa.Schema, keys: list[str], *, whole: bool = True
) -> ds.Dataset:
    """A lazy dataset of the parts `keys` under `schema`: nothing read until a scan. In a
    folder, read in place. On a remote store, each part through `part_bytes` (`whole`: the
    reads of a run's parts), or by ranges, each scan reading the footers and columns it needs
    (a query over a whole store, of which one run's rows may be a sliver)."""
    parquet = ds.ParquetFileFormat()
    if store.runs_inline or not whole:
        filesystem, root = store.arrow()
        return ds.FileSystemDataset.from_paths(
            [f"{root}/{key}" for key in keys], schema=schema, format=parquet, filesystem=filesystem
        )
    files = pafs.PyFileSystem(_PartFiles(store))
    return ds.FileSystemDataset.from_paths(keys, schema=schema, format=parquet, filesystem=files)
