"""The run's side of answering on a Ray cluster: one actor per node with CPUs
(`answer_node.AnswerNode`), every one checked before the first call, shards sent to the least
busy node, and a shard whose node died sent to another.

Every call on every node is admitted and settled by the run's authority (`calls.authority`),
served here at an address the nodes reach: each model's rpm, tpm and concurrency, the run's
budget, and the verdicts that a model's key is refused or its endpoint gone hold over every
node, and a stop reaches them all. A node killed mid-shard loses only what was in flight: the
answers it kept are in the store's journal, where the node that answers the shard again (or a
resumed run) finds them and pays nothing for them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from roadeval.storage.store import Store
from roadeval.tasks.calls.admission import Gate
from roadeval.tasks.calls.authority import AuthorityServer
from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
from roadeval.tasks.calls.stats import CallStats
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.answer_node import AnswerNode, NodeContext, shard_message
from roadeval.tasks.shard.answer_workers import AnswerWorkers
from roadeval.tasks.shard.answering_config import ANSWERING_SETTING, AnsweringConfig
from roadeval.tasks.shard.judge_service import store_environment
from roadeval.tasks.shard.plan import ShardPlan
from roadeval.tasks.shard.remote_scoring import OBJECT_STORE_BYTES, RemoteScoring
from roadeval.tasks.shard.stages import ShardResult

_log = logging.getLogger(__name__)

# How long the nodes may take to start their actors and pass the check.
START_TIMEOUT_S = 120.0


class ClusterRefused(ValueError):
    """The cluster cannot answer the run (unreachable, no node with CPUs, a node that cannot
    reach the store or the authority): said before the first call; the message names what
    was tried."""


@dataclass
class NodeUse:
    """One node's actor and what it answered."""

    name: str
    actor: Any
    alive: bool = True
    busy: int = 0
    shards: int = 0
    calls: int = 0


