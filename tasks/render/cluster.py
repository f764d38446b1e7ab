"""Where drawing runs: a Dask cluster (a LocalCluster sized to the machine, started only when a run
has something to draw, or an existing cluster by address), or this process.

Nothing is assumed shared with the workers: a worker draws from a job's input file only where
it finds that very file (its sha256 is the job's); every other input (a scan) is read here and
sent to a worker for it, a few tasks ahead of the workers, never all at once, so neither side
holds every scan. Workers return PNG bytes, and the render stage keeps what they drew (media
cache and store). A worker on this machine reads its scans itself: sending them costs the run's
process CPU that the workers would otherwise draw with.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from roadeval.benchmarks.drawing import DrawError, DrawJob
from roadeval.bounds import Bound

# Jobs per Dask task: a scan draws in about 10 ms, a Dask task costs the scheduler and the
# run a few (the last tasks are smaller, see `_tapered`).
JOBS_PER_TASK = 8
# The last tasks shrink to 1 / TAPER of what is left per worker thread (see `_tapered`).
TAPER = 2
# Input bytes per Dask task: what a worker holds for a task it has not drawn yet.
BATCH_BYTES = 8 * 2**20
# Tasks in flight per worker thread: enough that no worker waits for its next inputs.
TASKS_AHEAD = 2
# How long connecting to a scheduler given by address may take (Dask's own timeout), and how
# much longer before the run gives up on a connection that hangs (see `_connect`).
CONNECT_TIMEOUT_S = 10
CONNECT_GRACE_S = 5


class RenderClusterError(ValueError):
    """The Dask scheduler given by address cannot be used; the message names it."""


class RenderEngine(StrEnum):
    DASK = "dask"  # drawing on Dask (a LocalCluster, or the cluster at `address`)
    LOCAL = "local"  # in the run's own process


# The ranges of `render:`'s numbers (`roadeval.bounds`).
N_WORKERS = Bound(
    1, 256, "Dask workers on this machine: past 256 they outnumber its cores and only cost memory"
)
LOCAL_BELOW = Bound(
    0,
    1_000_000,
    "drawings made without a cluster: past a million, a run draws more than any suite shows",
)


class RenderConfig(BaseModel):
    """The panel's `render:` (and `--dask-address` on the command line)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: RenderEngine = RenderEngine.DASK
    address: str | None = Field(
        default=None, description="an existing Dask scheduler: tcp://host:port (or tls://)"
    )
    n_workers: Annotated[int, AfterValidator(N_WORKERS)] | None = Field(
        default=None, description="local workers (all cores)"
    )
    # Starting a LocalCluster costs seconds and a drawing tens of milliseconds: fewer drawings
    # than this are made in process (an existing cluster, by address, is always used).
    local_below: Annotated[int, AfterValidator(LOCAL_BELOW)] = Field(
        default=16, description="drawings made without a cluster"
    )

    @field_validator("address")
    @classmethod
    def _address_is_a_scheduler(cls, value: str | None) -> str | None:
        if value is not None and (problem := dask_address_problem(value)) is not None:
            raise ValueError(problem)
        return value

    def on_cluster(self, jobs: int) -> bool:
        """Whether `jobs` drawings go to Dask (else they are drawn in this process)."""
        if self.engine is RenderEngine.LOCAL or not jobs:
            return False
        return self.address is not None or jobs >= self.local_below


DASK_SCHEMES = ("tcp", "tls")


def dask_address_problem(address: str) -> str | None:
    """Why `address` names no Dask scheduler (`tcp://host:port`, `tls://host:port`, or
    `host:port`), or None."""
    scheme, _, rest = address.rpartition("://")
    if scheme and scheme not in DASK_SCHEMES:
        return f"Dask scheduler address {address!r}: use tcp://host:port (or tls://host:port)"
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return f"Dask scheduler address {address!r} names no host:port (e.g. tcp://10.0.0.5:8786)"
    return None


# One job's outcome: its views' bytes, or why it could not be drawn.
Drawn = tuple[bytes, ...] | DrawError


