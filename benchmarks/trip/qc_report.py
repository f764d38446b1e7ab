"""`roadeval qc trip`: TRIP's quality rules over a source, one verdict per rule.

The source is read with bad rows skipped, not stopped at, so one pass finds every row the loader
refuses; those rows are schema failures beside the item-level checks of `quality`. A source that
cannot be read at all (no items file) raises SuiteSourceError, as a run would.
"""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.errors import BadItemPolicy, ItemProblem
from roadeval.benchmarks.loading import LoadReport, describe_unknown_fields
from roadeval.benchmarks.quality_report import Example, QualityReport, RuleResult, RuleStatus
from roadeval.benchmarks.trip.loader import items_path, load_items
from roadeval.benchmarks.trip.quality import (
    BALANCE_P_VALUE,
    BALANCE_SHARE_TOLERANCE,
    HARD_LENGTH_RATIO,
    SOFT_LENGTH_RATIO,
    QualityFinding,
    Severity,
    check_quality,
)
from roadeval.benchmarks.trip.taxonomy import SUITE_NAME

SCHEMA = "schema"

# The rules in report order: each check's name in `quality`, and what it asks of the items.
RULES: dict[str, str] = {
    "option-length": (
        f"r = max/min option length <= {HARD_LENGTH_RATIO}; up to {SOFT_LENGTH_RATIO} (warn) only "
        "if the answer is not the longest and the shortest is not perfunctory"
    ),
    "answer-balance": (
        f"each gold letter 25% +/- {100 * BALANCE_SHARE_TOLERANCE:.0f} points "
        f"(fails when also chi-square p < {BALANCE_P_VALUE})"
    ),
    "duplicate": "no question repeated on the same media (normalised text; near repeats warn)",
    SCHEMA: "rows the loader accepts; taxonomy, options A-D, explanation, media per modality",
}

_STATUS = {Severity.ERROR: RuleStatus.FAIL, Severity.WARNING: RuleStatus.WARN}


def quality_report(source: Path) -> QualityReport:
    """Audit the TRIP source at `source` (its folder or its items file) against every rule."""
    loaded = load_items(Path(source), BadItemPolicy.SKIP)
    examples: dict[str, list[Example]] = {rule: [] for rule in RULES}
    for finding in check_quality(loaded.items):
        examples[finding.check].append(_example(finding))
    examples[SCHEMA] = [*_loader_examples(loaded), *examples[SCHEMA]]
    rules = tuple(
        RuleResult.from_examples(rule, description, examples[rule])
        for rule, description in RULES.items()
    )
    rows = len(loaded.items) + len(loaded.skipped)
    return QualityReport(SUITE_NAME, str(items_path(Path(source))), rows, rules)


def _example(finding: QualityFinding) -> Example:
    return Example(finding.item_id, _STATUS[finding.severity], finding.message)


def _loader_examples(loaded: LoadReport) -> list[Example]:
    """Rows the loader refused fail the schema rule; fields outside the format only warn."""
    refused = [
        Example(problem.item_id, RuleStatus.FAIL, _where(problem)) for problem in loaded.skipped
    ]
    if loaded.unknown_fields:
        message = "fields outside the row format: " + describe_unknown_fields(loaded.unknown_fields)
        refused.append(Example(None, RuleStatus.WARN, message))
    return refused


def _where(problem: ItemProblem) -> str:
    line = f"line {problem.line}" if problem.line is not None else "the file"
    field = f", field {problem.field!r}" if problem.field else ""
    return f"{line}{field}: {problem.message}"
