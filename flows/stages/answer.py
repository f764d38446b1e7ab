"""The answer stage: a shard answered and scored, and how a run's shards go to answering: in
turn from each suite x model (so that a bounded pool keeps every model busy), in the run's own
process or spread over answer worker processes once the plans hold enough calls to models."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any, Protocol

from roadeval.flows.stages.orchestration import Stage
from roadeval.storage.store import Store
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.shard.answer_workers import AnswerWorkers, processes_for
from roadeval.tasks.shard.plan import Shard, ShardPlan
from roadeval.tasks.shard.remote_scoring import RemoteScoring
from roadeval.tasks.shard.stages import ShardResult, run_shard
from roadeval.tasks.shard.worker_server import server_warmed


class ShardRunner(Protocol):
    """Where a shard may be answered other than here: the run's answer worker processes, or
    the nodes of a Ray cluster."""

    def can_take(self, plan: ShardPlan, remote: RemoteScoring | None) -> bool: ...

    def run(self, plan: ShardPlan, store: Store, judge: ModelClient | None) -> ShardResult: ...


def answer_shard(
    plan: ShardPlan,
    store: Store,
    judge: ModelClient | None,
    remote: RemoteScoring | None,
    workers: ShardRunner | None = None,
) -> ShardResult:
    """Answer one shard: in an answer worker process or on a node of the answering cluster
    when the run has them and the shard can go (see `AnswerWorkers.can_take`; the stage waits
    for the workers' start), else here."""
    if workers is not None and workers.can_take(plan, remote):
        return workers.run(plan, store, judge)
    return run_shard(plan, store, judge, remote)


def cut_off(result: ShardResult) -> str | None:
    """Why a shard's answering was cut short by the run's stop: its items left for a resumed
    run (interrupted mid-request, or never asked); None when it ran whole."""
    left = result.counts["interrupted"] + result.counts["not_run"]
    if not left:
        return None
    return (
        f"the run stopped: {left} of {result.counts['items']} items of shard {result.shard} "
        "left unanswered (a resumed run asks them)"
    )


# Prefect's task name and task-run name (a template over the stage's parameters); a shard the
# run's stop cut short ends its task run Cancelled.
ANSWER_SHARD = Stage(
    "answer-shard",
    answer_shard,
    "answer/{plan.shard.suite.name}/{plan.shard.client.spec.label}/chunk {plan.shard.index}",
    cut_off,
)


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


def planning_waves(shards: Sequence[Shard]) -> list[list[int]]:
    """Indexes of the shards in the waves they are planned in, each in turn from each suite x
    model: those that may ask a model, then, once all of those are planned, a rerun's copies.
    A copy shard asks nothing and plans its many items for seconds; planned at the same time
    (threads sharing one interpreter), the copies kept the rerun's few calls waiting while the
    answer workers stood ready (10,000 items x 5 models: the first shard to ask was planned
    2.5 s after the planning began, 0.2 s once the copies waited)."""
    pairs = [(shard.suite.name, shard.client.spec.label) for shard in shards]
    order = round_robin(pairs)
    waves = [[n for n in order if not shards[n].copies], [n for n in order if shards[n].copies]]
    return [wave for wave in waves if wave]


def unanswered_first_attempts(plan: ShardPlan) -> int:
    """The requests a shard's plan will send at least: first attempts the store cannot answer."""
    return sum(1 for planned in plan.items if not planned.answered(0))


class AnswerSpread:
    """The run's answer worker processes, started once the plans so far say the run will send
    enough calls to models (the panel's `processes`, or by itself for a large run on several
    cores); built-in baselines, which answer in microseconds of their own, never count.

    The calls still to come are projected from the plans so far: the run's items not planned
    yet, at the share of planned ones the store could not answer. So a large fresh run spreads
    from its first plan, and a rerun the store answers never starts a worker. Workers start in
    the background (a process start waits for LiteLLM's import) while the shard whose plan
    called for them is answered here, so the first request waits for nobody; the next shards
    wait for the workers."""

    def __init__(
        self,
        configured: int | None,
        clients: Callable[[], Sequence[ModelClient]],
        stop: StopSignal,
        run_id: str,
        fresh_from: datetime,
        budgeted: bool,
        items: int,
    ) -> None:
        self.configured = configured
        self.clients = clients
        self.stop = stop
        self.run_id = run_id
        self.fresh_from = fresh_from
        self.budgeted = budgeted
        # The run's items to be asked of models (baselines and a rerun's copies not counted).
        self.items = items
        self.planned = 0
        self.requests = 0
        self.processes = 0  # worker processes that answered shards of the run
        self._starting: Future[AnswerWorkers] | None = None

    def projected_requests(self) -> int:
        """The first attempts the run will send, as far as its plans so far tell."""
        if self.planned == 0:
            return 0
        left = max(0, self.items - self.planned)
        return self.requests + round(left * self.requests / self.planned)

    def workers_for(self, plan: ShardPlan) -> StartingWorkers | None:
        """The workers to answer `plan` in (awaited by its answer stage); None: answer it
        here."""
        if self._starting is None:
            if not plan.shard.client.spec.is_baseline and not plan.shard.copies:
                self.planned += len(plan.items)
                self.requests += unanswered_first_attempts(plan)
            warmed = server_warmed()
            processes = processes_for(self.configured, self.projected_requests(), warmed)
            if processes == 0:
                return None
            self._start(processes)
            if self.configured is None and not warmed:
                # Answered here while the workers start (the panel's are awaited, and so are
                # those of a warmed server: they start in a moment, LiteLLM here takes seconds).
                return None
        assert self._starting is not None
        return StartingWorkers(self._starting, self)

    def _start(self, processes: int) -> None:
        clients = self.clients()
        gates: Mapping[str, Any] = {c.spec.label: c.gate for c in clients}
        stats: Mapping[str, Any] = {c.spec.label: c.stats for c in clients}
        args = (processes, gates, stats, self.stop, self.run_id, self.fresh_from, self.budgeted)
        starter = ThreadPoolExecutor(1, thread_name_prefix="roadeval-answer-start")
        self._starting = starter.submit(AnswerWorkers, *args)
        starter.shutdown(wait=False)

    def close(self) -> None:
        if self._starting is not None:
            with contextlib.suppress(Exception):  # a failed start was raised where it was used
                self._starting.result().close()


class StartingWorkers:
    """The run's answer workers as a shard's answer stage sees them: awaited there, when the
    shard goes to them, and not by the loop that hands out every shard (a rerun's copies would
    wait seconds, planned, for a process start they do not need)."""

    def __init__(self, starting: Future[AnswerWorkers], spread: AnswerSpread) -> None:
        self._starting = starting
        self._spread = spread

    def can_take(self, plan: ShardPlan, remote: RemoteScoring | None) -> bool:
        return AnswerWorkers.can_take(plan, remote)

    def run(self, plan: ShardPlan, store: Store, judge: ModelClient | None) -> ShardResult:
        # A failed start fails the shard here, and so the run, as any stage's failure does.
        workers = self._starting.result()
        self._spread.processes = workers.processes
        return workers.run(plan, store, judge)
