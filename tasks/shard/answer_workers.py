"""Answer workers: a run's calls spread over several processes when one core is the limit.

Each worker process answers whole shards (ask, score, land) on its own gateway loop, several at a
time. Its model clients are admitted and settled by the driver's authority
(`tasks.calls.authority`), so every model's limits and the run's budget stay exact over all
processes, and a stop in the driver reaches every worker. Workers are forked from a server that has
imported LiteLLM once, so a worker starts in well under a second; they ignore SIGINT and SIGTERM,
which the driver handles. The `roadeval` command starts that server as it starts a run
(`worker_server.warm_server`), so LiteLLM imports on a spare core while the driver loads, plans
and copies; its few calls (a rerun's) then go to a worker rather than wait for LiteLLM here.
"""

from __future__ import annotations

import contextlib
import copyreg
import io
import itertools
import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, ClassVar

from roadeval.environment import tune_collector_for_run
from roadeval.storage.part_cache import keep_written_parts
from roadeval.storage.store import Store
from roadeval.tasks.cache.journal import close_journals
from roadeval.tasks.calls.authority import (
    AuthorityAddress,
    AuthorityLink,
    AuthorityServer,
)
from roadeval.tasks.calls.clients import ClientBuilder
from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.model_spec import CallMode, ModelSpec
from roadeval.tasks.shard.plan import ShardPlan
from roadeval.tasks.shard.stages import ShardResult, run_shard
from roadeval.tasks.shard.worker_server import PRELOAD, start_server

if TYPE_CHECKING:
    from roadeval.tasks.shard.remote_scoring import RemoteScoring

# Shards a worker answers at once: enough to keep its loop busy while one shard lands.
SHARDS_PER_WORKER = 4


@dataclass(frozen=True)
class WorkerContext:
    """What a worker process needs to reach the run's authority."""

    authority: AuthorityAddress
    run_id: str
    # The run's horizon: when its `reuse_for` is measured back from.
    fresh_from: datetime
    budgeted: bool


class _Worker:
    """(In a worker process.) Its one link to the authority and one client per model."""

    clients: ClassVar[ClientBuilder | None] = None


def serve_clients(builder: ClientBuilder) -> None:
    """(In a process that answers the driver's shards: an answer worker, a cluster node's
    actor.) The clients the shards it is sent call through (`client_in_worker`)."""
    _Worker.clients = builder


def client_in_worker(spec: ModelSpec) -> ModelClient:
    """(In a worker process.) The model's client, whose gate is the authority's."""
    if _Worker.clients is None:
        raise RuntimeError("a model client was sent to a process that is not an answer worker")
    return _Worker.clients.shared(spec)


def reduce_client(client: ModelClient) -> tuple[Any, tuple[ModelSpec]]:
    return client_in_worker, (client.spec,)


