"""Reading task-3 answers and labels into normalised vertex arrays, with the release's rules for
entries it skips (wrong geometry type) and the cases where its metric script fails."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from shapely import LineString, Point


class ReleaseDropsItem(Exception):
    """The release's metric script raises on this item and leaves it out of every mean."""


class ReleaseLineFailure(Exception):
    """The release's line metrics raise on this item; it scores the worst line values."""


@dataclass(frozen=True)
class NetworkGeometry:
    """Junctions as (k, 2) and lines as a list of (k_i, 2) arrays, in fractions of the image."""

    junctions: np.ndarray
    lines: list[np.ndarray]


def load_wkt(entry: Any) -> Any:
    """`shapely.wkt.loads` exactly as the release calls it (lists come back as arrays, None as
    None, other non-strings raise)."""
    return shapely.from_wkt(entry)


def normalised_points(
    entries: Iterable[Any], width: int, height: int, *, skip_other: bool
) -> np.ndarray:
    """Points as (x / width, y / height). Predicted non-points are skipped (skip_other), as the
    release skips them; junctions that are not iterable (null, a number), an unreadable entry,
    an empty point or a true junction that is not a point make the release's script raise and
    drop the item."""
    coords: list[tuple[float, float]] = []
    try:
        entries = iter(entries)
    except TypeError as exc:
        raise ReleaseDropsItem(f"junctions {entries!r} are not a list") from exc
    for entry in entries:
        try:
            geom = load_wkt(entry)
        except Exception as exc:
            raise ReleaseDropsItem(f"junction {entry!r} is not WKT: {exc}") from exc
        if not isinstance(geom, Point):
            if skip_other:
                continue
            raise ReleaseDropsItem(f"junction {entry!r} is not a POINT")
        if geom.is_empty:
            raise ReleaseDropsItem(f"junction {entry!r} is an empty point")
        coords.append((geom.x / width, geom.y / height))
    return wkt_round_trip(np.array(coords, dtype=float).reshape(-1, 2))


def wkt_round_trip(xy: np.ndarray) -> np.ndarray:
    """The coordinates after the release's detour: it writes each normalised junction as WKT
    (`Point.wkt`, which keeps 16 significant digits) and reads it back before matching. The
    last bits it drops decide ties at a threshold (e.g. 93.7 px from a junction at width 937)."""
    if not len(xy):
        return xy
    back = shapely.from_wkt(shapely.to_wkt(shapely.points(xy), rounding_precision=-1))
    return np.column_stack([shapely.get_x(back), shapely.get_y(back)])


def normalised_lines(
    entries: Iterable[Any], width: int, height: int, *, skip_other: bool
) -> list[np.ndarray]:
    """Line vertices as (x / width, y / height). Predicted non-lines are skipped (skip_other);
    unreadable, empty or 3-D lines make the release's line metrics fail for the item."""
    lines: list[np.ndarray] = []
    scale = np.array([width, height], dtype=float)
    for entry in entries:
        try:
            geom = load_wkt(entry)
        except Exception as exc:
            raise ReleaseLineFailure(f"line {entry!r} is not WKT: {exc}") from exc
        if not isinstance(geom, LineString):
            if skip_other:
                continue
            raise ReleaseLineFailure(f"line {entry!r} is not a LINESTRING")
        if geom.is_empty:
            raise ReleaseLineFailure(f"line {entry!r} is empty")
        if geom.has_z:
            raise ReleaseLineFailure(f"line {entry!r} has 3-D coordinates")
        lines.append(shapely.get_coordinates(geom) / scale)
    return lines
