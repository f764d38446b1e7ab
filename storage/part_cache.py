"""Landed parts read at most once per process from a remote store.

A part never changes once written (every landing writes new keys; compaction writes new parts
and deletes the old), so its bytes can be kept by key. A run reads its own parts back several
times as it ends (metrics, the cost table, the report, each over a connection of its own): on
S3 each scan cost a HEAD and a GET or two per part. Here a part this process wrote is kept as
it is written (not by an answer worker: the run's own process reads what it lands), any other
is fetched whole by one GET on its first read, and the queries read memory. The cache is
bounded (least recently used out first); a local folder has the OS's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from roadeval.environment import number_from_env
from roadeval.storage.store import Store

DEFAULT_BUDGET_MB = 128.0


class _Kept:
    """The bytes of parts read or written in this process, by (store, key), within a budget."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.parts: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self.size = 0
        self.writes = True  # keep what this process writes


_KEPT = _Kept()


def _budget() -> int:
    """ROADEVAL_PART_CACHE_MB (0: keep nothing), else 128 MB."""
    return int(number_from_env("ROADEVAL_PART_CACHE_MB", DEFAULT_BUDGET_MB, "MB") * 2**20)


def keep_written_parts(keep: bool) -> None:
    """Whether this process keeps the parts it writes: not a process that never reads them
    back (an answer worker lands its shards for the driver to read)."""
    _KEPT.writes = keep


def keep_part(store: Store, key: str, data: bytes, *, written: bool = True) -> None:
    """Keep the bytes of a part of `store` (a remote one), `written` here or just read: read
    again, they cost no request."""
    if store.runs_inline or (written and not _KEPT.writes):
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
    keep_part(store, key, data, written=False)
    return data


def forget_parts() -> None:
    """Drop every kept part (tests count the requests a cold process makes)."""
    with _KEPT.lock:
        _KEPT.parts.clear()
        _KEPT.size = 0
