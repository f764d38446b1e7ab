"""Images a suite draws from other media (a point cloud's two views), as jobs the render stage can
fan out: each job says what decides its pixels (its key) and draws its views as PNG bytes.

A drawn view is content-addressed by its job's key: the same scan, frame and render version give
the same key on every machine, and a view that exists (in the local media cache, or in the store
under `renders/`) is never drawn again.
"""

from __future__ import annotations

import dataclasses
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
    """What to draw for one item. Picklable, so that a Dask worker can run it. A worker draws
    from the input file itself only where it finds that very file (`read_seen`); otherwise the
    input is read where the run is (`read_input`) and sent, so a worker on another machine
    never needs the run's files."""

    key: str  # sha256 over everything that decides the pixels
    source: str  # the input file, for messages (and where `read_input` reads it)
    field: str  # the item field that names it, for messages
    views: tuple[str, ...]  # the views drawn, in the order the prompt shows them
    # sha256 of the input file's bytes, when known: what proves a file a worker finds at
    # `source` is the input (None: never trusted, the bytes are always sent).
    input_sha256: str | None = dataclasses.field(default=None, kw_only=True)

    def read_input(self) -> bytes:
        """The bytes of the input file (`source`); DrawError when it cannot be read."""
        try:
            return Path(self.source).read_bytes()
        except OSError as exc:
            raise DrawError(f"cannot read the file ({exc.strerror or exc})") from None

    def read_seen(self) -> bytes | None:
        """The input's bytes from `source` if they are here and are the input (their sha256
        is `input_sha256`); None otherwise (elsewhere, or another file at the same path)."""
        if self.input_sha256 is None:
            return None
        try:
            data = Path(self.source).read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == self.input_sha256 else None

    @abstractmethod
    def draw_from(self, data: bytes) -> tuple[bytes, ...]:
        """PNG bytes of each view from the input's bytes, in `views` order; DrawError when
        the input is unusable."""

    def draw(self) -> tuple[bytes, ...]:
        """`draw_from` the input file, read here."""
        return self.draw_from(self.read_input())

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
