"""Content-addressed folders for media that a release ships inside another file (e.g. Parquet),
and for the renders a suite makes from its media."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from roadeval.benchmarks.messages import ImageRef
from roadeval.storage.store import write_atomic


def media_cache_root() -> Path:
    """`ROADEVAL_MEDIA_CACHE`, else ~/.cache/roadeval/media."""
    configured = os.environ.get("ROADEVAL_MEDIA_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "roadeval" / "media"


def materialize(data: bytes, suffix: str, root: Path | None = None) -> Path:
    """Write bytes once under their sha256 name and return the path; atomic, so safe to race."""
    digest = hashlib.sha256(data).hexdigest()
    base = root or media_cache_root()
    target = base / digest[:2] / f"{digest}{suffix}"
    if target.exists():
        return target
    write_atomic(target, data)
    return target


# sha256 of each render this process has read or made, by its file: a render is hashed once.
_DIGESTS: dict[Path, str] = {}
_DIGESTS_LOCK = threading.Lock()


def file_digest(path: Path, data: bytes | None = None) -> str:
    """sha256 of a render file's bytes, computed once per file and process (renders are
    content-addressed: a file under its key never changes)."""
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(path)
    if known is not None:
        return known
    digest = hashlib.sha256(path.read_bytes() if data is None else data).hexdigest()
    with _DIGESTS_LOCK:
        _DIGESTS[path] = digest
    return digest


def cached_render(
    folder: str, key: str, suffix: str, mime: str, make: Callable[[], bytes]
) -> ImageRef:
    """The render `key` names, as a file under `folder` of the media cache: made (by `make`)
    only when absent, written atomically, with the digest of its bytes."""
    target = media_cache_root() / folder / key[:2] / f"{key}{suffix}"
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(target)
    if known is not None and target.is_file():
        return ImageRef(str(target), known, mime)
    if target.is_file():
        data = target.read_bytes()
    else:
        data = make()
        write_atomic(target, data)
    digest = hashlib.sha256(data).hexdigest()
    with _DIGESTS_LOCK:
        _DIGESTS[target] = digest
    return ImageRef(str(target), digest, mime)
