"""A content-addressed folder for media that a release ships inside another file (e.g. Parquet)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

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
