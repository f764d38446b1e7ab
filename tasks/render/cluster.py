"""Where drawing runs: a Dask cluster (a LocalCluster sized to the machine, started only when a run
has something to draw, or an existing cluster by address), or this process.

Workers return PNG bytes rather than paths, so a remote cluster's files never need to be visible
here; the render stage keeps them (media cache and store).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from roadeval.benchmarks.drawing import DrawError, DrawJob

# Jobs per Dask task: a scan draws in tens of milliseconds, a Dask task costs about one.
JOBS_PER_TASK = 4


class RenderEngine(StrEnum):
    DASK = "dask"  # drawing on Dask (a LocalCluster, or the cluster at `address`)
    LOCAL = "local"  # in the run's own process


class RenderConfig(BaseModel):
    """The panel's `render:` (and `--dask-address` on the command line)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: RenderEngine = RenderEngine.DASK
    address: str | None = Field(default=None, description="an existing Dask scheduler")
    n_workers: int | None = Field(default=None, ge=1, description="local workers (all cores)")
    # Starting a LocalCluster costs seconds and a drawing tens of milliseconds: fewer drawings
    # than this are made in process (an existing cluster, by address, is always used).
    local_below: int = Field(default=16, ge=0, description="drawings made without a cluster")


# One job's outcome: its views' bytes, or why it could not be drawn.
Drawn = tuple[bytes, ...] | DrawError


def draw_batch(jobs: Sequence[DrawJob]) -> list[Drawn]:
    """Draw each job; a bad input is its own outcome, so the batch's other jobs still draw."""
    drawn: list[Drawn] = []
    for job in jobs:
        try:
            drawn.append(job.draw())
        except DrawError as exc:
            drawn.append(exc)
    return drawn


def draw_all(jobs: Sequence[DrawJob], config: RenderConfig) -> list[Drawn]:
    """Every job's outcome, in order: on Dask, or here for `engine: local`."""
    if not jobs:
        return []
    if config.engine is RenderEngine.LOCAL or (
        config.address is None and len(jobs) < config.local_below
    ):
        return draw_batch(jobs)
    batches = [list(jobs[k : k + JOBS_PER_TASK]) for k in range(0, len(jobs), JOBS_PER_TASK)]
    with _client(config) as client:
        futures = client.map(draw_batch, batches, pure=False)
        return [outcome for batch in client.gather(futures) for outcome in batch]


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
            self.client = Client(self.config.address)
            return self.client
        self.cluster = local_cluster(self.config.n_workers or os.cpu_count() or 1)
        self.client = Client(self.cluster)
        return self.client

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
