"""Where answer shards run (the panel's `answering:`, `--answer-ray-address` on the command
line): the run's own machine (`local`: its process and answer worker processes), or the nodes
of a Ray cluster (`ray`), each calling the models through the same gateway and authority."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from roadeval.bounds import Bound
from roadeval.tasks.shard.remote_scoring import RayAddress

SHARDS_PER_NODE = Bound(
    1,
    64,
    "shards a node answers at once: past 64 a node holds more plans in memory than its calls "
    "can use",
)

# What names the cluster in messages: where the address was given.
ANSWERING_SETTING = "answering.address, --answer-ray-address"


class AnsweringEngine(StrEnum):
    LOCAL = "local"  # the run's own process and its answer worker processes
    RAY = "ray"  # actors on every node of a Ray cluster (local, or the one at `address`)


class AnsweringConfig(BaseModel):
    """Where answer shards run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: AnsweringEngine = AnsweringEngine.LOCAL
    address: RayAddress | None = Field(
        default=None, description="an existing Ray cluster: host:port (its GCS), or ray://host:port"
    )
    shards_per_node: Annotated[int, AfterValidator(SHARDS_PER_NODE)] = Field(
        default=4, description="shards each node answers at once"
    )

    @model_validator(mode="after")
    def _address_is_for_ray(self) -> AnsweringConfig:
        if self.address is not None and self.engine is AnsweringEngine.LOCAL:
            raise ValueError(
                "an address is where engine: ray answers; with engine: local shards are "
                "answered on this machine (drop the address, or set engine: ray)"
            )
        return self

    @property
    def on_cluster(self) -> bool:
        """Whether shards are answered by a cluster given by address (another machine's
        nodes, which cannot see this machine's files)."""
        return self.engine is AnsweringEngine.RAY and self.address is not None
