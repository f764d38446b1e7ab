"""The scoring cluster: heavy scoring (CPU-bound metrics, judge calls) on Ray, in batches.

Ray starts only when a run sends it work, locally by default or on an existing cluster by
address. Items go in batches, so a Ray task carries many of them. Judge calls made by Ray
workers all go through one actor per judge model, which holds that model's gateway: its limits,
cache, claims and retries have one authority however many workers judge.

Workers may be other machines: a batch carries everything its scorers read (the items, their
answers and, for a judged suite, the images the model was shown, bytes and all), and the judge
actor opens the store itself (see `judge_service`), on the run's own node when the store is a
folder there.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import JudgeReply, JudgeRequest
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ItemScore, ParsedAnswer, Suite, shipped_images
from roadeval.bounds import Bound
from roadeval.storage.store import LocalStore, Store, StoreError
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.request import ModelCall

if TYPE_CHECKING:
    from roadeval.tasks.calls.authority import AuthorityServer
    from roadeval.tasks.calls.gateway import ModelClient

_log = logging.getLogger(__name__)

# Ray's own object store, kept small: batches are items and scores (and a judged item's few
# images), and the store spills to disk past it.
OBJECT_STORE_BYTES = 256 * 2**20


# The ranges of `scoring:`'s numbers (`roadeval.bounds`).
NUM_CPUS = Bound(
    1, 256, "local Ray's CPUs: past 256 its workers outnumber the machine's cores, costing memory"
)
SCORING_BATCH = Bound(
    1,
    100_000,
    "items per Ray task: a task of more carries more than a suite, all in one worker's memory",
)


class ScoringEngine(StrEnum):
    AUTO = "auto"  # Ray when the work pays for it (`scoring_choice`), else the run's process
    RAY = "ray"  # heavy scoring on Ray (local, or the cluster at `address`)
    LOCAL = "local"  # everything in the run's own process (no Ray)


RAY_CLIENT_SCHEME = "ray://"


def ray_address_problem(address: str) -> str | None:
    """Why `address` names no Ray cluster (`host:port` of its head, `ray://host:port` for Ray
    Client), or None."""
    host, _, port = address.removeprefix(RAY_CLIENT_SCHEME).rpartition(":")
    if "://" in host or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return (
            f"Ray cluster address {address!r}: give its head's host:port (e.g. 10.0.0.5:6379) "
            "or ray://host:port"
        )
    return None


def _a_ray_cluster(value: str) -> str:
    if (problem := ray_address_problem(value)) is not None:
        raise ValueError(problem)
    return value


# A Ray cluster's address in the panel (`scoring.address`, `answering.address`).
RayAddress = Annotated[str, AfterValidator(_a_ray_cluster)]


class ScoringConfig(BaseModel):
    """Where heavy scoring runs (the panel's `scoring:`, `--ray-address` on the command line)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: ScoringEngine = ScoringEngine.AUTO
    address: RayAddress | None = Field(
        default=None, description="an existing Ray cluster: host:port (its GCS), or ray://host:port"
    )
    num_cpus: Annotated[int, AfterValidator(NUM_CPUS)] | None = Field(
        default=None, description="local Ray's CPUs (all)"
    )
    batch_size: Annotated[int, AfterValidator(SCORING_BATCH)] = Field(
        default=64, description="items per Ray task"
    )


class ScoringClusterError(ValueError):
    """The Ray cluster given by address cannot be used; the message names it."""


@dataclass(frozen=True)
class ScoreInput:
    """One answered item, as the scorer needs it; `images`, for a judged suite on the scoring
    cluster: the images the model was shown, their bytes carried (`Suite.images_shown`)."""

    item: Item
    parsed: ParsedAnswer
    output: ModelOutput
    images: tuple[ImageRef, ...] | None = None


# The reason of an item whose scorer raised (`ScorerError.reason`): the scores row's
# `unscored_reason` starts with it.
SCORER_ERROR = "scorer_error"
# An exception's message is kept to this many characters (a scorer may raise with a whole array).
MAX_ERROR_MESSAGE = 500


@dataclass(frozen=True)
class ScorerError:
    """A suite's scorer that raised on one item: the exception's type and message, never its
    traceback (which goes to the run's log). The item is unscored, never a 0."""

    kind: str
    message: str

    @classmethod
    def of(cls, exc: BaseException) -> ScorerError:
        message = str(exc)
        if len(message) > MAX_ERROR_MESSAGE:
            message = message[:MAX_ERROR_MESSAGE] + "..."
        return cls(type(exc).__name__, message)

    @property
    def reason(self) -> str:
        """`scorer_error: <type>: <message>`, the score row's `unscored_reason`."""
        reason = f"{SCORER_ERROR}: {self.kind}"
        return f"{reason}: {self.message}" if self.message else reason


def scorer_failed(exc: Exception) -> tuple[ScorerError, str]:
    """What is kept of a scorer's exception: its error, and its traceback's text for the log.
    A store that fails under a judge call is no scorer's error: it stops the run (re-raised)."""
    if isinstance(exc, StoreError):
        raise exc
    return ScorerError.of(exc), "".join(traceback.format_exception(exc))


@dataclass(frozen=True)
class ScoreOutput:
    """An item's score, or (its scorer raised) its error and traceback; the judge calls made
    either way, to land with the item."""

    score: ItemScore | None
    judge_calls: tuple[ModelCall, ...] = ()
    error: ScorerError | None = None
    traceback: str = ""


class _RemoteJudge:
    """The judge as a scorer on a Ray worker sees it: a call to the run's judge actor."""

    def __init__(self, actor: Any, item: Item) -> None:
        self.actor = actor
        self.item = item
        self.calls: list[ModelCall] = []

    async def __call__(self, request: JudgeRequest) -> JudgeReply:
        reply, calls = await self.actor.judge.remote(request, self.item)
        self.calls.extend(calls)
        return reply


def score_batch(suite: Suite, batch: Sequence[ScoreInput], judge: Any) -> list[ScoreOutput]:
    """(On a Ray worker.) Score a batch of items, judged ones through the judge actor. A scorer
    that raises on an item is caught for that item alone (its error goes back with the batch,
    redacted and logged by the run): the rest of the batch is scored."""

    async def one(entry: ScoreInput) -> ScoreOutput:
        remote = _RemoteJudge(judge, entry.item) if judge is not None else None
        try:
            score = await suite.score_item(entry.item, entry.parsed, entry.output, remote)
        except Exception as exc:
            error, trace = scorer_failed(exc)
            calls = tuple(remote.calls) if remote is not None else ()
            return ScoreOutput(None, calls, error, trace)
        return ScoreOutput(score, tuple(remote.calls) if remote is not None else ())

    async def every() -> list[ScoreOutput]:
        # One thread for CPU-bound scorers: a Ray task holds one CPU, and the cluster scales
        # by its workers; judge calls still overlap, being awaits, not threads.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
        return list(await asyncio.gather(*(one(entry) for entry in batch)))

    shipped = {e.item.item_id: e.images for e in batch if e.images is not None}
    with shipped_images(shipped):
        return asyncio.run(every())


class RemoteScoring:
    """The run's side of the scoring cluster: starts Ray on first use, sends batches, and
    shuts down what it started."""

    def __init__(
        self,
        config: ScoringConfig,
        store: Store,
        run_id: str,
        stop: StopSignal,
        judge: ModelClient | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.run_id = run_id
        self.stop = stop
        self.judge_client = judge
        self.judge_spec = judge.spec if judge is not None else None
        self._authority: AuthorityServer | None = None
        self._making_actor: asyncio.Lock | None = None
        # Whether this run connected to Ray (to shut it down), and started it itself (local).
        self._started_ray = False
        self._own_ray = False
        self._judge: Any = None
        self._score_batch: Any = None
        # Items sent to the cluster to be scored (the manifest's `engines.scoring`).
        self.on_cluster = 0
        # Shards score in threads of their own; the first to need Ray starts it, once.
        self._lock = threading.Lock()

    def _ray(self) -> Any:
        import ray

        with self._lock:
            if not ray.is_initialized():
                # Started from a shard's thread, never the main one: there Ray would replace
                # the run's own SIGTERM handling with its own.
                common: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
                if self.config.address:
                    self._connect(ray, common)
                else:
                    # "local": a Ray of the run's own, never one found on the machine (an
                    # address file a crashed `ray start` left, RAY_ADDRESS), which refuses a
                    # local Ray's resource arguments and fails the run.
                    ray.init(
                        address="local",
                        num_cpus=self.config.num_cpus or os.cpu_count(),
                        include_dashboard=False,
                        object_store_memory=OBJECT_STORE_BYTES,
                        _node_ip_address="127.0.0.1",
                        **common,
                    )
                    self._own_ray = True
                self._started_ray = True
            if self._score_batch is None:
                self._score_batch = ray.remote(score_batch)
        return ray

    def _connect(self, ray: Any, common: dict[str, Any]) -> None:
        address = self.config.address
        try:
            ray.init(address=address, **common)
        except (ConnectionError, RuntimeError, TimeoutError, ValueError) as exc:
            raise ScoringClusterError(
                f"Ray cluster {address} (scoring.address, --ray-address): cannot connect: {exc}"
            ) from None

    async def _judge_actor(self, ray: Any) -> Any:
        # On the gateway loop, like every shard's scoring: the one place the actor is made.
        if self._making_actor is None:
            self._making_actor = asyncio.Lock()
        async with self._making_actor:
            if self._judge is None and self.judge_client is not None:
                self._judge = await self._new_judge_actor(ray, self.judge_client)
        return self._judge

    async def _new_judge_actor(self, ray: Any, client: ModelClient) -> Any:
        from roadeval.tasks.calls.admission import Gate
        from roadeval.tasks.calls.authority import AuthorityServer

        spec = client.spec
        key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
        authority = None
        budgeted = False
        if isinstance(client.gate, Gate):
            # Machines of a cluster reach the driver at its node address; a local Ray, here.
            host = "127.0.0.1" if self._own_ray else ray.util.get_node_ip_address()
            self._authority = AuthorityServer(
                {spec.label: client.gate}, self.stop, host, stats={spec.label: client.stats}
            )
            authority = await self._authority.start()
            budgeted = client.gate.budget is not None
        from roadeval.tasks.shard.judge_service import JudgeService, store_environment

        # Async methods: the actor serves every worker's judge calls concurrently. It holds no
        # CPU: it waits on the judge, and a cluster's head may have none to give.
        options: dict[str, Any] = {"max_concurrency": 1000, "num_cpus": 0}
        if isinstance(self.store, LocalStore):
            # A folder is on the run's machine only: so is the actor that writes the cache.
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            node = ray.get_runtime_context().get_node_id()
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=False)
        actor = ray.remote(JudgeService).options(**options)
        store_env = store_environment(self.store)
        # The judge's `reuse_for` measured from the run's horizon, as in the run's process.
        return actor.remote(
            spec,
            self.store.uri,
            store_env,
            self.run_id,
            key,
            authority,
            budgeted,
            client.fresh_from,
        )

    async def score(
        self, suite: Suite, entries: Sequence[ScoreInput], judged: bool
    ) -> list[ScoreOutput]:
        """Scores for `entries`, in order, computed on the cluster in batches."""
        ray = self._ray()
        judge = await self._judge_actor(ray) if judged else None
        if judged:
            # The judge sees what the model saw: those images go with the items, as bytes.
            entries = await asyncio.to_thread(_with_images, suite, entries)
        self.on_cluster += len(entries)
        size = self.config.batch_size
        refs = [
            self._score_batch.remote(suite, list(entries[start : start + size]), judge)
            for start in range(0, len(entries), size)
        ]
        watching = asyncio.create_task(self._pass_on_stop(judge))
        try:
            batches = await asyncio.gather(*refs)
        finally:
            watching.cancel()
        return [output for batch in batches for output in batch]

    async def _pass_on_stop(self, judge: Any) -> None:
        # The stop is requested in the driver (a signal handler); the actor learns it here,
        # from the loop, never from inside the handler.
        while not self.stop.requested:
            await asyncio.sleep(0.2)
        if judge is not None:
            judge.stop.remote(self.stop.reason.message if self.stop.reason else "stopped")

    def close(self) -> None:
        """Disconnect from Ray if this run connected (a cluster stays up; a local Ray this run
        started shuts down; a session's Ray, connected before the run, stays). The judge's
        actor first closes its journal of answers (its index; see `journal`)."""
        if self._judge is not None:
            import ray

            try:
                ray.get(self._judge.close.remote(), timeout=30)
            except Exception as exc:  # its packs are still read, one by one
                _log.warning("the judge's journal could not be closed: %s", exc)
            self._judge = None
        if self._authority is not None:
            self._authority.close_from_any_thread()
            self._authority = None
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False


def _with_images(suite: Suite, entries: Sequence[ScoreInput]) -> list[ScoreInput]:
    """`entries` carrying the images their items showed, read here (the render stage left
    them in the media cache)."""
    return [
        replace(entry, images=tuple(image.inlined() for image in suite.images_shown(entry.item)))
        for entry in entries
    ]
