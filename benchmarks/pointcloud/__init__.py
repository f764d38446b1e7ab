"""Point-cloud scans for TRIP-Evaluate's point-cloud items: loading .bin/.pcd/.npy into one
frame convention, and the two deterministic renders the protocol shows (BEV and front view).
Pure numpy and PIL; the render stage and the TRIP adapter call this public API."""

from roadeval.benchmarks.pointcloud.colours import BEV_PALETTE, FRONT_PALETTE
from roadeval.benchmarks.pointcloud.errors import PointCloudError
from roadeval.benchmarks.pointcloud.frames import (
    DEFAULT_FRAME,
    FRAME_PRESETS,
    NUSCENES_FRAME,
    FrameConvention,
    frame_from_config,
    frame_preset,
)
from roadeval.benchmarks.pointcloud.loaders import (
    POINT_CLOUD_SUFFIXES,
    check_points,
    load_point_cloud,
    read_point_cloud,
)
from roadeval.benchmarks.pointcloud.render import (
    RENDER_VERSION,
    bev_image,
    bev_indices,
    encode_png,
    front_image,
    front_indices,
    render_bev,
    render_front,
    render_views,
)
from roadeval.benchmarks.pointcloud.synthetic import synthetic_scan

__all__ = [
    "BEV_PALETTE",
    "DEFAULT_FRAME",
    "FRAME_PRESETS",
    "FRONT_PALETTE",
    "NUSCENES_FRAME",
    "POINT_CLOUD_SUFFIXES",
    "RENDER_VERSION",
    "FrameConvention",
    "PointCloudError",
    "bev_image",
    "bev_indices",
    "check_points",
    "encode_png",
    "frame_from_config",
    "frame_preset",
    "front_image",
    "front_indices",
    "load_point_cloud",
    "read_point_cloud",
    "render_bev",
    "render_front",
    "render_views",
    "synthetic_scan",
]
