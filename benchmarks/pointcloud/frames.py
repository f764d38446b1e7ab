"""Frame conventions: the renders expect the source frame X forward, Y left, Z up (KITTI's LiDAR
frame); a suite whose scans use another frame names a rotation that brings them into it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Matrix3 = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]

_IDENTITY: Matrix3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
# Tolerance on R^T R = I and det R = 1: loose enough for matrices written to a few decimals.
_ORTHONORMAL_TOLERANCE = 1e-6


@dataclass(frozen=True)
class FrameConvention:
    """A rotation from a source's frame into X forward, Y left, Z up: p_conv = R p_source.
    A proper rotation only (orthonormal, det +1): a mirror would flip left and right."""

    name: str
    rotation: Matrix3 = _IDENTITY

    def __post_init__(self) -> None:
        try:
            matrix = np.asarray(self.rotation, dtype=np.float64)
        except (TypeError, ValueError):
            matrix = np.full((0,), np.nan)
        if matrix.shape != (3, 3) or not np.all(np.isfinite(matrix)):
            raise ValueError(f"frame {self.name!r}: rotation must be a finite 3x3 matrix")
        # Lists from a config file become tuples: the convention stays hashable and comparable.
        rows = tuple(tuple(float(v) for v in row) for row in matrix.tolist())
        object.__setattr__(self, "rotation", rows)
        gram_error = float(np.abs(matrix.T @ matrix - np.eye(3)).max())
        if gram_error > _ORTHONORMAL_TOLERANCE or abs(np.linalg.det(matrix) - 1.0) > 1e-6:
            raise ValueError(
                f"frame {self.name!r}: rotation must be orthonormal with determinant +1"
            )

    @property
    def is_identity(self) -> bool:
        return self.rotation == _IDENTITY

    def apply(self, points: np.ndarray) -> np.ndarray:
        """(N, 4) x, y, z, intensity rotated into the convention, as a new float32 array.
        Per-row products and sums in float64, not a BLAS matmul, so that every machine rounds
        the same way."""
        out = np.array(points, dtype=np.float32, copy=True)
        if self.is_identity:
            return out
        xyz = out[:, :3].astype(np.float64)
        for row, (a, b, c) in enumerate(self.rotation):
            out[:, row] = (a * xyz[:, 0] + b * xyz[:, 1] + c * xyz[:, 2]).astype(np.float32)
        return out


DEFAULT_FRAME = FrameConvention("default")
# nuScenes LiDAR: X right, Y forward, Z up; forward = +Y_s and left = -X_s.
NUSCENES_FRAME = FrameConvention("nuscenes", ((0.0, 1.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 0.0, 1.0)))
FRAME_PRESETS: dict[str, FrameConvention] = {
    frame.name: frame for frame in (DEFAULT_FRAME, NUSCENES_FRAME)
}
FRAME_PRESETS["kitti"] = DEFAULT_FRAME


def frame_preset(name: str) -> FrameConvention:
    """A named preset (`default`, `kitti`, `nuscenes`); a ValueError lists the known names."""
    try:
        return FRAME_PRESETS[name.strip().lower()]
    except KeyError:
        known = ", ".join(sorted(FRAME_PRESETS))
        raise ValueError(f"unknown frame preset {name!r} (known: {known})") from None


def frame_from_config(value: str | Sequence[Sequence[float]] | FrameConvention) -> FrameConvention:
    """A suite option's frame: a preset name, a 3x3 rotation (rows), or a convention as is."""
    if isinstance(value, FrameConvention):
        return value
    if isinstance(value, str):
        return frame_preset(value)
    return FrameConvention("custom", value)  # type: ignore[arg-type]
