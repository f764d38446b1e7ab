"""A whole run's metrics: per suite x model x variant (a blind ablation's never mixed into the
released items'), their headline intervals and the pairs' differences (per variant), the metric
deltas and paired comparisons against the baseline and the suites' own tables, in one landing.
Only from a whole run: a stopped run's would describe a subset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roadeval.flows.process.quick_exit import armed
from roadeval.flows.record.parts import Run
from roadeval.flows.rerun.comparison import comparisons_against, metric_deltas_against

if TYPE_CHECKING:
    from roadeval.storage.records import MetricPairRow, MetricRow
    from roadeval.tasks.results.manifest import IntervalsRecord
    from roadeval.tasks.shard.stages import ShardResult

ByPair = dict[tuple[str, str, str], list[Any]]


@dataclass(frozen=True)
class Metrics:
    """A finished run's metrics, the paired differences and the intervals' record, as landed."""

    rows: list[MetricRow]
    pairs: list[MetricPairRow]
    intervals: IntervalsRecord


def land_metrics(run: Run, results: list[ShardResult]) -> Metrics:
    """Aggregate the scored items of every shard, then land the metrics with their pairs,
    deltas, paired comparisons and the suites' own tables. A run that ends with its report
    starts the report's figure helpers once its intervals are drawn (`prepare_report`)."""
    from roadeval.storage.landing import Part, land
    from roadeval.tasks.results.aggregate import aggregate
    from roadeval.tasks.results.suite_tables import suite_table_parts

    by_pair: ByPair = {}
    for result in results:
        key = (result.suite, result.model, result.variant)
        by_pair.setdefault(key, []).extend(result.scored)
    suites = {s.suite.name: s.suite for s in run.inputs.loaded}
    run_id = run.context.run_id
    metrics: list[MetricRow] = []
    # The suites' own tables (TRIP's `pareto`) land with the metrics, so only for a whole run;
    # they have no variant column, so they are of the items as released.
    extra: list[Part] = []
    for (suite_name, model, variant), scored in sorted(by_pair.items()):
        metrics.extend(aggregate(suites[suite_name], model, run_id, scored, variant))
        if not variant:
            extra.extend(suite_table_parts(suites[suite_name], model, run_id, scored))
    found = _intervals(run, suites, by_pair, metrics)
    if run.context.reports:
        # The helpers import while the comparisons, the landing, the compaction and the last
        # record go on.
        prepare_report()
    deltas = metric_deltas_against(
        run.context.store,
        run.inputs.baseline,
        run_id,
        found.rows,
        sorted({(suite, model) for suite, model, _ in by_pair}),
    )
    compared = comparisons_against(
        run.context.store,
        run.inputs.baseline,
        run_id,
        {(s, m): scored for (s, m, variant), scored in by_pair.items() if not variant},
        run.inputs.changes,
        run.context.panel.intervals,
    )
    land(
        run.context.store,
        f"{run_id}-metrics",
        [
            Part("metrics", found.rows),
            Part("metric_pairs", found.pairs),
            Part("metric_deltas", deltas),
            Part("comparisons", compared),
            *extra,
        ],
    )
    return found


def prepare_report() -> None:
    """A run about to finish: its report's figure helpers start now, in the command's own
    process (see `flows.run.report`), to import while the run lands its metrics."""
    if armed():
        from roadeval.tasks.report.drawing import start_helpers

        start_helpers()


def _intervals(
    run: Run, suites: dict[str, Any], by_pair: ByPair, metrics: list[MetricRow]
) -> Metrics:
    """Intervals and paired differences within each variant (a model is compared with another
    on the same items, shown the same way)."""
    from roadeval.tasks.results.uncertainty import run_intervals

    panel, run_id = run.context.panel, run.context.run_id
    rows: list[MetricRow] = []
    pairs: list[MetricPairRow] = []
    record: IntervalsRecord | None = None
    for variant in sorted({variant for _, _, variant in by_pair}):
        scored = {(s, m): items for (s, m, v), items in by_pair.items() if v == variant}
        found, found_pairs, found_record = run_intervals(
            suites,
            scored,
            [row for row in metrics if row.variant == variant],
            panel.intervals,
            run_id,
            variant,
        )
        rows += found
        pairs += found_pairs
        if record is None:
            record = found_record
        else:
            record.headlines.extend(found_record.headlines)
            record.seconds = round(record.seconds + found_record.seconds, 3)
    if record is None:
        record = run_intervals(suites, {}, [], panel.intervals, "")[2]
    return Metrics(rows, pairs, record)
