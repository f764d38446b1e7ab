"""Items whose requests are identical are asked once: the others share the answer (reused, not
sent) or the error (not sent again), whichever shard of the process asks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from roadeval.benchmarks.messages import user_message
from roadeval.benchmarks.output import ModelOutput
from roadeval.storage.store import LocalStore
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient, run_on_gateway
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ModelCall, ModelRequest
from roadeval.tasks.shard.asking import Asker


def _client(answer: ModelOutput | None, sent: list[str]) -> ModelClient:
    client = ModelClient(ModelSpec(model="openai/shared", api_base="http://127.0.0.1:9/v1"))

    async def complete(request: ModelRequest) -> CallOutcome:
        sent.append(request.key)
        await asyncio.sleep(0.05)  # long enough for the twins to find it in flight
        if answer is None:
            error = ModelCall(request.key, "openai/shared", 1, error_kind="server_error")
            return CallOutcome([error])
        return CallOutcome([ModelCall(request.key, "openai/shared", 1, output=answer)])

    client.complete = complete  # type: ignore[method-assign]
    return client


def _ask_three(client: ModelClient, store: LocalStore) -> list[CallOutcome]:
    asker = Asker(client, ResponseCache(store), None)
    request = client.request([user_message("the same prompt")])

    async def go() -> list[Any]:
        return list(await asyncio.gather(*(asker.ask_unanswered(request) for _ in range(3))))

    return run_on_gateway(go())


def test_identical_requests_in_flight_are_sent_once_and_share_the_answer(tmp_path: Path) -> None:
    sent: list[str] = []
    outcomes = _ask_three(_client(ModelOutput("B"), sent), LocalStore(tmp_path))
    assert len(sent) == 1
    finals = [outcome.final for outcome in outcomes]
    assert all(final is not None and final.text == "B" for final in finals)
    assert sum(final.sent for final in finals if final) == 1
    assert sum(final.cached for final in finals if final) == 2


def test_an_error_is_shared_not_sent_again(tmp_path: Path) -> None:
    sent: list[str] = []
    outcomes = _ask_three(_client(None, sent), LocalStore(tmp_path))
    assert len(sent) == 1
    finals = [outcome.final for outcome in outcomes if outcome.final is not None]
    assert [f.error_kind for f in finals] == ["server_error"] * 3
    assert sum(f.sent for f in finals) == 1 and not any(f.may_be_billed for f in finals)
