"""The judge's one gateway on a Ray cluster: an actor that every scoring worker's judge calls go
through, holding the judge's cache, claims and retries (its limits and the run's budget stay
with the run, asked through its authority).

The actor may run on another machine than the run: it gets the judge's key, the store's URI and
what opening the store needs there (for S3, the endpoint, region and the credentials this
process resolved), never the rest of the run's environment, and it reads no file of the run's.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import JudgeReply, JudgeRequest
from roadeval.storage.store import S3Store, Store, open_store
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ModelCall

if TYPE_CHECKING:
    from roadeval.tasks.calls.authority import AuthorityAddress

# The standard AWS variables an S3 store is opened with, besides its credentials.
S3_SETTINGS = (
    "AWS_ENDPOINT_URL",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_REQUEST_CHECKSUM_CALCULATION",
    "AWS_RESPONSE_CHECKSUM_VALIDATION",
)


def store_environment(store: Store) -> dict[str, str]:
    """What opening `store` elsewhere needs from this process's environment: nothing for a
    folder; for S3, its settings and the credentials as resolved here (variables, a profile or
    a role: a cluster's worker has none of them)."""
    if not isinstance(store, S3Store):
        return {}
    import boto3

    settings = {name: value for name in S3_SETTINGS if (value := os.environ.get(name))}
    session = boto3.Session()
    if session.region_name:
        settings.setdefault("AWS_DEFAULT_REGION", session.region_name)
    credentials = session.get_credentials()
    if credentials is not None:
        frozen = credentials.get_frozen_credentials()
        settings["AWS_ACCESS_KEY_ID"] = frozen.access_key
        settings["AWS_SECRET_ACCESS_KEY"] = frozen.secret_key
        if frozen.token:
            settings["AWS_SESSION_TOKEN"] = frozen.token
    return settings


class JudgeService:
    """(A Ray actor.) The judge model's one gateway for every worker of the run."""

    def __init__(
        self,
        spec: ModelSpec,
        store_uri: str,
        store_env: dict[str, str],
        run_id: str,
        key: str | None,
        authority: AuthorityAddress | None = None,
        budgeted: bool = False,
        fresh_from: datetime | None = None,
    ) -> None:
        from roadeval.tasks.cache.responses import ResponseCache
        from roadeval.tasks.calls import baseline_provider
        from roadeval.tasks.calls.authority import AuthorityLink
        from roadeval.tasks.calls.clients import ClientBuilder
        from roadeval.tasks.calls.secrets import Redactor
        from roadeval.tasks.shard.asking import asker_for

        # The actor's process is its own: the judge's key and the store's settings, and
        # nothing else of the run's environment, set before anything reads them.
        os.environ.update(store_env)
        if spec.api_key_env and key:
            os.environ[spec.api_key_env] = key
        store = open_store(store_uri)
        baseline_provider.install()
        redact = Redactor.from_environment([spec.api_key_env or ""])
        stop = StopSignal()
        # The judge's limits and the run's budget are the driver's: asked through its authority.
        link = AuthorityLink(authority, stop) if authority is not None else None
        clients = ClientBuilder(
            run_id, stop, redact, link=link, budgeted=budgeted, fresh_from=fresh_from
        )
        self.client = clients.client(spec)
        cache = ResponseCache(store, run_id, fresh_since=self.client.fresh_since)
        self.asker = asker_for(self.client, cache, store, run_id)

    async def judge(self, request: JudgeRequest, item: Item) -> tuple[JudgeReply, list[ModelCall]]:
        from roadeval.tasks.shard.judge import ItemJudge

        item_judge = ItemJudge(self.asker, item)
        reply = await item_judge(request)
        return reply, item_judge.calls

    async def close(self) -> None:
        """The run is over: the actor's journal of judge answers writes its index."""
        from roadeval.tasks.cache.journal import close_journals

        await close_journals()

    def stop(self, message: str) -> None:
        from roadeval.tasks.calls.stopping import StopReason

        self.client.stop.request(StopReason(message, 130, "interrupted"))