class _ShardPickler(pickle.Pickler):
    """Pickles what the driver sends a worker: a model client goes as its spec, to become that
    worker's client of the same model (nothing of the driver's state crosses)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.dispatch_table = {**copyreg.dispatch_table, ModelClient: reduce_client}


def _dumps(message: Any) -> bytes:
    buffer = io.BytesIO()
    _ShardPickler(buffer).dump(message)
    return buffer.getvalue()


def _serve(conn: Connection, context: WorkerContext) -> None:
    """(The worker process's main.) Answer the shards the driver sends until it hangs up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    tune_collector_for_run()
    keep_written_parts(False)  # the driver reads what this process lands
    stop = StopSignal()
    link = AuthorityLink(context.authority, stop)
    serve_clients(
        ClientBuilder(
            context.run_id,
            stop,
            link=link,
            budgeted=context.budgeted,
            fresh_from=context.fresh_from,
        )
    )
    sending = threading.Lock()
    pool = ThreadPoolExecutor(SHARDS_PER_WORKER, thread_name_prefix="roadeval-worker")

    def answer(number: int, plan: ShardPlan, store: Store, judge: ModelClient | None) -> None:
        try:
            reply: tuple[int, bool, Any] = (number, True, run_shard(plan, store, judge))
        except BaseException as exc:  # the driver raises it where it waits for the shard
            reply = (number, False, exc)
        with sending:
            try:
                conn.send(reply)
            except Exception as exc:  # a result that cannot be pickled is still an answer
                conn.send((number, False, RuntimeError(f"shard result not sendable: {exc}")))

    try:
        while True:
            try:
                message = pickle.loads(conn.recv_bytes())
            except EOFError:
                break
            if message is None:
                break
            pool.submit(answer, *message)
    finally:
        pool.shutdown(wait=True)
        run_on_gateway(close_journals())
        run_on_gateway(link.close())


class AnswerWorkers:
    """The driver's side: starts the workers and the authority, sends shards, hands back their
    results; `close` when the run is done."""

    def __init__(
        self,
        processes: int,
        gates: Mapping[str, Any],
        stats: Mapping[str, Any],
        stop: StopSignal,
        run_id: str,
        fresh_from: datetime,
        budgeted: bool,
    ) -> None:
        self.stop = stop
        self._server = AuthorityServer(gates, stop, stats=stats)
        address = run_on_gateway(self._server.start())
        self.context = WorkerContext(address, run_id, fresh_from, budgeted)
        ctx = multiprocessing.get_context("forkserver")
        start_server(PRELOAD)
        self._numbers = itertools.count(1)
        # Shards sent and not yet answered: their future, and the worker answering them.
        self._waiting: dict[int, tuple[Future[ShardResult], int]] = {}
        self._load: list[int] = [0] * processes
        self._lock = threading.Lock()
        self._workers: list[tuple[Any, Connection, threading.Lock]] = []
        for index in range(processes):
            mine, theirs = ctx.Pipe()
            process = ctx.Process(
                target=_serve, args=(theirs, self.context), name=f"roadeval-answer-{index}"
            )
            process.daemon = True
            process.start()
            theirs.close()
            self._workers.append((process, mine, threading.Lock()))
            threading.Thread(
                target=self._receive, args=(index, mine), name=f"answers-{index}", daemon=True
            ).start()

    @property
    def processes(self) -> int:
        return len(self._workers)

    def submit(
        self, plan: ShardPlan, store: Store, judge: ModelClient | None
    ) -> Future[ShardResult]:
        """Answer the shard in the least busy worker."""
        future: Future[ShardResult] = Future()
        with self._lock:
            number = next(self._numbers)
            index = min(range(len(self._load)), key=self._load.__getitem__)
            self._load[index] += 1
            self._waiting[number] = (future, index)
        _process, conn, sending = self._workers[index]
        with sending:
            conn.send_bytes(_dumps((number, plan, store, judge)))
        return future

    def run(self, plan: ShardPlan, store: Store, judge: ModelClient | None) -> ShardResult:
        return self.submit(plan, store, judge).result()

    @staticmethod
    def can_take(plan: ShardPlan, remote: RemoteScoring | None) -> bool:
        """Whether a worker may answer the shard: not a batch model's (its batches are the
        driver's), not one whose scoring goes to the scoring cluster (the driver holds it), not
        one with nothing to ask."""
        shard = plan.shard
        if shard.client.spec.mode is CallMode.BATCH or not plan.asks:
            # Nothing to ask (every outcome is the baseline's): copying is the driver's work.
            return False
        return remote is None or not any(shard.suite.heavy_scoring(p.item) for p in plan.items)

    def _receive(self, index: int, conn: Connection) -> None:
        while True:
            try:
                number, ok, value = conn.recv()
            except (EOFError, OSError):
                break
            with self._lock:
                future, _worker = self._waiting.pop(number, (None, index))
                self._load[index] -= 1
            if future is None:
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)
        lost = RuntimeError(f"answer worker {index} ended (pid gone) with shards unanswered")
        with self._lock:
            orphans = [n for n, (_f, worker) in self._waiting.items() if worker == index]
            for number in orphans:
                self._waiting.pop(number)[0].set_exception(lost)

    def close(self) -> None:
        for _process, conn, sending in self._workers:
            with sending, contextlib.suppress(OSError):
                conn.send_bytes(_dumps(None))
        for process, conn, _sending in self._workers:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
            conn.close()
        run_on_gateway(self._server.close())


# A run spreads its calls by itself from this many requests to send: below it, starting the
# workers (a LiteLLM import, once, waited for) costs more than one core loses.
SPREAD_FROM = 5000
# ... and from this many when their server was started ahead (`warmed`): another worker is one
# more fork of it, and two answer at the pace of two cores for the same CPU (2,000 calls to a
# server answering in 200 ms at C=128: 24-27 s in one worker, 15-17 s in two).
SPREAD_WARMED_FROM = 200


def processes_for(configured: int | None, requests: int, warmed: bool = False) -> int:
    """Answer worker processes for a run with `requests` to send: the panel's number (0 or 1:
    none), else one per core when there are cores to spare and enough requests to spread (far
    fewer when the workers' server was `warmed`, `worker_server.server_warmed`: each worker is
    then only a fork of it); else one for any request from a warmed server."""
    if configured is not None:
        return configured if configured >= 2 else 0
    cores = os.cpu_count() or 1
    if cores < 2:
        return 0
    if requests >= (SPREAD_WARMED_FROM if warmed else SPREAD_FROM):
        return cores
    return 1 if warmed and requests > 0 else 0
