"""Where the release keeps its files: one folder per label file, labels.jsonl either directly in
it (the extracts' layout) or under dataset/ (the repository's), images beside the labels."""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.errors import SuiteSourceError
from roadeval.benchmarks.source_shape import folder_listing

LABEL_FOLDERS = ("task_1_2", "task_3", "task_4_5", "task_6")
LABEL_FILE = "labels.jsonl"
EXTRA_LABEL_FILE = "extra_labels.jsonl"

# The fields of each folder's label rows in the release (task 6's `img` is optional); a row's
# other keys are counted as unknown fields at load.
LABEL_FIELDS: dict[str, frozenset[str]] = {
    "task_1_2": frozenset({"id", "num_lane", "laneinfo", "pixel_line"}),
    "task_3": frozenset({"id", "pixel_line", "ground_truth"}),
    "task_4_5": frozenset({"id", "num_lane", "laneinfo"}),
    "task_6": frozenset({"id", "road_type", "img"}),
}
EXTRA_LABEL_FIELDS: frozenset[str] = frozenset({"id", "extra_labels"})


def label_file(source: Path, folder: str) -> Path | None:
    """The label file of one release folder, in either layout; None when the folder is absent."""
    for candidate in (source / folder / LABEL_FILE, source / folder / "dataset" / LABEL_FILE):
        if candidate.is_file():
            return candidate
    return None


def label_files(source: Path) -> dict[str, Path]:
    """folder -> label file for the folders present; an error when there is none at all."""
    wanted = ", ".join(f"{folder}/{LABEL_FILE}" for folder in LABEL_FOLDERS)
    if not source.is_dir():
        raise SuiteSourceError(
            f"RoadBench source {source} is not a folder (expected the release's folder of {wanted})"
        )
    found = {folder: path for folder in LABEL_FOLDERS if (path := label_file(source, folder))}
    if not found:
        raise SuiteSourceError(
            f"no RoadBench label file under {source} (looked for {wanted}; "
            f"found {folder_listing(source)})"
        )
    return found
