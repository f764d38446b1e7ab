"""A run against its baseline run: the item changes and what the plans may take from it,
before the first call; the metric deltas and the paired comparisons, with the metrics."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime

from roadeval.benchmarks.suite import ScoredItem
from roadeval.flows.panel.file import Panel
from roadeval.flows.rerun.baseline import BaselineReader, BaselineRun, scoring_key
from roadeval.flows.rerun.changes import suite_changes
from roadeval.flows.stages.load import LoadedSuite
from roadeval.storage.landing import read_rows
from roadeval.storage.records import ChangeRow, ComparisonRow, MetricDeltaRow, MetricRow
from roadeval.storage.store import Store, StoreError, describe_store_error
from roadeval.storage.tables import part_key
from roadeval.tasks.render.stage import Renders
from roadeval.tasks.requests.model_spec import redact_model
from roadeval.tasks.rerun.answers import CopyFreshness
from roadeval.tasks.rerun.changes import ChangeKind
from roadeval.tasks.rerun.deltas import metric_deltas
from roadeval.tasks.results.intervals import IntervalSettings

log = logging.getLogger(__name__)


def compare_with_baseline(
    run_id: str,
    store: Store,
    panel: Panel,
    loaded: list[LoadedSuite],
    renders: dict[str, Renders],
    baseline: BaselineRun | None,
    rescore: bool,
    fresh_from: datetime,
) -> tuple[dict[str, list[ChangeRow]], BaselineReader | None]:
    """Each suite's item changes against the baseline, and what the plans may take from it:
    its answers as fresh as the run's `reuse_for` measured from `fresh_from` allows; its score
    rows for the suites scored as the baseline scored them (same scoring key), unless this is
    a rescore. The baseline's rows are read now, every suite x model at once."""
    try:
        changes = {
            s.suite.name: suite_changes(run_id, store, s, renders.get(s.suite.name, {}), baseline)
            for s in loaded
        }
        if baseline is None:
            return changes, None
        judge = redact_model(panel.judge.model_dump(mode="json")) if panel.judge else None
        copy = frozenset(
            s.suite.name
            for s in loaded
            if not rescore
            and (record := baseline.suite(s.suite.name)) is not None
            and record.scoring_key == scoring_key(s.suite, judge)
        )
        fresh = CopyFreshness.of(fresh_from, panel.models, panel.judge)
        reader = BaselineReader(store, baseline, copy, fresh)
        reader.prefetch(
            (s.suite.name, spec.label)
            for s in loaded
            for spec in panel.models
            if spec.suites is None or s.suite.name in spec.suites
        )
    except Exception as exc:
        # Only the store is read here: a failure is the store's, before anything is asked.
        raise StoreError(describe_store_error(store.uri, exc)) from exc
    return changes, reader


def metric_deltas_against(
    store: Store,
    baseline: BaselineRun | None,
    run_id: str,
    metrics: list[MetricRow],
    pairs: list[tuple[str, str]],
) -> list[MetricDeltaRow]:
    """The run's metrics against the baseline's (read from its one metrics part); none
    without a baseline."""
    if baseline is None:
        return []
    key = part_key("metrics", f"{baseline.run_id}-metrics")
    try:
        # Read, not looked up first: a baseline lands its metrics part (one request, not two).
        old = read_rows(store, "metrics", [key])
    except FileNotFoundError:
        old = []  # a baseline that landed no metrics: no deltas
    return metric_deltas(run_id, baseline.run_id, old, metrics, pairs)


def comparisons_against(
    store: Store,
    baseline: BaselineRun | None,
    run_id: str,
    scored: Mapping[tuple[str, str], Sequence[ScoredItem]],
    changes: Mapping[str, Sequence[ChangeRow]],
    settings: IntervalSettings,
) -> list[ComparisonRow]:
    """Each suite x model's headline metrics against the baseline's, paired over the items
    unchanged since it (`scored`: the run's released items by suite x model); none without a
    baseline."""
    from roadeval.tasks.results.stored_compare import compare_with_stored

    if baseline is None:
        return []
    unchanged = {
        suite: {row.item_id for row in rows if row.kind == ChangeKind.UNCHANGED}
        for suite, rows in changes.items()
    }
    found = compare_with_stored(store, (baseline.run_id, run_id), scored, unchanged, settings)
    for (suite, model), compared in sorted(found.items()):
        if compared.problem:
            # Said, not implied: the pair has no comparison rows, the run goes on.
            log.warning(
                "%s x %s not compared with the baseline: %s", suite, model, compared.problem
            )
    return [row for compared in found.values() for row in compared.rows]
