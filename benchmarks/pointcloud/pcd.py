"""Reading PCL's .pcd files (ASCII and binary, little-endian): the header's FIELDS, SIZE, TYPE,
COUNT, WIDTH, HEIGHT, POINTS and DATA, then x, y, z and the optional intensity. Binary
compressed data is refused rather than half-supported."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from roadeval.benchmarks.pointcloud.errors import PointCloudError

# A header is a few hundred bytes; a file without DATA in this much text is not a PCD.
_MAX_HEADER_BYTES = 64 * 1024
_KNOWN_KEYS = ("VERSION", "FIELDS", "SIZE", "TYPE", "COUNT", "WIDTH", "HEIGHT", "VIEWPOINT")
_TYPE_KINDS = {"F": "f", "I": "i", "U": "u"}
_ALLOWED_SIZES = {"F": (4, 8), "I": (1, 2, 4, 8), "U": (1, 2, 4, 8)}
# Names PCL writers use for the return strength, first match wins.
INTENSITY_FIELDS = ("intensity", "i")


@dataclass(frozen=True)
class PcdHeader:
    """The header as declared; `data_offset` is where the point data starts in the file."""

    fields: tuple[str, ...]
    sizes: tuple[int, ...]
    types: tuple[str, ...]
    counts: tuple[int, ...]
    width: int
    height: int
    points: int
    data: str
    data_offset: int

    def dtype(self) -> np.dtype:
        """One record per point, fields packed in order (a COUNT > 1 field is a sub-array)."""
        parts = []
        for index, (name, size, kind, count) in enumerate(
            zip(self.fields, self.sizes, self.types, self.counts, strict=True)
        ):
            # PCL writes `_` for padding fields, several times over: keep the names unique.
            label = name if name != "_" else f"_pad{index}"
            base = f"<{_TYPE_KINDS[kind]}{size}"
            parts.append((label, base) if count == 1 else (label, base, (count,)))
        return np.dtype(parts)

    def column(self, name: str) -> int:
        """Where a field's first value sits in an ASCII row (counts before it added up)."""
        index = self.fields.index(name)
        return sum(self.counts[:index])


def read_pcd(path: Path, raw: bytes) -> np.ndarray:
    """The file's points as (N, 4) float32 x, y, z, intensity (0 when there is no field)."""
    header = parse_header(path, raw)
    if header.data == "binary":
        table = _binary_table(path, raw, header)
        columns = [table[name] for name in ("x", "y", "z")]
        columns = [c[:, 0] if c.ndim == 2 else c for c in columns]
        intensity = _intensity_name(header)
        if intensity is not None:
            values = table[intensity]
            columns.append(values[:, 0] if values.ndim == 2 else values)
        return _stack(columns, header.points)
    values = _ascii_table(path, raw, header)
    picked = [values[:, header.column(name)] for name in ("x", "y", "z")]
    intensity = _intensity_name(header)
    if intensity is not None:
        picked.append(values[:, header.column(intensity)])
    return _stack(picked, header.points)


def parse_header(path: Path, raw: bytes) -> PcdHeader:
    """The header lines up to and including DATA; a PointCloudError says which entry is wrong."""
    entries: dict[str, list[str]] = {}
    offset = 0
    while True:
        end = raw.find(b"\n", offset, _MAX_HEADER_BYTES)
        if end < 0:
            seen = ", ".join(entries) or "nothing"
            raise PointCloudError(
                path, f"PCD header is truncated: no DATA line (read {seen} before the end)"
            )
        try:
            line = raw[offset:end].decode("ascii").strip()
        except UnicodeDecodeError:
            raise PointCloudError(path, "PCD header is not ASCII text") from None
        offset = end + 1
        if not line or line.startswith("#"):
            continue
        key, *values = line.split()
        key = key.upper()
        if key == "DATA":
            entries[key] = values
            break
        if key not in _KNOWN_KEYS and key != "POINTS":
            raise PointCloudError(path, f"PCD header has an unknown entry {key!r}")
        entries[key] = values
    return _checked_header(path, entries, offset)


