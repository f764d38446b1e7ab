"""Datasets of landed parts for queries: in place in a folder, and on a remote store either
by ranges or through `part_cache` (each part read whole, once per process)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from roadeval.storage.part_cache import part_bytes
from roadeval.storage.store import Store


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
