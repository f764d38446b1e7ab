"""What a run hands back to its caller, and the exception a run that stopped early raises: kept
apart from the run's code so that the CLI can name them without importing it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roadeval.storage.records import RunStatus

if TYPE_CHECKING:
    from roadeval.storage.records import MetricPairRow, MetricRow
    from roadeval.tasks.calls.stopping import StopReason
    from roadeval.tasks.results.manifest import RunManifest
    from roadeval.tasks.shard.stages import ShardResult


@dataclass(frozen=True)
class BudgetState:
    """A capped run's money at its end: the cap, what was spent (unknown costs at their worst
    case), and the worst case of what was left unanswered (None when it could not be told)."""

    limit_usd: float
    spent_usd: float
    left_worst_usd: float | None = None


@dataclass
class RunSummary:
    """What a run hands back to the CLI: where it landed, what it measured, how it ended."""

    run_id: str
    store_uri: str
    manifest_key: str | None
    metrics: list[MetricRow]
    manifest: RunManifest
    results: list[ShardResult] = field(default_factory=list)
    status: str = RunStatus.FINISHED
    orchestrator: str = "inline"
    budget: BudgetState | None = None
    # A dry run's estimate rows (`tasks.results.estimate.EstimateRow`), as landed.
    estimates: list[Any] = field(default_factory=list)
    # Why the run's last record (its `runs` event and manifest) could not be written, if it
    # could not (the store that stopped the run refused it too): `runs` then reads it `died`.
    record_error: str | None = None
    # Requests of the run in flight (in any of its processes) when its stop was first requested:
    # none started after it. None when the run was not stopped.
    in_flight_at_stop: int | None = None
    # A finished run's report: where it is kept in the store and its address for a link, or
    # why it could not be built (the run is finished and landed either way).
    report: str | None = None
    report_url: str | None = None
    report_error: str | None = None
    # The paired differences of the headline metrics (`metric_pairs`), as landed.
    pairs: list[MetricPairRow] = field(default_factory=list)
    # What the run's alarms did (`run.alarms`): a line each, 'warning: ...' for one not taken.
    alarms: list[str] = field(default_factory=list)

    @property
    def n_errors(self) -> int:
        return sum(r.counts["errors"] for r in self.results)

    @property
    def n_scorer_errors(self) -> int:
        """Answered items whose suite's scorer raised (unscored, reason `scorer_error`)."""
        return sum(r.counts["scorer_errors"] for r in self.results)


class RunStopped(Exception):
    """The run ended before its end (interrupted, failed, out of budget) and was recorded so."""

    def __init__(self, summary: RunSummary, reason: StopReason) -> None:
        super().__init__(reason.message)
        self.summary = summary
        self.reason = reason