def draw_batch(jobs: Sequence[DrawJob]) -> list[Drawn]:
    """Draw each job here; a bad input is its own outcome, so the batch's other jobs still draw."""
    drawn: list[Drawn] = []
    for job in jobs:
        try:
            drawn.append(job.draw())
        except DrawError as exc:
            drawn.append(exc)
    return drawn


def draw_shipped(batch: Sequence[tuple[DrawJob, bytes]]) -> list[Drawn]:
    """(On a Dask worker.) Draw each job from the input bytes sent with it."""
    drawn: list[Drawn] = []
    for job, data in batch:
        try:
            drawn.append(job.draw_from(data))
        except DrawError as exc:
            drawn.append(exc)
    return drawn


def draw_all(jobs: Sequence[DrawJob], config: RenderConfig) -> list[Drawn]:
    """Every job's outcome, in order: on Dask, or here (`engine: local`, or too few to pay for
    starting a LocalCluster)."""
    if not config.on_cluster(len(jobs)):
        return draw_batch(jobs)
    with _client(config) as client:
        return _draw_on(client, jobs, config.address)


def draw_seen(jobs: Sequence[DrawJob]) -> list[Drawn | None]:
    """(On a Dask worker.) Draw each job from its input file where this worker finds the very
    file (`DrawJob.read_seen`); None for each job it does not: its input is then sent."""
    drawn: list[Drawn | None] = []
    for job in jobs:
        data = job.read_seen()
        if data is None:
            drawn.append(None)
            continue
        try:
            drawn.append(job.draw_from(data))
        except DrawError as exc:
            drawn.append(exc)
    return drawn


def _batches(
    jobs: Sequence[DrawJob], outcomes: list[Drawn | None], among: Sequence[int] | None = None
) -> Iterator[tuple[list[int], list[tuple[DrawJob, bytes]]]]:
    """Jobs (those at the indices `among`, else all) with their inputs, read here as they are
    needed, a task's worth at a time; an input that cannot be read is its job's outcome at
    once."""
    indices: list[int] = []
    batch: list[tuple[DrawJob, bytes]] = []
    size = 0
    for index in range(len(jobs)) if among is None else among:
        job = jobs[index]
        try:
            data = job.read_input()
        except DrawError as exc:
            outcomes[index] = exc
            continue
        if batch and (len(batch) >= JOBS_PER_TASK or size + len(data) > BATCH_BYTES):
            yield indices, batch
            indices, batch, size = [], [], 0
        indices.append(index)
        batch.append((job, data))
        size += len(data)
    if batch:
        yield indices, batch


def _draw_on(client: Any, jobs: Sequence[DrawJob], address: str | None) -> list[Drawn]:
    where = f"the Dask scheduler {address}" if address else "a LocalCluster"
    outcomes: list[Drawn | None] = [None] * len(jobs)
    unseen = _draw_where_seen(client, jobs, outcomes, where)
    if unseen:
        _draw_shipped_on(client, jobs, outcomes, unseen, where)
    assert all(outcome is not None for outcome in outcomes)
    return [outcome for outcome in outcomes if outcome is not None]


def _draw_where_seen(
    client: Any, jobs: Sequence[DrawJob], outcomes: list[Drawn | None], where: str
) -> list[int]:
    """Draw on the workers every job whose input they find themselves (tasks that carry no
    bytes); the indices of the others, whose inputs are to be sent."""
    from distributed import as_completed

    trusted = [index for index, job in enumerate(jobs) if job.input_sha256 is not None]
    unseen = sorted(set(range(len(jobs))) - set(trusted))
    tasks = list(_tapered(trusted, sum(client.nthreads().values())))
    if not tasks:
        return unseen
    futures = client.map(draw_seen, [[jobs[i] for i in task] for task in tasks], pure=False)
    placed = {future.key: task for future, task in zip(futures, tasks, strict=True)}
    for future in as_completed(futures):
        for index, outcome in zip(placed[future.key], _result(future, where), strict=True):
            if outcome is None:
                unseen.append(index)
            else:
                outcomes[index] = outcome
    return sorted(unseen)


