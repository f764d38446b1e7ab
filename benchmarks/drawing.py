"""Images a suite draws from other media (a point cloud's two views), as jobs the render stage can
fan out: each job says what decides its pixels (its key) and draws its views as PNG bytes.

A drawn view is content-addressed by its job's key: the same scan, frame and render version give
the same key on every machine, and a view that exists (in the local media cache, or in the store
under `renders/`) is never drawn again.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from roadeval.benchmarks.media_store import file_digest, media_cache_root
from roadeval.benchmarks.messages import ImageRef
from roadeval.storage.store import write_atomic

PNG = "image/png"


class DrawError(ValueError):
    """A job whose input cannot be drawn; the message names the file and what is wrong."""


@dataclass(frozen=True)
class DrawJob(ABC):
    """What to draw for one item. Picklable, so that a Dask worker can run it."""

    key: str  # sha256 over everything that decides the pixels
    source: str  # the input file, for messages
    field: str  # the item field that names it, for messages
    views: tuple[str, ...]  # the views drawn, in the order the prompt shows them

    @abstractmethod
    def draw(self) -> tuple[bytes, ...]:
        """PNG bytes of each view, in `views` order; DrawError when the input is unusable."""

    def store_key(self, view: str) -> str:
        return f"renders/{self.key[:2]}/{self.key}/{view}.png"

    def cached_path(self, view: str) -> Path:
        return media_cache_root() / "renders" / self.key[:2] / self.key / f"{view}.png"


def job_key(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def keep_views(job: DrawJob, images: tuple[bytes, ...]) -> tuple[ImageRef, ...]:
    """Write drawn views into the local media cache (atomically, so racing writers agree)."""
    refs = []
    for view, data in zip(job.views, images, strict=True):
        path = job.cached_path(view)
        if not path.is_file():
            write_atomic(path, data)
        refs.append(ImageRef(str(path), file_digest(path, data), PNG))
    return tuple(refs)


def cached_views(job: DrawJob) -> tuple[ImageRef, ...] | None:
    """The job's views from the local media cache, or None when any is missing."""
    paths = [job.cached_path(view) for view in job.views]
    if not all(path.is_file() for path in paths):
        return None
    return tuple(ImageRef(str(p), file_digest(p), PNG) for p in paths)


def drawn_views(job: DrawJob) -> tuple[ImageRef, ...]:
    """The job's views: cached ones as they are, else drawn here and cached. The render stage
    fills the cache ahead (on Dask, or from the store), so a run draws nothing at this point."""
    return cached_views(job) or keep_views(job, job.draw())
