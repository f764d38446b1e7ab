"""A content-addressed folder for media that a release ships inside another file (e.g. Parquet)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


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
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, target)
    return target