class ClusterAnswering:
    """Answers shards on the nodes of a Ray cluster; `start` before the run's first call,
    `close` when it is done."""

    def __init__(
        self,
        config: AnsweringConfig,
        store: Store,
        run_id: str,
        stop: StopSignal,
        fresh_from: datetime,
        budgeted: bool,
    ) -> None:
        self.config = config
        self.store = store
        self.run_id = run_id
        self.stop = stop
        self.fresh_from = fresh_from
        self.budgeted = budgeted
        self.nodes: list[NodeUse] = []
        self._authority: AuthorityServer | None = None
        self._started_ray = False
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        if self.config.address is None:
            return "a local Ray (answering.engine: ray)"
        return f"Ray cluster {self.config.address} ({ANSWERING_SETTING})"

    def start(self, clients: Sequence[ModelClient]) -> None:
        """Join the cluster, serve the run's authority to it, start an actor on every node
        with CPUs and check that each reaches the store and the authority; ClusterRefused
        otherwise. In a thread of its own: Ray joined from the main thread would take over the
        run's SIGTERM handling."""
        with ThreadPoolExecutor(1, thread_name_prefix="roadeval-cluster-start") as starter:
            starter.submit(self._start, list(clients)).result()

    def _start(self, clients: list[ModelClient]) -> None:
        ray = self._join()
        gates = {c.spec.label: c.gate for c in clients if isinstance(c.gate, Gate)}
        stats: Mapping[str, CallStats] = {c.spec.label: c.stats for c in clients}
        host = "127.0.0.1" if self.config.address is None else ray.util.get_node_ip_address()
        self._authority = AuthorityServer(gates, self.stop, host, stats=stats)
        address = run_on_gateway(self._authority.start())
        context = NodeContext(
            address,
            self.store.uri,
            {**store_environment(self.store), **_keys([c.spec for c in clients]), **_settings()},
            tuple(c.spec.api_key_env for c in clients if c.spec.api_key_env),
            self.run_id,
            self.fresh_from,
            self.budgeted,
        )
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n for n in ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) > 0]
        if not nodes:
            raise ClusterRefused(f"{self.where}: no node has a CPU to answer on")
        actor = ray.remote(AnswerNode)
        actors = [
            actor.options(
                num_cpus=0,
                max_concurrency=self.config.shards_per_node + 2,
                max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
            ).remote(context)
            for n in nodes
        ]
        probes = [a.probe.remote() for a in actors]
        _ready, waiting = ray.wait(probes, num_returns=len(probes), timeout=START_TIMEOUT_S)
        problems: list[str] = []
        for node, probe in zip(nodes, probes, strict=True):
            tried = f"node {node['NodeManagerAddress']}/{node['NodeID'][:8]}"
            if probe in waiting:
                problems.append(f"{tried}: its actor did not start in {START_TIMEOUT_S:g} s")
                continue
            try:
                ray.get(probe)
            except Exception as exc:
                problems.append(_cause(exc) or tried)
        if problems:
            raise ClusterRefused(f"{self.where}: " + "; ".join(problems))
        self.nodes = [NodeUse(ray.get(probe), a) for probe, a in zip(probes, actors, strict=True)]

    def _join(self) -> Any:
        import ray

        if ray.is_initialized():
            return ray
        common: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
        try:
            if self.config.address is not None:
                ray.init(address=self.config.address, **common)
            else:
                # A Ray of the run's own, never one found on the machine (see RemoteScoring).
                ray.init(
                    address="local",
                    num_cpus=os.cpu_count(),
                    include_dashboard=False,
                    object_store_memory=OBJECT_STORE_BYTES,
                    _node_ip_address="127.0.0.1",
                    **common,
                )
        except (ConnectionError, RuntimeError, TimeoutError, ValueError) as exc:
            raise ClusterRefused(f"{self.where}: cannot connect: {exc}") from None
        self._started_ray = True
        return ray

    @staticmethod
    def can_take(plan: ShardPlan, remote: RemoteScoring | None) -> bool:
        """Whether a node may answer the shard: as for an answer worker process."""
        return AnswerWorkers.can_take(plan, remote)

    def run(self, plan: ShardPlan, store: Store, judge: ModelClient | None) -> ShardResult:
        return self.submit(plan, store, judge).result()

    def submit(
        self, plan: ShardPlan, store: Store, judge: ModelClient | None
    ) -> Future[ShardResult]:
        """Answer the shard on the least busy node; on another one if that node dies."""
        future: Future[ShardResult] = Future()
        self._send(future, shard_message((plan, store, judge)), plan.shard.name)
        return future

    def _send(self, future: Future[ShardResult], message: bytes, name: str) -> None:
        with self._lock:
            alive = [node for node in self.nodes if node.alive]
            if not alive:
                lost = ", ".join(node.name for node in self.nodes)
                future.set_exception(
                    RuntimeError(
                        f"{self.where}: every node answering the run was lost ({lost}); shard "
                        f"{name} unanswered: the same command resumes the run"
                    )
                )
                return
            node = min(alive, key=lambda n: n.busy)
            node.busy += 1
        ref = node.actor.answer.remote(message)
        ref.future().add_done_callback(lambda done: self._ended(done, node, future, message, name))

    def _ended(
        self,
        done: Future[Any],
        node: NodeUse,
        future: Future[ShardResult],
        message: bytes,
        name: str,
    ) -> None:
        import ray.exceptions as rex

        with self._lock:
            node.busy -= 1
        try:
            result: ShardResult = done.result()
        except (rex.RayActorError, rex.WorkerCrashedError, rex.ObjectLostError) as exc:
            # The node (or its actor) died: what it had in flight is lost, what it kept is in
            # the store, and the shard goes to another node, which reuses that.
            with self._lock:
                node.alive = False
            _log.warning("node %s was lost (%s): shard %s goes to another", node.name, exc, name)
            if self.stop.requested:
                future.set_exception(RuntimeError(f"node {node.name} was lost: {exc}"))
            else:
                self._send(future, message, name)
            return
        except rex.RayTaskError as exc:
            future.set_exception(exc.as_instanceof_cause())
            return
        except BaseException as exc:
            future.set_exception(exc)
            return
        with self._lock:
            node.shards += 1
            node.calls += result.counts["requests"]
        future.set_result(result)

    def calls_per_node(self) -> dict[str, int]:
        """Calls ended on each node so far, as the authority heard them (the live display)."""
        if self._authority is None:
            return {}
        return dict(self._authority.node_calls)

    def close(self) -> None:
        """Each live node's journal writes its index, the authority closes, and Ray is left
        (a cluster stays up; a local Ray this run started shuts down)."""
        if self.nodes:
            import ray

            closing = [node.actor.close.remote() for node in self.nodes if node.alive]
            try:
                ray.get(closing, timeout=30)
            except Exception as exc:  # their packs are still read, one by one
                _log.warning("a node's journal could not be closed: %s", exc)
            for node in self.nodes:
                with contextlib.suppress(Exception):  # a lost node's actor is gone already
                    ray.kill(node.actor)
        if self._authority is not None:
            self._authority.close_from_any_thread()
            self._authority = None
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False


def _keys(specs: Sequence[ModelSpec]) -> dict[str, str]:
    """The models' keys, by their variables: a node has none of the run's environment."""
    return {
        spec.api_key_env: value
        for spec in specs
        if spec.api_key_env and (value := os.environ.get(spec.api_key_env))
    }


# The run's own settings a node's calls must keep as the run does (its claims' lease, the grace
# of a stop).
RUN_SETTINGS = ("ROADEVAL_CLAIM_TTL_S", "ROADEVAL_STOP_GRACE_S")


def _settings() -> dict[str, str]:
    return {name: value for name in RUN_SETTINGS if (value := os.environ.get(name))}


def _cause(exc: BaseException) -> str:
    """What a node's actor raised, without Ray's wrapping."""
    cause = getattr(exc, "cause", None)
    return str(cause) if cause is not None else str(exc).strip().splitlines()[-1]
