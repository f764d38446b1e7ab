"""Writers for the point-cloud tests, independent of the package's readers: KITTI .bin, PCD
(ASCII and binary, as PCL writes them) and .npy; and the spawn test's child entry point."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# (name, SIZE, TYPE) of the default PCD layout.
XYZI = (("x", 4, "F"), ("y", 4, "F"), ("z", 4, "F"), ("intensity", 4, "F"))


def write_bin(path: Path, points: np.ndarray) -> Path:
    path.write_bytes(np.asarray(points, dtype="<f4").tobytes())
    return path


def write_npy(path: Path, array: np.ndarray) -> Path:
    np.save(path, array, allow_pickle=False)
    return path


def pcd_header(
    fields: Sequence[tuple[str, int, str]],
    points: int,
    data: str,
    counts: Sequence[int] | None = None,
) -> bytes:
    counts = list(counts) if counts is not None else [1] * len(fields)
    lines = [
        "# .PCD v0.7 - Point Cloud Data file format",
        "VERSION 0.7",
        "FIELDS " + " ".join(name for name, _, _ in fields),
        "SIZE " + " ".join(str(size) for _, size, _ in fields),
        "TYPE " + " ".join(kind for _, _, kind in fields),
        "COUNT " + " ".join(str(c) for c in counts),
        f"WIDTH {points}",
        "HEIGHT 1",
        "VIEWPOINT 0 0 0 1 0 0 0",
        f"POINTS {points}",
        f"DATA {data}",
    ]
    return ("\n".join(lines) + "\n").encode("ascii")


def write_pcd_ascii(
    path: Path, columns: dict[str, np.ndarray], fields: Sequence[tuple[str, int, str]] = XYZI
) -> Path:
    """One row per point; floats as %.9g (exact for float32), integers as they are."""
    count = len(next(iter(columns.values())))
    rows = []
    for index in range(count):
        values = []
        for name, _, kind in fields:
            value = columns[name][index]
            values.append(f"{float(value):.9g}" if kind == "F" else str(int(value)))
        rows.append(" ".join(values))
    path.write_bytes(pcd_header(fields, count, "ascii") + ("\n".join(rows) + "\n").encode())
    return path


def write_pcd_binary(
    path: Path, columns: dict[str, np.ndarray], fields: Sequence[tuple[str, int, str]] = XYZI
) -> Path:
    kinds = {"F": "f", "I": "i", "U": "u"}
    dtype = np.dtype([(name, f"<{kinds[kind]}{size}") for name, size, kind in fields])
    count = len(next(iter(columns.values())))
    table = np.zeros(count, dtype=dtype)
    for name, _, _ in fields:
        table[name] = columns[name]
    path.write_bytes(pcd_header(fields, count, "binary") + table.tobytes())
    return path


def xyzi(points: np.ndarray) -> dict[str, np.ndarray]:
    return {name: points[:, i] for i, name in enumerate(("x", "y", "z", "intensity"))}


def render_synthetic(seed: int) -> tuple[str, bytes, bytes]:
    """In a spawned child: the scan's hash and both renders, from a fresh interpreter."""
    from roadeval.benchmarks.pointcloud import render_views, synthetic_scan

    points = synthetic_scan(seed)
    bev, front = render_views(points)
    return hashlib.sha256(points.tobytes()).hexdigest(), bev, front
