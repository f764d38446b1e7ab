"""Listings of a store: keys with their tags and write times on the store's clock, and the walk
of a folder that lists from a key without reading what sorts before it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Entry:
    """A key as a listing shows it: its version tag (changes when its bytes do, on S3; when it
    is rewritten, in a folder) and when it was last written, on the store's clock."""

    key: str
    etag: str
    modified: float


@dataclass(frozen=True)
class Listing:
    """Keys under a prefix in order, and the store's clock when it listed them (the server's
    Date on S3), so that ages are measured on one clock whatever the lister's."""

    entries: list[Entry]
    now: float
    # More keys follow the last entry (the listing stopped at its limit).
    truncated: bool = False


def server_time(reply: dict[str, Any], otherwise: float) -> float:
    """The server's clock from an S3 reply's Date header (`otherwise` if it sends none)."""
    date = reply.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    if date:
        try:
            return parsedate_to_datetime(date).timestamp()
        except (TypeError, ValueError):
            pass
    return otherwise


def keys_after(root: Path, prefix: str, start_after: str, hidden: tuple[str, ...]) -> list[str]:
    """Keys under the folder `prefix` (ending in "/") of the tree at `root` that sort after
    `start_after`, in order, never walking a folder whose keys all sort before it; names
    starting with `hidden` are not keys."""
    keys: list[str] = []

    def walk(folder: Path, key: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if entry.name.startswith(hidden):
                continue
            below = f"{key}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                # Every key below starts with below/: all sort before start_after unless it
                # starts so too, or sorts after below/.
                if start_after.startswith(f"{below}/") or f"{below}/" > start_after:
                    walk(Path(entry.path), f"{below}/")
            elif entry.is_file() and below > start_after:
                keys.append(below)

    walk(root / prefix, prefix)
    return sorted(keys)


def list_local(root: Path, keys: list[str], start_after: str | None, limit: int | None) -> Listing:
    """The entries of a folder's `keys` (in order) after `start_after`, at most `limit`:
    a file's tag is its write time and size."""
    now = time.time()
    entries: list[Entry] = []
    for key in keys:
        if start_after is not None and key <= start_after:
            continue
        try:
            stat = (root / key).stat()
        except FileNotFoundError:
            continue  # removed since it was listed
        if limit is not None and len(entries) == limit:
            return Listing(entries, now, truncated=True)
        entries.append(Entry(key, f"{stat.st_mtime_ns:x}-{stat.st_size:x}", stat.st_mtime))
    return Listing(entries, now)


def list_s3(
    call: Callable[..., Any], prefix: str, start_after: str | None, limit: int | None
) -> Listing:
    """ListObjectsV2 through `call` (a store's request in one of its slots), page by page:
    the bucket's keys (whole, prefix included), at most `limit`, on the server's clock."""
    entries: list[Entry] = []
    now: float | None = None
    args: dict[str, Any] = {"Prefix": prefix}
    if start_after is not None:
        args["StartAfter"] = start_after
    while True:
        if limit is not None:
            args["MaxKeys"] = min(1000, limit - len(entries))
        page = call("list_objects_v2", **args)
        if now is None:
            now = server_time(page, time.time())
        entries.extend(
            Entry(obj["Key"], str(obj.get("ETag", "")), obj["LastModified"].timestamp())
            for obj in page.get("Contents", [])
        )
        if not page.get("IsTruncated"):
            return Listing(entries, now)
        if limit is not None and len(entries) >= limit:
            return Listing(entries, now, truncated=True)
        args["ContinuationToken"] = page["NextContinuationToken"]
        args.pop("StartAfter", None)
