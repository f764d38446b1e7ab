"""A run's end: its last record (planned for a dry run, finished with its metrics, after its
parts are compacted, or why it stopped), its summary and its last log line. A stopped run
raises `RunStopped` with its summary, recorded first."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from roadeval.flows.record.manifest import answering_record, build_manifest
from roadeval.flows.record.parts import Run
from roadeval.flows.record.record import RunRecord
from roadeval.flows.record.summary import BudgetState, RunStopped, RunSummary
from roadeval.flows.run.answer import Answered
from roadeval.flows.run.metrics import Metrics
from roadeval.storage.records import RunStatus
from roadeval.storage.store import describe_store_error
from roadeval.tasks.calls.stopping import StopReason

if TYPE_CHECKING:
    from roadeval.tasks.results.manifest import CompactionRecord, RunManifest
    from roadeval.tasks.shard.stages import ShardResult


def end_run(
    run: Run,
    record: RunRecord,
    answered: Answered,
    metrics: Metrics | None,
    failure: BaseException | None,
) -> RunSummary:
    """The run's last record and summary: `planned` (a dry run that went through), `finished`
    (a run with its metrics landed), else stopped: recorded so, and raised as `RunStopped`."""
    stopped = failure is not None or run.engines.stop.requested
    # Each summary is made before its record ends: the record's key is the one thing it waits for.
    if run.context.dry_run and not stopped:
        manifest = _manifest(run, answered, [])
        summary = _summary(run, answered, None, manifest, [], RunStatus.PLANNED)
        try:
            summary.manifest_key = record.end(RunStatus.PLANNED, manifest)
        except Exception as exc:
            failure = exc
        else:
            run.log.finished(summary)
            return summary
    if metrics is not None:
        manifest = _manifest(run, answered, answered.results)
        manifest.intervals = metrics.intervals
        manifest.compaction = _compact(run)
        summary = _summary(run, answered, metrics, manifest, answered.results, RunStatus.FINISHED)
        try:
            summary.manifest_key = record.end(RunStatus.FINISHED, manifest)
        except Exception as exc:
            failure = exc  # landed, but not recorded: told below as a store failure
        else:
            run.log.finished(summary)
            return summary
    raise _stopped(run, record, answered, failure) from failure


def _stopped(
    run: Run, record: RunRecord, answered: Answered, failure: BaseException | None
) -> RunStopped:
    """Record why the run stopped (its stop's reason, or its failure) and say so."""
    store = run.context.store
    reason = run.engines.stop.reason or StopReason(
        describe_store_error(store.uri, failure)
        if isinstance(failure, OSError)
        else f"the run failed: {failure}",
        1,
        RunStatus.FAILED,
    )
    # Counted from what landed: a shard that did not land is left (`not_landed`), never
    # counted as answered, so the last line and the `runs` row say the same.
    results = answered.results
    if not run.context.dry_run:
        results = _with_unlanded(run, results)
    manifest = _manifest(run, answered, results)
    summary = _summary(run, answered, None, manifest, results, reason.status)
    summary.in_flight_at_stop = run.engines.in_flight.at_stop
    try:
        summary.manifest_key = record.end(reason.status, manifest, reason.message)
    except Exception as exc:
        # The store that stopped the run may refuse its last record too: said, not implied.
        summary.record_error = describe_store_error(store.uri, exc)
    run.log.stopped(run.context.run_id, reason.status, reason.message, manifest.totals)
    return RunStopped(summary, reason)


def _manifest(run: Run, answered: Answered, results: list[ShardResult]) -> RunManifest:
    remote = run.engines.remote
    scored = remote.on_cluster if remote is not None else 0
    now = datetime.now(UTC)
    answering = run.engines.answering
    return build_manifest(
        run.context,
        run.inputs,
        results,
        now,
        answered.spread,
        run.engines.scoring,
        scored,
        answering_record(answering) if answering is not None else None,
    )


def _compact(run: Run) -> CompactionRecord:
    """Fold the finished run's parts into one per table, suite and model, for its readers (a
    rerun against it, queries); a store that refuses is told, and the run still ends finished:
    every row of it is landed already."""
    from roadeval.storage.compaction import compact_run
    from roadeval.tasks.results.manifest import CompactionRecord

    try:
        done = compact_run(run.context.store, run.context.run_id)
    except Exception as exc:
        error = describe_store_error(run.context.store.uri, exc)
        run.log.compaction_failed(error)
        return CompactionRecord(error=error)
    return CompactionRecord(parts_written=len(done.written), parts_replaced=len(done.replaced))


def _with_unlanded(run: Run, results: list[ShardResult]) -> list[ShardResult]:
    """`results` (the shards that landed) with every other shard of the run as one that did not
    land, in plan order."""
    from roadeval.tasks.shard.stages import ShardResult

    shards = run.inputs.shards
    landed = {result.shard: result for result in results}
    every = [landed.get(shard.name) or ShardResult.not_landed(shard) for shard in shards]
    # Results of no shard of the run's (none are expected) are kept, not dropped.
    names = {shard.name for shard in shards}
    return every + [result for result in results if result.shard not in names]


def _summary(
    run: Run,
    answered: Answered,
    metrics: Metrics | None,
    manifest: RunManifest,
    results: list[ShardResult],
    status: str,
) -> RunSummary:
    """The run's summary but for its record's key (`manifest_key`, set once the record ends)."""
    return RunSummary(
        run.context.run_id,
        run.context.store.uri,
        None,
        metrics.rows if metrics is not None else [],
        manifest,
        results,
        status,
        orchestrator=str(run.context.orchestrator.kind),
        budget=_budget_state(run, answered, status),
        estimates=answered.estimates,
        pairs=metrics.pairs if metrics is not None else [],
    )


def _budget_state(run: Run, answered: Answered, status: str) -> BudgetState | None:
    from roadeval.tasks.calls.budget import OUT_OF_BUDGET

    budget = run.engines.budget
    if budget.limit_usd is None:
        return None
    left = _worst_case_left(run, answered) if status == OUT_OF_BUDGET else None
    return BudgetState(budget.limit_usd, budget.spent_usd, left)


def _worst_case_left(run: Run, answered: Answered) -> float | None:
    """The worst case of what a resumed run would still pay (see `worst_case_left`)."""
    from roadeval.tasks.cache.responses import ResponseCache
    from roadeval.tasks.results.estimate import worst_case_left

    judge = run.engines.judge
    judge_spec = judge.spec if judge is not None else None
    run_id = run.context.run_id
    cache = ResponseCache(run.context.store, run_id=run_id)
    return worst_case_left(answered.plans, cache, judge_spec, run_id)
