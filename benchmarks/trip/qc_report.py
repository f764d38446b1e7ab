"""`roadeval qc trip`: TRIP's quality rules over a source, one verdict per rule.

The source is read with bad rows skipped, not stopped at, so one pass finds every row the loader
refuses; each is filed under the rule its field belongs to (a repeated id under `ids`, an image or
scan that is missing or unreadable under `media`, the rest under `schema`), beside the item-level
checks of `quality`. A source that is not a TRIP items file (no row with TRIP's fields) or that
cannot be read at all (no items file) raises SuiteSourceError.
"""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.audit import IDS, Audit, AuditedSuite, Rule, ids_rule
from roadeval.benchmarks.item import MediaKind
from roadeval.benchmarks.item_checks import begin_audit
from roadeval.benchmarks.loading import read_jsonl
from roadeval.benchmarks.pointcloud import PointCloudError, load_point_cloud
from roadeval.benchmarks.quality_report import QualityReport, RuleStatus
from roadeval.benchmarks.source_shape import RowShape, require_shape
from roadeval.benchmarks.trip.loader import items_path
from roadeval.benchmarks.trip.quality import (
    BALANCE_P_VALUE,
    BALANCE_SHARE_TOLERANCE,
    HARD_LENGTH_RATIO,
    SOFT_LENGTH_RATIO,
    Severity,
    check_quality,
)
from roadeval.benchmarks.trip.taxonomy import ITEMS_FILE, LETTERS

SCHEMA = "schema"
MEDIA = "media"

# The rules in report order: each check's name in `quality`, and what it asks of the items.
RULES: tuple[Rule, ...] = (
    Rule(
        "option-length",
        f"r = max/min option length <= {HARD_LENGTH_RATIO}; up to {SOFT_LENGTH_RATIO} (warn) only "
        "if the answer is not the longest and the shortest is not perfunctory",
    ),
    Rule(
        "answer-balance",
        f"each gold letter 25% +/- {100 * BALANCE_SHARE_TOLERANCE:.0f} points "
        f"(fails when also chi-square p < {BALANCE_P_VALUE})",
    ),
    Rule(
        "duplicate", "no question repeated on the same media (normalised text; near repeats warn)"
    ),
    ids_rule("`id`"),
    Rule(MEDIA, "the image, the two views or the scan a visual item names: present and readable"),
    Rule(SCHEMA, "rows the loader accepts; taxonomy, options A-D, explanation, media per modality"),
)
# Loader problems by the row field they are about; every other one is a schema problem.
FIELD_RULES: dict[str, str] = {
    "id": IDS,
    "image": MEDIA,
    "bev_image": MEDIA,
    "front_image": MEDIA,
    "point_cloud": MEDIA,
}
ROW_SHAPE = RowShape(f"a TRIP {ITEMS_FILE}", ("id", "question", *LETTERS, "answer"))

_STATUS = {Severity.ERROR: RuleStatus.FAIL, Severity.WARNING: RuleStatus.WARN}


def quality_report(suite: AuditedSuite, source: Path) -> QualityReport:
    """Audit the TRIP source at `source` (its folder or its items file) against every rule."""
    path = items_path(Path(source))
    rows = ((f"line {number}", row) for number, row in read_jsonl(path, suite.limits))
    require_shape(path, rows, ROW_SHAPE)
    audit = begin_audit(suite, Path(source), RULES, FIELD_RULES, fallback=SCHEMA, shown_as=path)
    by_id = {item.item_id: item for item in audit.items}
    for finding in check_quality(audit.items):
        item = by_id.get(finding.item_id) if finding.item_id is not None else None
        audit.add(finding.check, item, finding.message, status=_STATUS[finding.severity])
    _check_scans(audit)
    return audit.report()


def _check_scans(audit: Audit) -> None:
    """A point-cloud item's scan must read as points (the loader checks only that it exists)."""
    for item in audit.items:
        for media in item.media:
            if media.kind is not MediaKind.POINT_CLOUD:
                continue
            try:
                load_point_cloud(Path(media.path))
            except PointCloudError as exc:
                audit.add(MEDIA, item, exc.problem, field="point_cloud")