def _tapered(indices: Sequence[int], threads: int) -> Iterator[list[int]]:
    """`indices` in tasks of JOBS_PER_TASK, the last ones smaller and smaller (a share of what
    is left per worker thread), so that the workers finish together: the last task of one
    does not keep the others waiting for a whole task's drawings."""
    start = 0
    while start < len(indices):
        share = -(-(len(indices) - start) // (TAPER * max(1, threads)))
        size = max(1, min(JOBS_PER_TASK, share))
        yield list(indices[start : start + size])
        start += size


def _result(future: Any, where: str) -> list[Any]:
    try:
        result: list[Any] = future.result()
    except Exception as exc:
        # Not a bad input (those are outcomes): the worker itself could not draw, e.g. it
        # lacks roadeval or runs another version of it.
        raise RenderClusterError(
            f"a worker of {where} failed to draw: {type(exc).__name__}: {exc} (every "
            "worker needs roadeval installed, the run's version)"
        ) from exc
    return result


def _draw_shipped_on(
    client: Any,
    jobs: Sequence[DrawJob],
    outcomes: list[Drawn | None],
    among: Sequence[int],
    where: str,
) -> None:
    """Draw the jobs at `among` on the workers from their inputs, read here and sent."""
    from distributed import as_completed

    batches = _batches(jobs, outcomes, among)
    ahead = TASKS_AHEAD * max(1, sum(client.nthreads().values()))
    done = as_completed()
    placed: dict[str, list[int]] = {}

    def send() -> bool:
        taken = next(batches, None)
        if taken is None:
            return False
        indices, batch = taken
        try:
            # Straight to a worker (in turn), and the task runs there: the scheduler never
            # handles the bytes, which cost it more CPU than routing the tasks.
            (shipped,) = client.scatter([batch], direct=True, hash=False)
        except OSError as exc:
            raise RenderClusterError(
                f"the workers of {where} cannot be reached from here ({exc}): the run sends "
                "each scan straight to a worker"
            ) from None
        future = client.submit(draw_shipped, shipped, pure=False)
        placed[future.key] = indices
        done.add(future)
        return True

    while len(placed) < ahead and send():
        pass
    for future in done:
        for index, outcome in zip(placed.pop(future.key), _result(future, where), strict=True):
            outcomes[index] = outcome
        send()


def local_cluster(workers: int) -> Any:
    """A LocalCluster of single-threaded worker processes, on 127.0.0.1 only."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        # `None` still binds the default port on every interface.
        dashboard_address="127.0.0.1:0",
        silence_logs=logging.ERROR,
    )


class _client:
    """A Dask client for one render stage; a LocalCluster it started is closed with it."""

    def __init__(self, config: RenderConfig) -> None:
        self.config = config
        self.cluster: Any = None
        self.client: Any = None

    def __enter__(self) -> Any:
        from distributed import Client  # a heavy import, paid only to draw

        for name in ("distributed", "tornado", "bokeh"):
            logging.getLogger(name).setLevel(logging.ERROR)
        if self.config.address is not None:
            self.client = _connect(self.config.address)
            return self.client
        self.cluster = local_cluster(self.config.n_workers or os.cpu_count() or 1)
        self.client = Client(self.cluster)
        return self.client

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _connect(address: str) -> Any:
    """A client of the scheduler at `address`, or RenderClusterError naming it. In a thread
    with a deadline: against something that listens but is no scheduler, Dask's handshake
    waits forever, whatever its own timeout."""
    from distributed import Client

    outcome: dict[str, Any] = {}

    def connect() -> None:
        try:
            outcome["client"] = Client(address, timeout=CONNECT_TIMEOUT_S)
        except Exception as exc:
            outcome["error"] = exc

    where = f"Dask scheduler {address} (render.address, --dask-address)"
    thread = threading.Thread(target=connect, name="dask-connect", daemon=True)
    thread.start()
    deadline = CONNECT_TIMEOUT_S + CONNECT_GRACE_S
    thread.join(deadline)
    if "client" in outcome:
        return outcome["client"]
    if thread.is_alive():
        raise RenderClusterError(
            f"{where}: no Dask scheduler answered there in {deadline:g} s "
            "(something else listens at that address?)"
        )
    raise RenderClusterError(f"{where}: cannot connect: {outcome.get('error')}") from None
