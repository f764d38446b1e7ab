"""The `evaluate_panel` flow: every suite x every model of a panel, sharded, landed, summarised.

A run is recorded from its first moment (see `run_record`). Ctrl-C or SIGTERM stops it cleanly:
no new request starts, what was answered lands, the run is recorded `interrupted`, and the same
command resumes it without paying twice. A store that can no longer keep answers stops it the
same way, recorded `failed`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from prefect import flow
from prefect.futures import PrefectFuture, as_completed
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from roadeval.flows.manifest import build_manifest, count_table
from roadeval.flows.panel_file import Panel
from roadeval.flows.planning import plan_shards
from roadeval.flows.preflight import check_before_run
from roadeval.flows.rendering import render_suites
from roadeval.flows.run_record import RunRecord, RunStatus
from roadeval.flows.stages import (
    answer_task,
    land_plan,
    load_suite_task,
    plan_task,
)
from roadeval.flows.suites import LoadedSuite
from roadeval.storage.landing import Part, land
from roadeval.storage.records import MetricRow
from roadeval.storage.store import Store, StoreError, describe_store_error
from roadeval.tasks.aggregate import aggregate
from roadeval.tasks.gateway import ModelClient
from roadeval.tasks.items_table import land_items
from roadeval.tasks.model_spec import ModelSpec
from roadeval.tasks.plan import Shard
from roadeval.tasks.remote_scoring import RemoteScoring, ScoringEngine
from roadeval.tasks.render import Renders
from roadeval.tasks.secrets import Redactor, install_log_redaction, remove_log_redaction
from roadeval.tasks.shard import ShardResult
from roadeval.tasks.stopping import StopReason, StopSignal
from roadeval.tasks.suite_tables import suite_table_parts

T = TypeVar("T")


@dataclass
class RunSummary:
    """What a run hands back to the CLI: where it landed, what it measured, how it ended."""

    run_id: str
    store_uri: str
    manifest_key: str | None
    metrics: list[MetricRow]
    manifest: dict[str, Any]
    results: list[ShardResult] = field(default_factory=list)
    status: str = RunStatus.FINISHED

    @property
    def n_errors(self) -> int:
        return sum(r.counts["errors"] for r in self.results)


class RunStopped(Exception):
    """The run ended before its end (interrupted or failed) and was recorded so."""

    def __init__(self, summary: RunSummary, reason: StopReason) -> None:
        super().__init__(reason.message)
        self.summary = summary
        self.reason = reason


def _collect(
    futures: list[PrefectFuture[T]],
    stop: StopSignal,
    total_items: int,
    doing: str,
    items_in: Callable[[T], int],
) -> tuple[list[T], BaseException | None]:
    """Wait for every shard, showing on stderr how many items are done so far. A failed shard
    stops the run (the others end quickly and land what they have); its error is returned."""
    progress = Progress(
        TextColumn(doing),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    failure: BaseException | None = None
    done: dict[int, T] = {}
    order = {id(future): n for n, future in enumerate(futures)}
    with progress:
        bar = progress.add_task("items", total=total_items)
        for future in as_completed(futures):
            try:
                result = future.result()
            except Exception as exc:
                if failure is None:
                    failure = exc
                    stop.request(StopReason(f"a shard failed: {exc}", 1, RunStatus.FAILED))
                continue
            done[order[id(future)]] = result
            progress.advance(bar, items_in(result))
    # Results in plan order, so reports and manifests do not depend on timing.
    return [done[n] for n in sorted(done)], failure


@flow(name="evaluate-panel", log_prints=False)
def evaluate_panel(panel: Panel, store_uri: str | None = None) -> RunSummary:
    """Load suites, answer every item with every model (cached by request key), score, land."""
    started = datetime.now(UTC)
    run_id = started.strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]
    store = check_before_run(panel, store_uri)
    loaded = [load_suite_task(panel, i) for i in range(len(panel.suites))]

    stop = StopSignal()
    redact = Redactor.from_environment(s.api_key_env for s in panel.all_models if s.api_key_env)

    def client(spec: ModelSpec) -> ModelClient:
        return ModelClient(spec, stop=stop, redact=redact, run_id=run_id)

    clients = {spec.label: client(spec) for spec in panel.models}
    judge = client(panel.judge) if panel.judge is not None else None
    # The panel is checked (a model for every suite, a judge where one scores) before anything
    # is drawn; the shards are made after the renders, without the items that cannot be drawn.
    plan_shards(run_id, panel, loaded, clients)
    renders = render_suites(loaded, store, panel.render)
    shards, not_covered = plan_shards(run_id, panel, loaded, clients)
    remote = (
        RemoteScoring(panel.scoring, store, run_id, stop, panel.judge)
        if panel.scoring.engine is ScoringEngine.RAY
        else None
    )
    run = _Run(
        run_id,
        panel,
        store,
        loaded,
        renders,
        shards,
        not_covered,
        started,
        stop,
        redact,
        judge,
        remote,
    )
    filters = install_log_redaction(redact)
    try:
        with stop.on_signals():
            return run.execute()
    finally:
        remove_log_redaction(filters)
        if remote is not None:
            remote.close()


@dataclass
class _Run:
    """One run's shards, from its `running` record to its last."""

    run_id: str
    panel: Panel
    store: Store
    loaded: list[LoadedSuite]
    renders: dict[str, Renders]
    shards: list[Shard]
    not_covered: list[dict[str, Any]]
    started: datetime
    stop: StopSignal
    redact: Redactor
    judge: ModelClient | None
    remote: RemoteScoring | None

    def manifest(self, results: list[ShardResult], ended: datetime | None) -> dict[str, Any]:
        return build_manifest(
            self.run_id,
            self.panel,
            self.loaded,
            self.shards,
            count_table(results),
            self.not_covered,
            self.started,
            ended,
            self.store.uri,
        )

    def execute(self) -> RunSummary:
        record = RunRecord(self.store, self.run_id, self.redact)
        try:
            record.start(self.manifest([], None))
        except Exception as exc:
            # Nothing was asked yet: the store failing now is a store error, not a failed run.
            raise StoreError(describe_store_error(self.store.uri, exc)) from exc
        results: list[ShardResult] = []
        metrics: list[MetricRow] | None = None
        failure: BaseException | None = None
        try:
            results, failure = self._stages()
            if failure is None and not self.stop.requested:
                # Metrics only from a whole run: a stopped run's would describe a subset.
                metrics = self._land_metrics(results)
        except Exception as exc:
            failure = exc
        if metrics is not None:
            manifest = self.manifest(results, datetime.now(UTC))
            key = record.end(RunStatus.FINISHED, manifest)
            return RunSummary(self.run_id, self.store.uri, key, metrics, manifest, results)
        reason = self.stop.reason or StopReason(
            describe_store_error(self.store.uri, failure)
            if isinstance(failure, OSError)
            else f"the run failed: {failure}",
            1,
            RunStatus.FAILED,
        )
        manifest = self.manifest(results, datetime.now(UTC))
        last_key: str | None
        try:
            last_key = record.end(reason.status, manifest, reason.message)
        except Exception:
            last_key = None  # the store that stopped the run may refuse its last record too
        summary = RunSummary(
            self.run_id, self.store.uri, last_key, [], manifest, results, reason.status
        )
        raise RunStopped(summary, reason) from failure

    def _stages(self) -> tuple[list[ShardResult], BaseException | None]:
        """Land the items, plan every shard on the renders (and land the plan) before the
        first call, then answer and score shard by shard."""
        for suite in self.loaded:
            land_items(self.store, suite.suite.name, suite.items, suite.hash)
        renders = self.renders
        total = sum(len(shard.items) for shard in self.shards)
        plan_futures = [
            plan_task.submit(shard, renders[shard.suite.name], self.store) for shard in self.shards
        ]
        plans, failure = _collect(
            plan_futures, self.stop, total, "planning", lambda plan: len(plan.items)
        )
        if failure is not None:
            return [], failure
        land_plan(self.store, self.run_id, plans, self.judge)
        futures = [answer_task.submit(plan, self.store, self.judge, self.remote) for plan in plans]
        return _collect(
            futures, self.stop, total, "answering", lambda result: result.counts["items"]
        )

    def _land_metrics(self, results: list[ShardResult]) -> list[MetricRow]:
        by_pair: dict[tuple[str, str], list[Any]] = {}
        for result in results:
            by_pair.setdefault((result.suite, result.model), []).extend(result.scored)
        suites = {s.suite.name: s.suite for s in self.loaded}
        metrics: list[MetricRow] = []
        # The suites' own tables (TRIP's `pareto`) land with the metrics, so only for a whole run.
        extra: list[Part] = []
        for (suite_name, model), scored in sorted(by_pair.items()):
            metrics.extend(aggregate(suites[suite_name], model, self.run_id, scored))
            extra.extend(suite_table_parts(suites[suite_name], model, self.run_id, scored))
        land(self.store, f"{self.run_id}-metrics", [Part("metrics", metrics), *extra])
        return metrics
