"""The named parts a run is made of, so that its code and its manifest take a few of them rather
than a long list of fields: where and how it runs, what it evaluates, what it calls with."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from roadeval.flows.orchestration import Orchestrator
from roadeval.flows.panel_file import Panel
from roadeval.flows.suites import LoadedSuite
from roadeval.storage.store import Store

if TYPE_CHECKING:
    from roadeval.tasks.calls.budget import Budget
    from roadeval.tasks.calls.gateway import ModelClient
    from roadeval.tasks.calls.secrets import Redactor
    from roadeval.tasks.calls.stopping import StopSignal
    from roadeval.tasks.render.stage import Renders
    from roadeval.tasks.shard.plan import Shard
    from roadeval.tasks.shard.remote_scoring import RemoteScoring


@dataclass(frozen=True)
class RunContext:
    """Which run this is, of which panel, started when, landing where, run by whom."""

    run_id: str
    started: datetime
    panel: Panel
    store: Store
    orchestrator: Orchestrator
    dry_run: bool


@dataclass(frozen=True)
class RunInputs:
    """What the run evaluates: its suites as loaded, their renders, and the shards made of them
    (with the suite x model pairs no shard covers)."""

    loaded: list[LoadedSuite]
    renders: dict[str, Renders]
    shards: list[Shard]
    not_covered: list[dict[str, Any]]


@dataclass(frozen=True)
class RunEngines:
    """What the run calls with: its stop, redaction, budget, judge and scoring cluster."""

    stop: StopSignal
    redact: Redactor
    budget: Budget
    judge: ModelClient | None
    remote: RemoteScoring | None
