"""Task 4/5's extra_labels.jsonl: recording conditions per image (e.g. 光照不佳 poor lighting,
地面标识遮盖 occluded road markings), kept verbatim as the item label `condition`."""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, ItemProblem
from roadeval.benchmarks.loading import (
    DEFAULT_LIMITS,
    LoadLimits,
    LoadReport,
    read_jsonl,
    require,
)
from roadeval.benchmarks.roadbench.layout import EXTRA_LABEL_FIELDS, EXTRA_LABEL_FILE

CONDITION_SEPARATOR = "|"


def read_conditions(
    labels: Path, policy: BadItemPolicy, report: LoadReport, limits: LoadLimits = DEFAULT_LIMITS
) -> dict[str, str] | None:
    """id -> sorted conditions joined by "|", from the file beside `labels`; None without one.

    A bad row raises (ERROR) or is reported in `report.skipped` (SKIP); it removes no item.
    Keys outside the release's two fields are counted in `report.unknown_fields`.
    """
    path = labels.parent / EXTRA_LABEL_FILE
    if not path.is_file():
        return None
    found: dict[str, str] = {}
    for line, row in read_jsonl(path, limits):
        try:
            if isinstance(row, ItemError):
                raise row
            report.note_fields(path, row, EXTRA_LABEL_FIELDS)
            item_id = require(row, "id", path, line, str)
            values = require(row, "extra_labels", path, line, list)
            if not all(isinstance(value, str) and value for value in values):
                raise ItemError(
                    ItemProblem(str(path), line, "extra_labels", "expected strings", item_id)
                )
        except ItemError as exc:
            if policy is BadItemPolicy.ERROR:
                raise
            report.skipped.append(exc.problem)
            continue
        merged = set(values) | set(filter(None, found.get(item_id, "").split(CONDITION_SEPARATOR)))
        found[item_id] = CONDITION_SEPARATOR.join(sorted(merged)) or "none"
    return found
