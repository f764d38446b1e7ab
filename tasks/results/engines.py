"""Which engines a run used and where they were, as its manifest records them (and the `runs`
row repeats): drawing (Dask, or in process), heavy scoring (Ray, or in process), answering
(this machine, or the nodes of a Ray cluster), and the Prefect API the run reported to."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field


class EngineRecord(BaseModel):
    """One kind of the run's work: the engine it was given to (`dask` or `ray`, else `local`:
    the run's own process), the address of the cluster when one was given (None: a cluster the
    run started itself, or none), and the units of work sent to the cluster (drawings, or items
    scored), and why that engine: kept for heavy scoring, whose engine the run chooses
    (`scoring_choice`); None for drawing, whose engine is the panel's, and in manifests from
    before the reason was kept."""

    model_config = ConfigDict(extra="forbid")

    engine: str
    address: str | None = None
    on_cluster: int = 0
    reason: str | None = None


class NodeRecord(BaseModel):
    """One node of a cluster that answered shards: its name (address / Ray node id's start),
    the shards it landed and the requests it sent for them (judge calls and retries included)."""

    model_config = ConfigDict(extra="forbid")

    node: str
    shards: int = 0
    calls: int = 0


class AnsweringRecord(BaseModel):
    """Where answer shards ran: `local` (the run's process and its answer worker processes) or
    `ray` (one actor per node of the cluster at `address`; None: a local Ray), and what each
    node answered (a node lost mid-run counts only the shards it landed)."""

    model_config = ConfigDict(extra="forbid")

    engine: str = "local"
    address: str | None = None
    nodes: list[NodeRecord] = Field(default_factory=list)

    @property
    def nodes_used(self) -> int:
        """Nodes that landed a shard."""
        return sum(1 for node in self.nodes if node.shards)

    def calls_text(self) -> str | None:
        """`node=calls` per node, comma-separated (the `runs` row's); None when local."""
        if self.engine == "local":
            return None
        return ", ".join(f"{node.node}={node.calls}" for node in self.nodes)


class EnginesRecord(BaseModel):
    """The run's engines: `render` (drawing), `scoring` (heavy scoring), `answering` (None in
    manifests from before it was kept), and the Prefect API the run reported to (None: inline,
    or Prefect's temporary server)."""

    model_config = ConfigDict(extra="forbid")

    render: EngineRecord
    scoring: EngineRecord
    answering: AnsweringRecord | None = None
    prefect_api_url: str | None = None


def bare_address(address: str | None) -> str | None:
    """`address` without any user or password in it (a URL may carry them): what is recorded."""
    if address is None or "@" not in address:
        return address
    parts = urlsplit(address)
    if not parts.netloc or "@" not in parts.netloc:
        return address
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host))
