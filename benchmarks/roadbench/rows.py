"""Validated fields of the release's label rows; each problem is an ItemError that names the
label file, the line, the field and (when known) the release id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import shapely
from shapely import LineString, Point

from roadeval.benchmarks.errors import ItemError, ItemProblem
from roadeval.benchmarks.loading import require


def row_problem(path: Path, line: int, field: str, message: str, row: dict[str, Any]) -> ItemError:
    item_id = row.get("id") if isinstance(row.get("id"), str) else None
    return ItemError(ItemProblem(str(path), line, field, message, item_id))


def release_id(row: dict[str, Any], path: Path, line: int) -> str:
    value = require(row, "id", path, line, str)
    if not value.strip():
        raise row_problem(path, line, "id", "empty id", row)
    return value


def lane_count(row: dict[str, Any], path: Path, line: int) -> int:
    value = require(row, "num_lane", path, line, int)
    if isinstance(value, bool) or value < 0:
        raise row_problem(path, line, "num_lane", f"expected a lane count, got {value!r}", row)
    return value


def lane_letters(row: dict[str, Any], path: Path, line: int) -> list[str]:
    value = require(row, "laneinfo", path, line, list)
    if not all(isinstance(lane, str) for lane in value):
        raise row_problem(path, line, "laneinfo", "expected a list of letter strings", row)
    return value


def wkt_geometry(
    text: Any, kind: type, path: Path, line: int, field: str, row: dict[str, Any]
) -> Any:
    """A non-empty geometry of `kind` from a WKT string, else an ItemError for `field`."""
    if not isinstance(text, str):
        got = type(text).__name__
        raise row_problem(path, line, field, f"expected a WKT string, got {got}", row)
    try:
        geom = shapely.from_wkt(text)
    except Exception as exc:
        raise row_problem(path, line, field, f"WKT does not parse: {text!r} ({exc})", row) from exc
    if not isinstance(geom, kind) or shapely.is_empty(geom):
        wanted = "POINT" if kind is Point else "LINESTRING"
        raise row_problem(path, line, field, f"expected a non-empty {wanted}, got {text!r}", row)
    return geom


def reference_line(row: dict[str, Any], path: Path, line: int) -> list[tuple[float, float]]:
    """The BEV reference line `pixel_line` as (x, y) vertices in pixels."""
    text = require(row, "pixel_line", path, line, str)
    geom = wkt_geometry(text, LineString, path, line, "pixel_line", row)
    return [(float(x), float(y)) for x, y, *_ in geom.coords]


def network_truth(row: dict[str, Any], path: Path, line: int) -> dict[str, list[str]]:
    """Task 3's `ground_truth`: WKT junctions (POINTs) and lines (LINESTRINGs), as given."""
    truth = require(row, "ground_truth", path, line, dict)
    checked: dict[str, list[str]] = {}
    for key, kind in (("junctions", Point), ("lines", LineString)):
        field = f"ground_truth.{key}"
        entries = truth.get(key)
        if not isinstance(entries, list):
            raise row_problem(path, line, field, "missing or not a list", row)
        for entry in entries:
            wkt_geometry(entry, kind, path, line, field, row)
        checked[key] = list(entries)
    return checked


def road_type(row: dict[str, Any], path: Path, line: int) -> str:
    value = require(row, "road_type", path, line, str)
    if not value:
        raise row_problem(path, line, "road_type", "empty road type", row)
    return value


def image_name(row: dict[str, Any], item_id: str, path: Path, line: int) -> str:
    """Task 6 names its image in `img`; the other tasks use `<id>.png`."""
    name = row.get("img")
    if name is None:
        return f"{item_id}.png"
    if not isinstance(name, str) or not name or Path(name).name != name:
        raise row_problem(path, line, "img", f"expected a file name, got {name!r}", row)
    return name
