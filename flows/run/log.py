"""A run's own log lines: which run it is and where it lands, each shard's counts as it lands,
why it stopped, and its summary.

Under a Prefect flow run they go through Prefect's run logger, which the run's orchestrator gives
(`flows.prefect.flow`), so that the flow run's Logs tab in the Prefect UI tells the run's story;
otherwise to the `roadeval.run` logger, which prints nothing unless configured (the CLI prints its
own report). Prefect is never imported here.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from roadeval.flows.stages.orchestration import Logger

if TYPE_CHECKING:
    from roadeval.flows.run.parts import RunContext, RunInputs
    from roadeval.flows.run.summary import RunSummary
    from roadeval.flows.stages.orchestration import Orchestrator
    from roadeval.tasks.results.manifest import Totals
    from roadeval.tasks.shard.stages import ShardResult

LOGGER = "roadeval.run"

# Unconfigured, Python would print its warnings on stderr, next to the CLI's own report of them.
logging.getLogger(LOGGER).addHandler(logging.NullHandler())


def run_logger(orchestrator: Orchestrator | None = None) -> Logger:
    """The logger of a run's own lines: its orchestrator's when it has one (Prefect's logger of
    the flow run), else `roadeval.run`."""
    own = orchestrator.run_logger() if orchestrator is not None else None
    return own if own is not None else logging.getLogger(LOGGER)


def _usd(value: float) -> str:
    return f"${value:,.4f}"


def _counts(counts: Any) -> str:
    """The counts a reader of the log looks at first, from a ShardResult's or the totals'."""

    def get(name: str) -> int:
        return int(counts[name] if isinstance(counts, dict) else getattr(counts, name))

    return (
        f"{get('items')} items, {get('scored')} scored, {get('calls')} calls, "
        f"{get('cached')} cached, {get('errors')} errors, {get('abnormal')} abnormal, "
        f"{get('unparsed')} unparsed"
    )


class RunLog:
    """The lines of one run, sent to the logger chosen when the run starts (in the flow's
    thread, so that lines logged from other threads still belong to its flow run)."""

    def __init__(self, logger: Logger | None = None) -> None:
        self.logger = logger if logger is not None else run_logger()

    def started(self, context: RunContext, inputs: RunInputs) -> None:
        baseline = inputs.baseline
        self.logger.info(
            "run %s of panel %s: store %s, %d shards of %d suites, %s",
            context.run_id,
            context.panel.name,
            context.store.uri,
            len(inputs.shards),
            len(inputs.loaded),
            f"compared with run {baseline.run_id}" if baseline else "no baseline run",
        )

    def shard_landed(self, result: ShardResult) -> None:
        from roadeval.tasks.results.manifest import shown_as

        self.logger.info(
            "shard %s landed (%s x %s): %s, %s",
            result.shard,
            result.suite,
            shown_as(result.model, result.variant),
            _counts(result.counts),
            _usd(result.cost_usd),
        )

    def stopped(self, run_id: str, status: str, message: str, totals: Totals) -> None:
        from roadeval.storage.records import RunStatus

        # Interrupted is what someone asked for (Ctrl-C, a cancel): told, not warned about.
        level = logging.INFO if status == RunStatus.INTERRUPTED else logging.WARNING
        self.logger.log(
            level,
            "run %s stopped, recorded %s: %s; %s, %d left",
            run_id,
            status,
            message,
            _counts(totals),
            totals.left,
        )

    def compaction_failed(self, error: str) -> None:
        self.logger.warning("the run's parts were not compacted (its rows are landed): %s", error)

    def finished(self, summary: RunSummary) -> None:
        totals = summary.manifest.totals
        where = f"{summary.store_uri.rstrip('/')}/{summary.manifest_key}"
        self.logger.info(
            "run %s %s: %s, %s; manifest %s",
            summary.run_id,
            summary.status,
            _counts(totals),
            _usd(totals.cost_usd),
            where,
        )
