"""A run after it is set up, top-down: recorded `running` (its manifest, its heartbeat), its stages
(`answer`), a whole run's metrics (`metrics`), and its end (`end`): each visited once, the run
handed down as its frozen `Run`. The same code under Prefect and inline.

Ctrl-C or SIGTERM stops it cleanly (`StopSignal`): no new request starts, what was answered
lands, the run is recorded `interrupted`; secrets are kept out of every log line meanwhile."""

from __future__ import annotations

from roadeval.flows.record.manifest import answering_record, build_manifest
from roadeval.flows.record.parts import Run
from roadeval.flows.record.record import RunRecord
from roadeval.flows.record.summary import RunSummary
from roadeval.flows.run.answer import Answered, answer_run, clients, plan_rescore
from roadeval.flows.run.end import end_run
from roadeval.flows.run.metrics import Metrics, land_metrics
from roadeval.storage.store import StoreError, describe_store_error
from roadeval.tasks.calls.secrets import install_log_redaction, remove_log_redaction


def execute_run(run: Run) -> RunSummary:
    """Join the run's answering cluster (if it has one), record the run, go through its stages
    and end it (see `recorded`), its signals caught and its secrets kept out of the log
    meanwhile."""
    filters = install_log_redaction(run.engines.redact)
    answering = run.engines.answering
    try:
        if answering is not None:
            # Joined and checked before the run is recorded: a cluster that cannot answer is
            # refused (ClusterRefused, exit 2) before the first call.
            answering.start(clients(run))
        with run.engines.stop.on_signals():
            return recorded(run)
    finally:
        remove_log_redaction(filters)
        if run.engines.remote is not None:
            run.engines.remote.close()
        if answering is not None:
            answering.close()


def recorded(run: Run) -> RunSummary:
    """A rescore's plans first (a refusal leaves no run behind); the `running` record; the
    stages; a whole run's metrics; the last record. A failure anywhere after the first record
    is recorded, and raised as `RunStopped` (`flows.run.end`)."""
    context, inputs = run.context, run.inputs
    rescored = plan_rescore(run) if context.rescore else None
    answering = run.engines.answering
    manifest = build_manifest(
        context,
        inputs,
        [],
        None,
        scoring=run.engines.scoring,
        answering=answering_record(answering) if answering is not None else None,
    )
    record = RunRecord(context.store, context.run_id, run.engines.redact)
    try:
        record.start(manifest)
    except Exception as exc:
        # Nothing was asked yet: the store failing now is a store error, not a failed run.
        raise StoreError(describe_store_error(context.store.uri, exc)) from exc
    baseline = inputs.baseline.run_id if inputs.baseline is not None else None
    run.log.started(
        context.run_id,
        context.panel.name,
        context.store.uri,
        len(inputs.shards),
        len(inputs.loaded),
        baseline,
    )
    answered = Answered()
    metrics: Metrics | None = None
    failure: BaseException | None = None
    try:
        answered = answer_run(run, rescored)
        failure = answered.failure
        whole = failure is None and not run.engines.stop.requested
        if whole and not context.dry_run:
            metrics = land_metrics(run, answered.results)
    except Exception as exc:
        failure = exc
    return end_run(run, record, answered, metrics, failure)
