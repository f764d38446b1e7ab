"""Everything the report shows of one run, read in one DuckDB connection over the store: a few
aggregate queries, each timed (the report's bench prints them)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field

import duckdb

from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.storage.store import Store
from roadeval.tasks.report.change_reads import Changes, changes
from roadeval.tasks.report.run_reads import (
    CostRow,
    ReportError,
    RunRecord,
    costs,
    item_health,
    latest_run,
    metric_pairs,
    metrics,
    require_outcomes,
    run_record,
    scored_count,
)
from roadeval.tasks.report.score_reads import (
    Histogram,
    ParetoBar,
    ReliabilityBin,
    histogram,
    pareto,
    reliability,
)
from roadeval.tasks.results.leaderboard import ItemHealth

# The per-item distributions each suite's figures need: the metric whose rows carry a
# confidence (reliability diagrams), and the metrics drawn as histograms.
RELIABILITY: dict[str, str] = {"v2xqa": "correct"}
HISTOGRAMS: dict[str, tuple[str, ...]] = {"stride": ("ade", "fde", "judge_score")}
# The categories of errors a Pareto chart shows (most first), per model and group.
PARETO_TOP = 12
# Metrics of whole numbers on a known scale, one bar per number (STRIDE's judge: 0-10).
WHOLE: dict[tuple[str, str], tuple[int, int]] = {("stride", "judge_score"): (0, 10)}


@dataclass
class Timings:
    """Seconds per named step, in the order they ran."""

    steps: list[tuple[str, float]] = field(default_factory=list)

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.steps.append((name, time.perf_counter() - start))


@dataclass(frozen=True)
class ReportData:
    """One run as the report shows it."""

    run: RunRecord
    metrics: list[MetricRow]
    pairs: list[MetricPairRow]
    health: dict[tuple[str, str, str], ItemHealth]
    costs: list[CostRow]
    # Score rows with a value (one item has a row per metric and sample): not a count of items.
    score_rows: int
    reliability: dict[str, list[ReliabilityBin]]
    histograms: list[Histogram]
    pareto: list[ParetoBar]
    changes: Changes
    # Suites whose package failed to load here: their own tables and rules are missing.
    unloaded: dict[str, str] = field(default_factory=dict)

    @property
    def suites(self) -> list[str]:
        manifest = self.run.manifest
        named = [s.name for s in manifest.suites] if manifest is not None else []
        return sorted(set(named) | {m.suite for m in self.metrics})


def load_suites(names: Iterable[str]) -> dict[str, str]:
    """Import the named suites that are installed, so the catalogue has each one's own tables
    (TRIP's `pareto`); returns those that failed to load, with why. Only the run's suites: a
    report of a TRIP run imports neither RoadBench's geometry nor STRIDE's."""
    from roadeval.benchmarks.registry import load_suite

    failed: dict[str, str] = {}
    for name in names:
        try:
            if load_suite(name) is None:
                failed[name] = "not installed here"
        except Exception as exc:
            failed[name] = f"{type(exc).__name__}: {exc}"
    return failed


def resolve_run(store: Store, run_id: str | None) -> str:
    """`run_id`, or the run started last; a ReportError for a store with no run."""
    if run_id is not None:
        return run_id
    from roadeval.storage.catalog import connect

    with closing(connect(store, tables=["run_events"])) as con:
        found = latest_run(con)
    if found is None:
        raise ReportError(f"no run in the store {store.uri}: nothing to report")
    return found


def read_report(store: Store, run_id: str, timings: Timings | None = None) -> ReportData:
    """The run's data, or a ReportError when it is not in the store or asked nothing (a run
    whose every item failed has a report: its health and costs say why). Read whole again when
    a compaction removes a part under it (`catalog.read_views`)."""
    from roadeval.storage.catalog import read_views

    timings = timings or Timings()
    with timings.measure("run"):
        run = read_views(
            store, lambda con: run_record(con, run_id), runs=[run_id], tables=["run_events"]
        )
    with timings.measure("load suites"):
        # Before the views are made: a suite's own tables are registered as it loads.
        named = [s.name for s in run.manifest.suites] if run.manifest is not None else []
        unloaded = load_suites(named)
    return read_views(store, lambda con: _report_data(con, run, unloaded, timings), runs=[run_id])


def _report_data(
    con: duckdb.DuckDBPyConnection, run: RunRecord, unloaded: dict[str, str], timings: Timings
) -> ReportData:
    run_id = run.run_id
    with timings.measure("item health"):
        health = item_health(con, run_id)
    # A run whose every item failed has no scores, and its report says why.
    require_outcomes(con, run, "report", health)
    with timings.measure("scored"):
        score_rows = scored_count(con, run_id)
    with timings.measure("metrics"):
        found_metrics = metrics(con, run_id)
    with timings.measure("metric_pairs"):
        pairs = metric_pairs(con, run_id)
    with timings.measure("costs"):
        cost_rows = costs(con, run_id)
    suites = {m.suite for m in found_metrics}
    bins: dict[str, list[ReliabilityBin]] = {}
    for suite, metric in RELIABILITY.items():
        if suite in suites:
            with timings.measure(f"reliability {suite}"):
                bins[suite] = reliability(con, run_id, suite, metric)
    histograms: list[Histogram] = []
    for suite, names in HISTOGRAMS.items():
        for metric in names if suite in suites else ():
            with timings.measure(f"histogram {suite} {metric}"):
                found = histogram(con, run_id, suite, metric, whole=WHOLE.get((suite, metric)))
            if found is not None:
                histograms.append(found)
    with timings.measure("pareto"):
        bars = pareto(con, run_id, PARETO_TOP)
    with timings.measure("changes"):
        moved = changes(con, run_id, run.baseline_run_id)
    return ReportData(
        run,
        found_metrics,
        pairs,
        health,
        cost_rows,
        score_rows,
        bins,
        histograms,
        bars,
        moved,
        unloaded,
    )


@dataclass(frozen=True)
class RunSummaryData:
    """What `roadeval show` prints of a run: its record, metrics, paired differences and
    per suite x model x variant the items not read or in error."""

    run: RunRecord
    metrics: list[MetricRow]
    pairs: list[MetricPairRow]
    health: dict[tuple[str, str, str], ItemHealth]


def read_summary(store: Store, run_id: str) -> RunSummaryData:
    """The run's summary data, or a ReportError when it is not in the store or asked nothing."""
    from roadeval.storage.catalog import read_views

    def summary(con: duckdb.DuckDBPyConnection) -> RunSummaryData:
        run = run_record(con, run_id)
        health = item_health(con, run_id)
        require_outcomes(con, run, "show", health)
        return RunSummaryData(run, metrics(con, run_id), metric_pairs(con, run_id), health)

    # Read whole again when a compaction removes a part under it (`catalog.read_views`).
    return read_views(store, summary, runs=[run_id])
