"""A run's uncertainty: every suite's headline intervals and paired differences (`headlines`),
and the manifest's record of how they were computed."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from roadeval.benchmarks.suite import ScoredItem, Suite
from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.headlines import headline_intervals
from roadeval.tasks.results.intervals import (
    BOOTSTRAP,
    CLUSTERED,
    LEVEL,
    PAIRED,
    WILSON,
    IntervalSettings,
)
from roadeval.tasks.results.manifest import IntervalsRecord


def intervals_record(settings: IntervalSettings) -> IntervalsRecord:
    """The record of intervals computed with `settings`, its headlines yet to be added."""
    return IntervalsRecord(
        level=LEVEL,
        proportion_method=WILSON,
        bootstrap_method=BOOTSTRAP,
        paired_method=PAIRED,
        cluster_method=CLUSTERED,
        resamples=settings.resamples,
        seed=settings.seed,
    )


def run_intervals(
    suites: Mapping[str, Suite],
    scored: Mapping[tuple[str, str], Sequence[ScoredItem]],
    metrics: Sequence[MetricRow],
    settings: IntervalSettings,
    run_id: str,
    variant: str = "",
) -> tuple[list[MetricRow], list[MetricPairRow], IntervalsRecord]:
    """`metrics` with intervals on the headline rows, the pairs' rows and the record, for the
    items of `variant`; `scored` is keyed by (suite, model)."""
    started = time.perf_counter()
    record = intervals_record(settings)
    rows = list(metrics)
    pairs: list[MetricPairRow] = []
    for name in sorted({suite for suite, _ in scored}):
        by_model = {model: items for (suite, model), items in scored.items() if suite == name}
        at = [n for n, row in enumerate(rows) if row.suite == name]
        found = headline_intervals(
            suites[name], by_model, [rows[n] for n in at], settings, run_id, variant
        )
        for n, row in zip(at, found.rows, strict=True):
            rows[n] = row
        pairs.extend(found.pairs)
        record.headlines.extend(found.methods)
    record.seconds = round(time.perf_counter() - started, 3)
    return rows, pairs, record
