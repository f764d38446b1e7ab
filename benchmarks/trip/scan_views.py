"""A TRIP point-cloud item's two views (BEV, then front), drawn from its scan by the render stage:
the protocol's deterministic renders, keyed by the scan's bytes, frame and render version."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from roadeval.benchmarks.drawing import DrawError, DrawJob, job_key
from roadeval.benchmarks.item import Item, MediaKind
from roadeval.benchmarks.pointcloud import (
    RENDER_VERSION,
    FrameConvention,
    PointCloudError,
    read_point_cloud,
    render_views,
)
from roadeval.benchmarks.trip.taxonomy import BEV_ROLE, FRONT_ROLE

SCAN_FIELD = "point_cloud"


@dataclass(frozen=True)
class ScanViews(DrawJob):
    frame: FrameConvention

    def draw_from(self, data: bytes) -> tuple[bytes, ...]:
        try:
            points = read_point_cloud(Path(self.source), data, self.frame, writable=False)
            return render_views(points)
        except PointCloudError as exc:
            raise DrawError(exc.problem) from exc


def scan_views(item: Item, frame: FrameConvention) -> ScanViews | None:
    """The job for an item that carries a scan; None for every other item."""
    scan = next((m for m in item.media if m.kind is MediaKind.POINT_CLOUD), None)
    if scan is None:
        return None
    key = job_key(RENDER_VERSION, scan.sha256, frame.name, repr(frame.rotation))
    views = (BEV_ROLE, FRONT_ROLE)
    return ScanViews(key, scan.path, SCAN_FIELD, views, frame, input_sha256=scan.sha256)
