"""The named parts a run is made of, so that its code and its manifest take a few of them rather
than a long list of fields: where and how it runs, what it evaluates, what it calls with."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from roadeval.flows.panel.file import Panel
from roadeval.flows.stages.load import LoadedSuite
from roadeval.flows.stages.orchestration import Orchestrator
from roadeval.storage.store import Store
from roadeval.tasks.results.manifest import HorizonRecord

if TYPE_CHECKING:
    from roadeval.flows.rerun.baseline import BaselineReader, BaselineRun
    from roadeval.storage.records import ChangeRow
    from roadeval.tasks.calls.budget import Budget
    from roadeval.tasks.calls.gateway import ModelClient
    from roadeval.tasks.calls.secrets import Redactor
    from roadeval.tasks.calls.stopping import InFlightAtStop, StopSignal
    from roadeval.tasks.render.stage import Renders
    from roadeval.tasks.shard.answer_cluster import ClusterAnswering
    from roadeval.tasks.shard.plan import Shard
    from roadeval.tasks.shard.remote_scoring import RemoteScoring
    from roadeval.tasks.shard.scoring_choice import ScoringChoice


@dataclass(frozen=True)
class RunContext:
    """Which run this is, of which panel, started when, landing where, run by whom."""

    run_id: str
    started: datetime
    panel: Panel
    store: Store
    orchestrator: Orchestrator
    dry_run: bool
    # A rescore: no model is asked, every answer is the store's (see `flows.run.rescore`).
    rescore: bool = False
    # The run ends by building its report (`flows.run.report`) if it finishes.
    reports: bool = False
    # Whose start `reuse_for` is measured from (None: the run's own; `flows.rerun.continuation`).
    horizon: HorizonRecord | None = None

    @property
    def fresh_from(self) -> datetime:
        """The time every `reuse_for` of the run is measured back from."""
        return self.horizon.started_at if self.horizon is not None else self.started


@dataclass(frozen=True)
class RunInputs:
    """What the run evaluates: its suites as loaded, their renders, and the shards made of them
    (with the suite x model pairs no shard covers)."""

    loaded: list[LoadedSuite]
    renders: dict[str, Renders]
    shards: list[Shard]
    not_covered: list[dict[str, Any]]
    # The run compared with (None: none), what its plans may take from it, and each suite's
    # item changes against it (landed before the first call).
    baseline: BaselineRun | None = None
    reader: BaselineReader | None = None
    changes: dict[str, list[ChangeRow]] = field(default_factory=dict)
    # Per suite, the blind renders of its items that show an image (the `blind` ablation).
    blind: dict[str, Renders] = field(default_factory=dict)

    def renders_for(self, shard: Shard) -> Renders:
        """The images a shard's items are shown: blacked out for a blind shard."""
        of_variant = self.blind if shard.variant else self.renders
        return of_variant[shard.suite.name]


@dataclass(frozen=True)
class RunEngines:
    """What the run calls with: its stop, redaction, budget, judge, scoring and answering
    clusters, and how many of its requests were in flight when it stopped."""

    stop: StopSignal
    redact: Redactor
    budget: Budget
    judge: ModelClient | None
    remote: RemoteScoring | None
    in_flight: InFlightAtStop
    # Which engine scores the heavy items, and why.
    scoring: ScoringChoice
    # The Ray cluster answering the shards (None: this machine).
    answering: ClusterAnswering | None = None