def _checked_header(path: Path, entries: dict[str, list[str]], offset: int) -> PcdHeader:
    for key in ("FIELDS", "SIZE", "TYPE", "WIDTH", "DATA"):
        if key not in entries:
            raise PointCloudError(path, f"PCD header has no {key} entry")
    fields = tuple(entries["FIELDS"])
    sizes = _ints(path, "SIZE", entries["SIZE"])
    types = tuple(t.upper() for t in entries["TYPE"])
    counts = _ints(path, "COUNT", entries.get("COUNT", ["1"] * len(fields)))
    for key, values in (("SIZE", sizes), ("TYPE", types), ("COUNT", counts)):
        if len(values) != len(fields):
            raise PointCloudError(
                path, f"PCD header: {key} has {len(values)} entries for {len(fields)} FIELDS"
            )
    for name, size, kind, count in zip(fields, sizes, types, counts, strict=True):
        if kind not in _TYPE_KINDS or size not in _ALLOWED_SIZES[kind] or count < 1:
            raise PointCloudError(
                path, f"PCD field {name!r} has an unsupported SIZE/TYPE/COUNT {size}/{kind}/{count}"
            )
    missing = [axis for axis in ("x", "y", "z") if axis not in fields]
    if missing:
        raise PointCloudError(path, f"PCD FIELDS lack {', '.join(missing)} (x y z are required)")
    (width,) = _ints(path, "WIDTH", entries["WIDTH"][:1] or ["?"])
    (height,) = _ints(path, "HEIGHT", entries.get("HEIGHT", ["1"])[:1] or ["?"])
    points = width * height
    if "POINTS" in entries:
        (points,) = _ints(path, "POINTS", entries["POINTS"][:1] or ["?"])
        if points != width * height:
            raise PointCloudError(
                path, f"PCD header: POINTS {points} is not WIDTH x HEIGHT ({width} x {height})"
            )
    data = entries["DATA"][0].lower() if entries["DATA"] else ""
    if data == "binary_compressed":
        raise PointCloudError(
            path, "PCD DATA binary_compressed is not supported (save as binary or ascii)"
        )
    if data not in ("ascii", "binary"):
        raise PointCloudError(path, f"PCD DATA {data!r} is not ascii or binary")
    return PcdHeader(fields, sizes, types, counts, width, height, points, data, offset)


def _ints(path: Path, key: str, values: list[str]) -> tuple[int, ...]:
    try:
        numbers = tuple(int(v) for v in values)
    except ValueError:
        raise PointCloudError(
            path, f"PCD header: {key} {' '.join(values)!r} is not integers"
        ) from None
    if any(n < 0 for n in numbers):
        raise PointCloudError(path, f"PCD header: {key} must not be negative")
    return numbers


def _binary_table(path: Path, raw: bytes, header: PcdHeader) -> np.ndarray:
    dtype = header.dtype()
    expected = header.points * dtype.itemsize
    available = len(raw) - header.data_offset
    if available < expected:
        raise PointCloudError(
            path,
            f"PCD binary data is truncated: POINTS {header.points} needs {expected} bytes "
            f"({dtype.itemsize} per point), the file has {available}",
        )
    if available > expected:
        raise PointCloudError(
            path,
            f"PCD binary data has {available - expected} bytes beyond POINTS {header.points}",
        )
    return np.frombuffer(raw, dtype=dtype, count=header.points, offset=header.data_offset)


def _ascii_table(path: Path, raw: bytes, header: PcdHeader) -> np.ndarray:
    width = sum(header.counts)
    try:
        text = raw[header.data_offset :].decode("ascii")
    except UnicodeDecodeError:
        raise PointCloudError(path, "PCD ascii data is not ASCII text") from None
    if not text.strip():
        values = np.zeros((0, width))
    else:
        # loadtxt's C parser: fast, reads nan/inf (then refused by the loader), and names the
        # row where the number of values changes.
        try:
            values = np.loadtxt(io.StringIO(text), dtype=np.float64, ndmin=2, comments=None)
        except ValueError as exc:
            raise PointCloudError(path, f"PCD ascii data is malformed: {exc}") from None
    if len(values) != header.points:
        shorter = "shorter" if len(values) < header.points else "longer"
        raise PointCloudError(
            path,
            f"PCD ascii data is {shorter} than POINTS says: {len(values)} rows, "
            f"POINTS {header.points}",
        )
    if values.shape[1] != width:
        raise PointCloudError(
            path, f"PCD ascii rows have {values.shape[1]} values, FIELDS and COUNT say {width}"
        )
    return values


def _intensity_name(header: PcdHeader) -> str | None:
    return next((name for name in INTENSITY_FIELDS if name in header.fields), None)


def _stack(columns: list[np.ndarray], count: int) -> np.ndarray:
    out = np.zeros((count, 4), dtype=np.float32)
    # float64 or int64 fields beyond float32's range become inf; the loader reports them.
    with np.errstate(over="ignore", invalid="ignore"):
        for index, column in enumerate(columns):
            out[:, index] = column
    return out
