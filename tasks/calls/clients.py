"""The one builder of a run's model clients: a model's gateway with its limits and budget, the
same in the run's own process, an answer worker and the judge's Ray actor.

In the run's own process a client's gate is its own (`admission.Gate`, holding the run's
budget). Anywhere else the run's authority holds every gate and the budget, and a client is
admitted through it (`remote_gate.RemoteGate`); a worker rebuilds its clients from their specs,
nothing of the driver's state crosses.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime

from roadeval.tasks.calls.admission import Admitting, Gate
from roadeval.tasks.calls.authority import AuthorityLink
from roadeval.tasks.calls.budget import Budget
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.remote_gate import RemoteGate, RemoteStats
from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.model_spec import ModelSpec


@dataclass
class ClientBuilder:
    """Makes the clients of one run in one process.

    `budget` is the run's, for the process that holds it; `link` reaches the run's authority from
    any other process, and `budgeted` says whether the run has a budget there."""

    run_id: str | None
    stop: StopSignal
    redact: Redactor | None = None
    budget: Budget | None = None
    link: AuthorityLink | None = None
    budgeted: bool = False
    # The time the clients' `reuse_for` is measured back from: the run's horizon.
    fresh_from: datetime | None = None
    _clients: dict[str, ModelClient] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.link is not None and self.budget is not None:
            raise ValueError("a run's budget is held by one process: a linked builder has none")
        if self.budget is not None:
            self.budgeted = self.budget.capped

    def shared(self, spec: ModelSpec) -> ModelClient:
        """The one client of the model in this process, made on first use (a worker's: every
        shard it answers for the model calls through it)."""
        with self._lock:
            client = self._clients.get(spec.label)
            if client is None:
                client = self.client(spec)
                self._clients[spec.label] = client
            return client

    def client(self, spec: ModelSpec) -> ModelClient:
        """A new client of the model in this run."""
        gate: Admitting
        if self.link is None:
            gate = Gate(spec, self.stop, self.budget)
        else:
            gate = RemoteGate(spec, self.link, self.budgeted)
        client = ModelClient(
            spec,
            stop=self.stop,
            redact=self.redact,
            run_id=self.run_id,
            budget=self.budget,
            gate=gate,
            fresh_from=self.fresh_from,
        )
        if self.link is not None:
            # The progress display is the driver's: counts go there.
            client.stats = RemoteStats(self.link, spec.label)
        return client
