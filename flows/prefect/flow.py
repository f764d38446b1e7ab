"""A run under Prefect: the `evaluate-panel` flow, with the run's stages as Prefect tasks named
by suite, model and chunk, the run's log lines in the flow run's logs, and its leaderboards and
health published as artifacts at its end.

Imported only when Prefect orchestrates (a configured API, `--prefect`, a deployment): importing
Prefect alone costs seconds. Deployments run `prefect.deployed`'s flows, which take a panel
file.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, cast

from prefect import Task, flow, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State
from prefect.states import Cancelled
from prefect.utilities.annotations import quote

from roadeval.flows.panel.file import Panel
from roadeval.flows.prefect.cut_off import (
    StageResult,
    cancelled_when_cut_off,
    completed,
    stage_value,
)
from roadeval.flows.run.log import run_logger
from roadeval.flows.run.summary import RunStopped, RunSummary
from roadeval.flows.stages.answer import ANSWER_SHARD
from roadeval.flows.stages.load import LOAD_SUITE
from roadeval.flows.stages.orchestration import (
    Announcement,
    FlowRunRef,
    Logger,
    OrchestratorKind,
    Stage,
    StageFuture,
)
from roadeval.flows.stages.plan import PLAN_SHARD
from roadeval.flows.stages.render import RENDER_SUITE
from roadeval.flows.stages.report import BUILD_REPORT
from roadeval.storage.records import RunStatus

T = TypeVar("T")

# How long a run's end waits for its last log lines to reach the Prefect API.
LOG_SEND_WAIT_S = 10.0
# The Prefect loggers the CLI keeps off its terminal (it reports a failed run itself, and
# Prefect's copy of the error as a traceback would bury that message).
PREFECT_RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")
# A flow run's name once its run has an id: the panel, then the run ('demo · 20261207T...').
FLOW_RUN_NAME = "{panel} · {run_id}"
# Every stage of a run, each a Prefect task of the stage's name.
STAGES = (LOAD_SUITE, RENDER_SUITE, PLAN_SHARD, ANSWER_SHARD, BUILD_REPORT)


def _as_task(stage: Stage[Any]) -> Task[Any, Any]:
    fn = cancelled_when_cut_off(stage)
    if stage.run_name is None:
        return task(name=stage.name, cache_policy=NO_CACHE)(fn)
    return task(name=stage.name, cache_policy=NO_CACHE, task_run_name=stage.run_name)(fn)


# One Prefect task per stage, made once (at import), as module-level tasks are.
TASKS: dict[str, Task[Any, Any]] = {stage.name: _as_task(stage) for stage in STAGES}


def _unwalked(args: Sequence[Any]) -> list[Any]:
    """Stage arguments that Prefect passes on without walking them: its input resolution visits
    every element of a collection or dataclass, which for a shard's plan is every message of
    every item (milliseconds per shard on the hot path). Stages never take futures."""
    return [quote(arg) for arg in args]


def current_flow_run() -> FlowRunRef | None:
    """The flow run this code runs in, and the name of the deployment that started it."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return None
    deployment: str | None = None
    if context.flow_run.deployment_id is not None:
        from prefect.runtime import deployment as this_deployment

        deployment = this_deployment.name
    return FlowRunRef(str(context.flow_run.id), deployment)


class PrefectOrchestrator:
    """Stages as Prefect task runs of the current flow run, on its thread-pool task runner."""

    kind = OrchestratorKind.PREFECT

    def __init__(self) -> None:
        self.flow_run = current_flow_run()

    def _task(self, stage: Stage[T]) -> Task[Any, T]:
        try:
            return TASKS[stage.name]
        except KeyError:
            raise KeyError(f"stage {stage.name!r} has no Prefect task") from None

    def call(self, stage: Stage[T], *args: Any) -> T:
        # Prefect's typing has a task call return the task's value, a state when asked for.
        state = cast(State[T], self._task(stage)(*_unwalked(args), return_state=True))
        return stage_value(state)

    def submit(self, stage: Stage[T], *args: Any) -> StageFuture[T]:
        return StageResult(self._task(stage).submit(*_unwalked(args)))

    def as_completed(self, submitted: Sequence[StageFuture[T]]) -> Iterator[StageFuture[T]]:
        yield from completed(submitted)

    def name_run(self, panel: str, run_id: str) -> None:
        """The flow run named `<panel> · <run_id>` (`FLOW_RUN_NAME`), as the UI lists it, so
        that a flow run leads to its run in the store. A name the API refuses is told (a
        warning) and the run goes on."""
        from prefect.client.orchestration import get_client
        from prefect.context import FlowRunContext

        context = FlowRunContext.get()
        if context is None or context.flow_run is None:
            return
        name = FLOW_RUN_NAME.format(panel=panel, run_id=run_id)
        try:
            with get_client(sync_client=True) as client:
                client.update_flow_run(context.flow_run.id, name=name)
        except Exception as exc:
            run_logger(self).warning("run %s: its flow run was not renamed: %s", run_id, exc)
            return
        context.flow_run.name = name

    def run_logger(self) -> Logger | None:
        """Prefect's logger of the current flow (or task) run: its lines are the run's Logs tab."""
        from prefect.context import FlowRunContext, TaskRunContext
        from prefect.logging import get_run_logger

        if FlowRunContext.get() is None and TaskRunContext.get() is None:
            return None
        return get_run_logger()

    def announce(self, announcement: Announcement) -> bool:
        from roadeval.flows.prefect.events import emit

        emit(announcement)
        return True

    def close(self) -> None:
        """Prefect's task runner ends with the flow run."""


