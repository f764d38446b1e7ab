"""How a run's shards go to answering: in turn from each suite x model (so that a bounded pool
keeps every model busy), in the run's own process or spread over answer worker processes once
the plans hold enough calls to models."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from roadeval.tasks.answer_workers import AnswerWorkers, processes_for
from roadeval.tasks.gateway import ModelClient
from roadeval.tasks.plan import ShardPlan
from roadeval.tasks.stopping import StopSignal


def round_robin(pairs: Sequence[tuple[str, str]]) -> list[int]:
    """Indexes of the shards (by their suite x model) taken in turn from each pair (its first
    shard, then every pair's second, ...)."""
    taken: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], int] = {}
    keys = []
    for n, pair in enumerate(pairs):
        first.setdefault(pair, n)
        keys.append((taken.get(pair, 0), first[pair], n))
        taken[pair] = taken.get(pair, 0) + 1
    return [n for _rank, _first, n in sorted(keys)]


def unanswered_first_attempts(plan: ShardPlan) -> int:
    """The requests a shard's plan will send at least: first attempts the store cannot answer."""
    return sum(1 for planned in plan.items if planned.stored[0] is None)


class AnswerSpread:
    """The run's answer worker processes, started once the plans so far hold enough calls to
    models (the panel's `processes`, or by itself for a large run on several cores); built-in
    baselines, which answer in microseconds of their own, never count."""

    def __init__(
        self,
        configured: int | None,
        clients: Callable[[], Sequence[ModelClient]],
        stop: StopSignal,
        run_id: str,
        budgeted: bool,
    ) -> None:
        self.configured = configured
        self.clients = clients
        self.stop = stop
        self.run_id = run_id
        self.budgeted = budgeted
        self.requests = 0
        self.processes = 0
        self.workers: AnswerWorkers | None = None

    def workers_for(self, plan: ShardPlan) -> AnswerWorkers | None:
        """The workers to answer `plan` in, started now if it brings the run to the threshold;
        None: answer it here."""
        if self.workers is not None:
            return self.workers
        if not plan.shard.client.spec.is_baseline:
            self.requests += unanswered_first_attempts(plan)
        processes = processes_for(self.configured, self.requests)
        if processes == 0:
            return None
        clients = self.clients()
        gates: Mapping[str, Any] = {c.spec.label: c.gate for c in clients}
        stats: Mapping[str, Any] = {c.spec.label: c.stats for c in clients}
        self.workers = AnswerWorkers(processes, gates, stats, self.stop, self.run_id, self.budgeted)
        self.processes = processes
        return self.workers

    def close(self) -> None:
        if self.workers is not None:
            self.workers.close()
