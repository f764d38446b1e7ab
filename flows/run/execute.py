"""One run's stages after its suites are loaded: render, plan (landed before the first call),
answer and score shard by shard, aggregate, land; or, for a dry run, plan and estimate only.

The stages run on whichever orchestrator the run was given; this module holds the run's logic
once for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from roadeval.flows.panel.file import Panel
from roadeval.flows.rerun.baseline import BaselineRun
from roadeval.flows.rerun.changes import land_changes
from roadeval.flows.rerun.comparison import (
    compare_with_baseline,
    comparisons_against,
    metric_deltas_against,
)
from roadeval.flows.run.collect import collect, failed
from roadeval.flows.run.log import RunLog, run_logger
from roadeval.flows.run.manifest import answering_record, build_manifest
from roadeval.flows.run.parts import RunContext, RunEngines, RunInputs
from roadeval.flows.run.progress import RunProgress
from roadeval.flows.run.quick_exit import keep_until_exit
from roadeval.flows.run.record import RunRecord
from roadeval.flows.run.report import prepare_report
from roadeval.flows.run.rescore import unanswered
from roadeval.flows.run.summary import BudgetState, RunStopped, RunSummary
from roadeval.flows.stages.answer import (
    ANSWER_SHARD,
    AnswerSpread,
    planning_waves,
    unanswered_first_attempts,
)
from roadeval.flows.stages.load import LoadedSuite
from roadeval.flows.stages.orchestration import Orchestrator, StageFuture
from roadeval.flows.stages.plan import PLAN_SHARD, applicable, land_plan, plan_shards
from roadeval.flows.stages.render import blind_suites, render_suites
from roadeval.storage.landing import Part, land
from roadeval.storage.records import MetricPairRow, MetricRow, RunStatus
from roadeval.storage.store import Store, StoreError, describe_store_error
from roadeval.tasks.cache.journal import close_gateway_journals
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.admission import Gate
from roadeval.tasks.calls.budget import OUT_OF_BUDGET, Budget
from roadeval.tasks.calls.clients import ClientBuilder
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.secrets import Redactor, install_log_redaction, remove_log_redaction
from roadeval.tasks.calls.stopping import InFlightAtStop, StopReason, StopSignal
from roadeval.tasks.results.aggregate import aggregate
from roadeval.tasks.results.items import land_items
from roadeval.tasks.results.manifest import (
    CompactionRecord,
    HorizonRecord,
    IntervalsRecord,
    RunManifest,
)
from roadeval.tasks.results.suite_tables import suite_table_parts
from roadeval.tasks.results.uncertainty import run_intervals
from roadeval.tasks.shard.answer_cluster import ClusterAnswering
from roadeval.tasks.shard.answering_config import AnsweringEngine
from roadeval.tasks.shard.plan import ShardPlan
from roadeval.tasks.shard.remote_scoring import RemoteScoring, ScoringEngine
from roadeval.tasks.shard.scoring_choice import HeavyWork, choose_scoring
from roadeval.tasks.shard.stages import ShardResult


def execute_run(
    run_id: str,
    started: datetime,
    panel: Panel,
    store: Store,
    loaded: list[LoadedSuite],
    orchestrator: Orchestrator,
    dry_run: bool,
    baseline: BaselineRun | None = None,
    rescore: bool = False,
    reports: bool = False,
    horizon: HorizonRecord | None = None,
) -> RunSummary:
    """Make the run's clients (one budget for all of them, the judge's included), render, shard,
    compare with the baseline run, and go; see `_Run.execute`. `reports`: a finished run's
    report follows (its figures' helpers start as the metrics land)."""
    stop = StopSignal()
    redact = Redactor.from_environment(s.api_key_env for s in panel.all_models if s.api_key_env)
    # One budget for every caller of the run: answers, re-asks, retries and the judge.
    budget = Budget(panel.budget_usd)
    context = RunContext(
        run_id, started, panel, store, orchestrator, dry_run, rescore, reports, horizon
    )
    builder = ClientBuilder(run_id, stop, redact, budget=budget, fresh_from=context.fresh_from)
    clients = {spec.label: builder.client(spec) for spec in panel.models}
    judge = builder.client(panel.judge) if panel.judge is not None else None
    # The run's gates admit every request of it, in any process: this one holds them all (its
    # builder has no authority to defer to), and other processes are admitted through them.
    gates = [c.gate for c in [*clients.values(), judge] if c is not None]
    held = [gate for gate in gates if isinstance(gate, Gate)]
    in_flight = InFlightAtStop(stop, lambda: sum(gate.in_flight for gate in held))
    # The panel is checked (a model for every suite, a judge where one scores) before anything
    # is drawn; the shards are made after the renders, without the items that cannot be drawn.
    pairs, not_covered = applicable(panel, loaded)
    renders = render_suites(loaded, store, panel.render, orchestrator)
    blind = blind_suites(panel.ablations, renders)
    changes, reader = compare_with_baseline(
        run_id, store, panel, loaded, renders, baseline, rescore, context.fresh_from
    )
    shards = plan_shards(
        run_id,
        panel,
        pairs,
        clients,
        rescore=rescore,
        copied=reader.candidates(changes) if reader is not None else None,
        shown=blind,
        counted=dry_run,
    )
    scoring = choose_scoring(panel.scoring, HeavyWork.of(shards))
    remote = (
        RemoteScoring(panel.scoring, store, run_id, stop, judge)
        if scoring.engine is ScoringEngine.RAY and not dry_run
        else None
    )
    filters = install_log_redaction(redact)
    answering: ClusterAnswering | None = None
    try:
        if panel.answering.engine is AnsweringEngine.RAY and not dry_run and not rescore:
            # Joined and checked before the run is recorded: a cluster that cannot answer is
            # refused (ClusterRefused, exit 2) before the first call.
            answering = ClusterAnswering(
                panel.answering, store, run_id, stop, context.fresh_from, budget.capped
            )
            answering.start([*clients.values(), *([judge] if judge is not None else [])])
        run = _Run(
            context,
            RunInputs(loaded, renders, shards, not_covered, baseline, reader, changes, blind),
            RunEngines(stop, redact, budget, judge, remote, in_flight, scoring, answering),
            log=RunLog(run_logger(orchestrator)),
        )
        # The run's items, plans and baseline answers: not freed one by one when the command
        # ends.
        keep_until_exit(run)
        with stop.on_signals():
            return run.execute()
    finally:
        remove_log_redaction(filters)
        if remote is not None:
            remote.close()
        if answering is not None:
            answering.close()


@dataclass
class _Run:
    """One run's shards, from its `running` record to its last."""

    context: RunContext
    inputs: RunInputs
    engines: RunEngines
    plans: list[ShardPlan] = field(default_factory=list)
    # A rescore's planning failure, from before the run was recorded (`_plan_rescore`).
    planning_failure: BaseException | None = None
    estimates: list[Any] = field(default_factory=list)
    # Answer worker processes the calls were spread over (0: answered in this process).
    spread: int = 0
    # The run's own log lines (Prefect's run logger under a flow run), chosen where it starts.
    log: RunLog = field(default_factory=RunLog)
    # The paired differences landed with the metrics (a finished run's).
    pairs: list[MetricPairRow] = field(default_factory=list)

    def manifest(self, results: list[ShardResult], ended: datetime | None) -> RunManifest:
        remote = self.engines.remote
        scored = remote.on_cluster if remote is not None else 0
        answering = self.engines.answering
        return build_manifest(
            self.context,
            self.inputs,
            results,
            ended,
            self.spread,
            self.engines.scoring,
            scored,
            answering_record(answering) if answering is not None else None,
        )

    def summary(
        self,
        key: str | None,
        metrics: list[MetricRow],
        manifest: RunManifest,
        results: list[ShardResult],
        status: str,
    ) -> RunSummary:
        return RunSummary(
            self.context.run_id,
            self.context.store.uri,
            key,
            metrics,
            manifest,
            results,
            status,
            orchestrator=str(self.context.orchestrator.kind),
            budget=self._budget_state(status),
            estimates=self.estimates,
            pairs=self.pairs,
        )

    def execute(self) -> RunSummary:
        if self.context.rescore:
            self._plan_rescore()
        record = RunRecord(self.context.store, self.context.run_id, self.engines.redact)
        try:
            record.start(self.manifest([], None))
        except Exception as exc:
            # Nothing was asked yet: the store failing now is a store error, not a failed run.
            raise StoreError(describe_store_error(self.context.store.uri, exc)) from exc
        self.log.started(self.context, self.inputs)
        results: list[ShardResult] = []
        metrics: list[MetricRow] | None = None
        intervals: IntervalsRecord | None = None
        failure: BaseException | None = None
        try:
            results, failure = self._stages()
            if self.context.dry_run and failure is None and not self.engines.stop.requested:
                manifest = self.manifest([], datetime.now(UTC))
                key = record.end(RunStatus.PLANNED, manifest)
                return self._logged(self.summary(key, [], manifest, [], RunStatus.PLANNED))
            if failure is None and not self.engines.stop.requested:
                if self.context.reports:
                    prepare_report()
                # Metrics only from a whole run: a stopped run's would describe a subset.
                metrics, self.pairs, intervals = self._land_metrics(results)
        except Exception as exc:
            failure = exc
        if metrics is not None:
            manifest = self.manifest(results, datetime.now(UTC))
            manifest.intervals = intervals
            manifest.compaction = self._compact()
            try:
                key = record.end(RunStatus.FINISHED, manifest)
            except Exception as exc:
                failure = exc  # landed, but not recorded: told below as a store failure
            else:
                return self._logged(
                    self.summary(key, metrics, manifest, results, RunStatus.FINISHED)
                )
        reason = self.engines.stop.reason or StopReason(
            describe_store_error(self.context.store.uri, failure)
            if isinstance(failure, OSError)
            else f"the run failed: {failure}",
            1,
            RunStatus.FAILED,
        )
        # Counted from what landed: a shard that did not land is left (`not_landed`), never
        # counted as answered, so the last line and the `runs` row say the same.
        if not self.context.dry_run:
            results = self._with_unlanded(results)
        manifest = self.manifest(results, datetime.now(UTC))
        last_key: str | None = None
        record_error: str | None = None
        try:
            last_key = record.end(reason.status, manifest, reason.message)
        except Exception as exc:
            # The store that stopped the run may refuse its last record too: said, not implied.
            record_error = describe_store_error(self.context.store.uri, exc)
        summary = self.summary(last_key, [], manifest, results, reason.status)
        summary.record_error = record_error
        summary.in_flight_at_stop = self.engines.in_flight.at_stop
        self.log.stopped(self.context.run_id, reason.status, reason.message, manifest.totals)
        raise RunStopped(summary, reason) from failure

    def _compact(self) -> CompactionRecord:
        """Fold the finished run's parts into one per table, suite and model, for its readers
        (a rerun against it, queries); a store that refuses is told, and the run still ends
        finished: every row of it is landed already."""
        from roadeval.storage.compaction import compact_run

        try:
            done = compact_run(self.context.store, self.context.run_id)
        except Exception as exc:
            error = describe_store_error(self.context.store.uri, exc)
            self.log.compaction_failed(error)
            return CompactionRecord(error=error)
        return CompactionRecord(parts_written=len(done.written), parts_replaced=len(done.replaced))

    def _logged(self, summary: RunSummary) -> RunSummary:
        self.log.finished(summary)
        return summary

    def _landed(self, progress: RunProgress, result: ShardResult) -> None:
        progress.advance()
        self.log.shard_landed(result)

    def _with_unlanded(self, results: list[ShardResult]) -> list[ShardResult]:
        """`results` (the shards that landed) with every other shard of the run as one that did
        not land, in plan order."""
        shards = self.inputs.shards
        landed = {result.shard: result for result in results}
        every = [landed.get(shard.name) or ShardResult.not_landed(shard) for shard in shards]
        # Results of no shard of the run's (none are expected) are kept, not dropped.
        names = {shard.name for shard in shards}
        return every + [result for result in results if result.shard not in names]

    def _clients(self) -> list[ModelClient]:
        seen: dict[int, ModelClient] = {}
        for shard in self.inputs.shards:
            seen.setdefault(id(shard.client), shard.client)
        if self.engines.judge is not None and any(s.suite.uses_judge for s in self.inputs.shards):
            seen.setdefault(id(self.engines.judge), self.engines.judge)
        return list(seen.values())

    def _stages(self) -> tuple[list[ShardResult], BaseException | None]:
        """Land the items; then plan every shard on the renders, each shard's plan landed
        before its first call and the shard asked as soon as it has (a dry run plans only)."""
        context, inputs = self.context, self.inputs
        for suite in inputs.loaded:
            land_items(context.store, suite.suite.name, suite.items, suite.hash)
        # What changed since the baseline, landed before the first call.
        land_changes(context.run_id, context.store, inputs.changes)
        answering = self.engines.answering
        nodes = answering.calls_per_node if answering is not None else None
        progress = RunProgress(self._clients(), self.engines.budget, nodes=nodes)
        with progress:
            if context.dry_run:
                return self._plan_only(progress)
            if context.rescore:
                return self._rescore(progress)
            return self._plan_and_answer(progress)

    def _plan_rescore(self) -> None:
        """A rescore's plans, made before the run is recorded: a store that lacks an answer
        they need refuses it here (`RescoreRefused`, exit 2), and no run is left behind. A
        planning failure is kept for the run to record (`_rescore`)."""
        with RunProgress(self._clients(), self.engines.budget) as progress:
            self.planning_failure = self._plan_all(progress)
        if self.planning_failure is None and not self.engines.stop.requested:
            refused = unanswered(self.plans)
            if refused is not None:
                raise refused

    def _rescore(self, progress: RunProgress) -> tuple[list[ShardResult], BaseException | None]:
        """Score each shard from the stored answers, planned and checked before the run was
        recorded (`_plan_rescore`)."""
        if self.planning_failure is not None:
            return [], self.planning_failure
        land_plan(self.context.store, f"{self.context.run_id}-plan", self.plans, self.engines.judge)
        progress.phase("scoring", len(self.plans))
        futures = [
            self.context.orchestrator.submit(
                ANSWER_SHARD, plan, self.context.store, self.engines.judge, self.engines.remote
            )
            for plan in self.plans
        ]
        landed = partial(self._landed, progress)
        return collect(self.context.orchestrator, futures, self.engines.stop, landed)

    def _plan_only(self, progress: RunProgress) -> tuple[list[ShardResult], BaseException | None]:
        """A dry run's stage: every shard planned and estimated, the plan and the estimate
        landed, shard by shard (`run.dry_run`: no plan is kept)."""
        from roadeval.flows.run.dry_run import plan_and_estimate

        self.estimates, failure = plan_and_estimate(
            self.context, self.inputs, self.engines, progress
        )
        return [], failure

    def _plan_all(self, progress: RunProgress) -> BaseException | None:
        """Plan every shard at once (`self.plans`, a rescore's), landing nothing; a failed
        plan's error."""
        plan_futures = [
            self.context.orchestrator.submit(
                PLAN_SHARD,
                shard,
                self.inputs.renders_for(shard),
                self.context.store,
                self.inputs.reader,
            )
            for shard in self.inputs.shards
        ]
        progress.phase("planning", len(plan_futures))
        plans, failure = collect(
            self.context.orchestrator, plan_futures, self.engines.stop, lambda _: progress.advance()
        )
        if failure is None:
            self.plans = plans
        return failure

    def _plan_and_answer(
        self, progress: RunProgress
    ) -> tuple[list[ShardResult], BaseException | None]:
        """The first request waits for one shard's plan, not the whole run's: shards are
        planned in turn from each suite x model (a rerun's copies once the rest are planned,
        `planning_waves`), and each is submitted for answering once its plan has landed."""
        shards = self.inputs.shards

        def planning(wave: list[int]) -> dict[int, StageFuture[ShardPlan]]:
            return {
                n: self.context.orchestrator.submit(
                    PLAN_SHARD,
                    shards[n],
                    self.inputs.renders_for(shards[n]),
                    self.context.store,
                    self.inputs.reader,
                )
                for n in wave
            }

        progress.phase("answering", len(shards))
        plans: dict[int, ShardPlan] = {}
        answers: dict[int, StageFuture[ShardResult]] = {}
        failure: BaseException | None = None
        # Items to be asked of models: not the baselines', not a rerun's copies.
        asked = sum(len(s.items) for s in shards if not s.client.spec.is_baseline and not s.copies)
        spread = AnswerSpread(
            self.context.panel.processes,
            self._clients,
            self.engines.stop,
            self.context.run_id,
            self.context.fresh_from,
            self.engines.budget.capped,
            asked,
        )
        try:
            for wave in planning_waves(shards):
                plan_futures = planning(wave)
                position = {id(future): n for n, future in plan_futures.items()}
                for future in self.context.orchestrator.as_completed(list(plan_futures.values())):
                    n = position[id(future)]
                    try:
                        plan = future.result()
                        if plan.asks:
                            # Before the first call. A plan that asks nothing (a rerun's
                            # copies) lands with the shard's rows instead (`run_shard`).
                            name = f"{shards[n].name}-plan"
                            land_plan(self.context.store, name, [plan], self.engines.judge)
                    except Exception as exc:
                        if failure is None:
                            failure = exc
                            self.engines.stop.request(failed(exc))
                        continue
                    plans[n] = plan
                    self._plan_stats([plan])
                    answers[n] = self.context.orchestrator.submit(
                        ANSWER_SHARD,
                        plan,
                        self.context.store,
                        self.engines.judge,
                        self.engines.remote,
                        self.engines.answering or spread.workers_for(plan),
                    )
            self.plans = [plans[n] for n in sorted(plans)]
            results, answer_failure = collect(
                self.context.orchestrator,
                [answers[n] for n in sorted(answers)],
                self.engines.stop,
                partial(self._landed, progress),
            )
            return results, failure or answer_failure
        finally:
            self.spread = spread.processes
            spread.close()
            close_gateway_journals()  # this process's answers (the workers close theirs)

    def _plan_stats(self, plans: Sequence[ShardPlan]) -> None:
        """Tell each model's live counters how many requests its plans will send (the judge:
        one per judged item at worst)."""
        for plan in plans:
            plan.shard.client.stats.plan(unanswered_first_attempts(plan))
            if self.engines.judge is not None and plan.shard.suite.uses_judge:
                self.engines.judge.stats.plan(len(plan.items))

    def _budget_state(self, status: str) -> BudgetState | None:
        limit = self.engines.budget.limit_usd
        if limit is None:
            return None
        left = self._worst_case_left() if status == OUT_OF_BUDGET else None
        return BudgetState(limit, self.engines.budget.spent_usd, left)

    def _worst_case_left(self) -> float | None:
        """The worst case of what a resumed run would still pay (see `worst_case_left`)."""
        from roadeval.tasks.results.estimate import worst_case_left

        judge_spec = self.engines.judge.spec if self.engines.judge is not None else None
        cache = ResponseCache(self.context.store, run_id=self.context.run_id)
        return worst_case_left(self.plans, cache, judge_spec, self.context.run_id)

    def _land_metrics(
        self, results: list[ShardResult]
    ) -> tuple[list[MetricRow], list[MetricPairRow], IntervalsRecord]:
        """The run's metrics per suite x model x variant (a blind ablation's never mixed into
        the released items'), their headline intervals and the pairs' differences (per
        variant), the metric deltas and paired comparisons against the baseline and the suites'
        own tables, in one landing."""
        by_pair: dict[tuple[str, str, str], list[Any]] = {}
        for result in results:
            key = (result.suite, result.model, result.variant)
            by_pair.setdefault(key, []).extend(result.scored)
        suites = {s.suite.name: s.suite for s in self.inputs.loaded}
        run_id = self.context.run_id
        metrics: list[MetricRow] = []
        # The suites' own tables (TRIP's `pareto`) land with the metrics, so only for a whole run;
        # they have no variant column, so they are of the items as released.
        extra: list[Part] = []
        for (suite_name, model, variant), scored in sorted(by_pair.items()):
            metrics.extend(aggregate(suites[suite_name], model, run_id, scored, variant))
            if not variant:
                extra.extend(suite_table_parts(suites[suite_name], model, run_id, scored))
        metrics, pairs, intervals = self._intervals(suites, by_pair, metrics)
        deltas = metric_deltas_against(
            self.context.store,
            self.inputs.baseline,
            run_id,
            metrics,
            sorted({(suite, model) for suite, model, _ in by_pair}),
        )
        compared = comparisons_against(
            self.context.store,
            self.inputs.baseline,
            run_id,
            {(s, m): scored for (s, m, variant), scored in by_pair.items() if not variant},
            self.inputs.changes,
            self.context.panel.intervals,
        )
        land(
            self.context.store,
            f"{self.context.run_id}-metrics",
            [
                Part("metrics", metrics),
                Part("metric_pairs", pairs),
                Part("metric_deltas", deltas),
                Part("comparisons", compared),
                *extra,
            ],
        )
        return metrics, pairs, intervals

    def _intervals(
        self,
        suites: dict[str, Any],
        by_pair: dict[tuple[str, str, str], list[Any]],
        metrics: list[MetricRow],
    ) -> tuple[list[MetricRow], list[MetricPairRow], IntervalsRecord]:
        """Intervals and paired differences within each variant (a model is compared with
        another on the same items, shown the same way)."""
        rows: list[MetricRow] = []
        pairs: list[MetricPairRow] = []
        record: IntervalsRecord | None = None
        for variant in sorted({variant for _, _, variant in by_pair}):
            scored = {(s, m): items for (s, m, v), items in by_pair.items() if v == variant}
            found, found_pairs, found_record = run_intervals(
                suites,
                scored,
                [row for row in metrics if row.variant == variant],
                self.context.panel.intervals,
                self.context.run_id,
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
            record = run_intervals(suites, {}, [], self.context.panel.intervals, "")[2]
        return rows, pairs, record