@flow(name="evaluate-panel", log_prints=False)
def evaluate_panel_flow(
    panel: Panel,
    store_uri: str | None = None,
    dry_run: bool = False,
    against: str | None = None,
    rescore: bool = False,
    report: bool = True,
) -> RunSummary | State[Any]:
    """Load suites, answer every item with every model (cached by request key), score, land;
    a rerun of the panel's last finished run (or `against`) asks only what changed. A run
    stopped by a signal ends the flow run Cancelled (`run_in_flow`)."""
    return run_in_flow(
        panel, store_uri, dry_run=dry_run, against=against, rescore=rescore, report=report
    )


def summary_of(state: State[Any]) -> RunSummary:
    """The run's summary from its flow run's final state, or the run's own exception: a
    cancelled run's RunStopped (as an inline run raises it), a failed run's error."""
    if state.is_cancelled():
        stopped = state.result(raise_on_failure=False)
        if isinstance(stopped, RunStopped):
            raise stopped
    return cast(RunSummary, state.result())


def run_in_flow(
    panel: Panel,
    store_uri: str | None,
    *,
    dry_run: bool = False,
    against: str | None = None,
    rescore: bool = False,
    report: bool = True,
) -> RunSummary | State[Any]:
    """The run as the current flow run; its artifacts published at its end, a stopped run's
    too (its health says why it stopped), with what leads to a finished run's report. A run
    stopped by a signal (Prefect's cancel sends SIGTERM; Ctrl-C) returns a Cancelled state
    holding its RunStopped: the flow run ends Cancelled, the stop told by the run's one line
    (`RunLog.stopped`), not Failed with the stop as a traceback."""
    from roadeval.flows.run.start import run_panel

    quiet_cancelled_task_runs()
    orchestrator = PrefectOrchestrator()
    try:
        try:
            summary = run_panel(
                panel,
                store_uri,
                orchestrator,
                dry_run=dry_run,
                against=against,
                rescore=rescore,
                report=report,
            )
        except RunStopped as stopped:
            _publish(panel, orchestrator, stopped.summary, stopped.reason.message)
            if stopped.reason.status == RunStatus.INTERRUPTED:
                return Cancelled(message=stopped.reason.message, data=stopped)
            raise
        _publish(panel, orchestrator, summary)
        return summary
    finally:
        _send_logs()


def _send_logs() -> None:
    """Send the run's log lines to the API now: Prefect ships them in batches, the last as the
    process ends, so a flow run reported Completed (or Failed) could otherwise be missing its
    last lines, or lose them if its process is stopped right after. Only the log worker is
    drained (`APILogHandler.flush` would drain Prefect's events worker too, which warns on the
    console while it waits), and for `LOG_SEND_WAIT_S` at most: an API that stopped answering
    does not hold the run's end (the lines go on being sent meanwhile)."""
    from prefect.logging.handlers import APILogWorker

    sending = threading.Thread(
        target=APILogWorker.instance().drain, name="roadeval-send-logs", daemon=True
    )
    sending.start()
    sending.join(timeout=LOG_SEND_WAIT_S)


def _publish(
    panel: Panel,
    orchestrator: PrefectOrchestrator,
    summary: RunSummary,
    message: str | None = None,
) -> None:
    from roadeval.flows.prefect.artifacts import publish_report, publish_run_artifacts
    from roadeval.tasks.calls.secrets import Redactor

    redact = Redactor.from_environment(s.api_key_env for s in panel.all_models if s.api_key_env)
    try:
        publish_run_artifacts(summary, message, redact)
        publish_report(summary, redact)
    except Exception as exc:
        # The run has landed and is recorded: artifacts that cannot be made do not undo it.
        run_logger(orchestrator).error(
            "run %s: its artifacts could not be published: %s",
            summary.run_id,
            redact.text(str(exc)),
        )


class _CancelledIsNoError(logging.Filter):
    """Prefect logs a task run's end at ERROR unless it Completed; a shard cut off by the
    run's stop ends Cancelled (`cut_off`), which is what was asked for, not an error: INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.ERROR and record.getMessage().startswith(
            "Finished in state Cancelled("
        ):
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return True


def quiet_cancelled_task_runs() -> None:
    """A cancelled task run's last line at INFO (`_CancelledIsNoError`), once per process."""
    logger = logging.getLogger(PREFECT_RUN_LOGGERS[1])
    if not any(isinstance(f, _CancelledIsNoError) for f in logger.filters):
        logger.addFilter(_CancelledIsNoError())


class _NotFromRuns(logging.Filter):
    """Drops the records of Prefect's flow-run and task-run loggers."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(PREFECT_RUN_LOGGERS)


def quiet_prefect_run_logs_on_console() -> None:
    """Keep Prefect's flow-run and task-run lines off this process's terminal while they still
    reach the Prefect API (the Logs tab): a filter on the console handlers, where lowering
    those loggers' level would drop the lines for the API too."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.logging.handlers import APILogHandler

    # Prefect's handlers first (configured once per process), so that the filter lands on them.
    ensure_logging_setup()
    handlers = {
        handler
        for logger in (logging.getLogger(), *map(logging.getLogger, PREFECT_RUN_LOGGERS))
        for handler in logger.handlers
        if not isinstance(handler, APILogHandler)
    }
    for handler in handlers:
        if not any(isinstance(f, _NotFromRuns) for f in handler.filters):
            handler.addFilter(_NotFromRuns())
