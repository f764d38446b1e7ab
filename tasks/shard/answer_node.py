"""(On a node of a Ray cluster.) The actor that answers a run's shards there: whole shards (ask,
score, land), several at a time, through one link to the run's authority, which admits and
settles every call, so each model's limits and the run's budget hold over every node.

A node may be another machine: it gets the store's URI with what opening it there needs (for
S3, the endpoint, region and the credentials the run resolved), the models' keys, and the
shards with the bytes of every image they show, and reads no file of the run's.
"""

from __future__ import annotations

import contextlib
import copyreg
import io
import os
import pickle
import socket
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from roadeval.benchmarks.messages import ImageRef
from roadeval.environment import tune_collector_for_run
from roadeval.storage.part_cache import keep_written_parts
from roadeval.storage.store import open_store
from roadeval.tasks.calls.authority import AuthorityAddress, AuthorityLink
from roadeval.tasks.calls.clients import ClientBuilder
from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
from roadeval.tasks.calls.secrets import Redactor
from roadeval.tasks.calls.stopping import StopReason, StopSignal
from roadeval.tasks.shard.answer_workers import reduce_client, serve_clients
from roadeval.tasks.shard.stages import ShardResult, run_shard

# How long a node may take to reach the store and the authority when it is checked.
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class NodeContext:
    """What a node's actor needs of the run: where its authority listens, the store, what
    opening the store there needs and the models' keys (`environment`), and the run's
    horizon."""

    authority: AuthorityAddress
    store_uri: str
    environment: dict[str, str]
    key_variables: tuple[str, ...]
    run_id: str
    fresh_from: datetime
    budgeted: bool


def _reduce_image(image: ImageRef) -> tuple[Any, tuple[str, str, str, bytes]]:
    # The image's bytes travel with it: the node has no file of the run's.
    return ImageRef, (image.path, image.sha256, image.mime, image.read_bytes())


class _ShardPickler(pickle.Pickler):
    """Pickles a shard for a node: a model client as its spec (the node's own client of the
    model), every image with its bytes."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.dispatch_table = {
            **copyreg.dispatch_table,
            ModelClient: reduce_client,
            ImageRef: _reduce_image,
        }


def shard_message(message: Any) -> bytes:
    """`message` (a plan, the store, the judge) as the bytes a node's actor is sent."""
    buffer = io.BytesIO()
    _ShardPickler(buffer).dump(message)
    return buffer.getvalue()


def node_name() -> str:
    """This node as the manifest names it: its address and the start of its Ray node id."""
    import ray

    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()}/{context.get_node_id()[:8]}"


class AnswerNode:
    """(A Ray actor, one per node.) Answers the shards the run sends it."""

    def __init__(self, context: NodeContext) -> None:
        # The actor's process is its own: the store's settings and the models' keys, and
        # nothing else of the run's environment, set before anything reads them.
        os.environ.update(context.environment)
        tune_collector_for_run()
        keep_written_parts(False)  # the driver reads what this node lands
        self.context = context
        self.name = node_name()
        self.stop = StopSignal()
        self.link = AuthorityLink(context.authority, self.stop, node=self.name)
        redact = Redactor.from_environment(context.key_variables)
        serve_clients(
            ClientBuilder(
                context.run_id,
                self.stop,
                redact,
                link=self.link,
                budgeted=context.budgeted,
                fresh_from=context.fresh_from,
            )
        )

    def probe(self) -> str:
        """This node's name, once it reached the store (a write probe) and the run's authority
        (it answered); raises NodeUnfit naming what it could not reach."""
        return probe_node(self.name, self.context, self.link)

    def answer(self, message: bytes) -> ShardResult:
        plan, store, judge = pickle.loads(message)
        return run_shard(plan, store, judge)

    def halt(self, message: str) -> None:
        self.stop.request(StopReason(message, 130, "interrupted"))

    def close(self) -> None:
        """The run is over: this node's journal of answers writes its index; hang up."""
        from roadeval.tasks.cache.journal import close_journals

        with contextlib.suppress(Exception):
            run_on_gateway(close_journals())
        run_on_gateway(self.link.close())


class NodeUnfit(RuntimeError):
    """A node that cannot reach the store or the run's authority; the message says which."""


def probe_node(name: str, context: NodeContext, link: AuthorityLink) -> str:
    """`name`, once the node wrote to the store and heard the authority; else NodeUnfit."""
    try:
        store = open_store(context.store_uri)
        store.probe_writable()
    except Exception as exc:
        endpoint = context.environment.get("AWS_ENDPOINT_URL")
        where = f"{context.store_uri}" + (f" at {endpoint}" if endpoint else "")
        raise NodeUnfit(
            f"node {name} ({socket.gethostname()}) cannot write the store {where}: {exc}"
        ) from None
    authority = f"{context.authority.host}:{context.authority.port}"
    try:
        run_on_gateway(link.ping(PROBE_TIMEOUT_S))
    except ConnectionRefusedError:
        reason = "nobody listens there (connection refused)"
    except TimeoutError:
        reason = f"no answer in {PROBE_TIMEOUT_S:g} s"
    except OSError as exc:
        reason = str(exc) or type(exc).__name__
    else:
        return name
    raise NodeUnfit(
        f"node {name} ({socket.gethostname()}) cannot reach the run's authority at "
        f"{authority}: {reason}"
    )
