"""The call path against a faulty server: whole-call deadlines, retried drops and truncations,
every HTTP try recorded, and an endpoint declared unreachable only when it really is."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from roadeval.benchmarks.messages import user_message
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient, run_on_gateway
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ErrorKind

from support.model_server import Fault, ModelServer, Reply


def client_for(server: ModelServer, name: str, **spec: Any) -> ModelClient:
    return ModelClient(ModelSpec(model=f"openai/{name}", api_base=server.api_base, **spec))


def call(client: ModelClient, question: str = "Q?") -> CallOutcome:
    request = client.request([user_message(question)], 1)
    return run_on_gateway(client.complete(request))


def test_timeout_is_a_deadline_for_the_whole_call_however_slow_the_trickle(
    server: ModelServer,
) -> None:
    # About 300 bytes, 4 every 0.1 s: each read is quick, the whole reply takes 7 s or more.
    server.rules["trickle"] = lambda body, hit: Reply("A", fault=Fault.TRICKLE, trickle_s=0.1)
    client = client_for(server, "trickle", timeout_s=0.5, num_retries=0)
    started = time.monotonic()
    outcome = call(client)
    elapsed = time.monotonic() - started
    assert outcome.final is not None and outcome.final.error_kind == ErrorKind.TIMEOUT
    assert elapsed < 3.0, f"the call took {elapsed:.1f} s against a 0.5 s deadline"
    assert outcome.final.may_be_billed


def test_dropped_and_truncated_replies_are_retried_and_each_try_recorded(
    server: ModelServer,
) -> None:
    faults = {1: Fault.DROP, 2: Fault.TRUNCATE}
    server.rules["flaky"] = lambda body, hit: Reply("B", fault=faults.get(hit))
    client = client_for(server, "flaky", num_retries=3, retry_backoff_s=0.01)
    outcome = call(client)
    kinds = [t.error_kind for t in outcome.tries]
    assert kinds == [ErrorKind.DROPPED, ErrorKind.TRUNCATED, None]
    assert [t.try_number for t in outcome.tries] == [1, 2, 3]
    assert outcome.final is not None and outcome.final.text == "B"
    assert len(server.hits_for("flaky")) == 3
    assert not client.reachability.unreachable


def test_many_concurrent_drops_do_not_make_a_healthy_endpoint_unreachable(
    server: ModelServer,
) -> None:
    # The first eight requests (all of them in flight at once) are dropped; then it serves.
    server.rules["busy"] = lambda body, hit: Reply("C", fault=Fault.DROP if hit <= 8 else None)
    client = client_for(server, "busy", num_retries=2, retry_backoff_s=0.05, max_concurrency=8)

    async def many() -> list[CallOutcome]:
        requests = [client.request([user_message(f"Q{i}")], 1) for i in range(16)]
        return list(await asyncio.gather(*(client.complete(r) for r in requests)))

    outcomes = run_on_gateway(many())
    assert all(o.final is not None and o.final.ok for o in outcomes)
    assert not client.reachability.unreachable


def test_a_refused_connection_before_any_success_is_unreachable_at_once() -> None:
    client = ModelClient(
        ModelSpec(
            model="openai/nowhere",
            api_base="http://127.0.0.1:9/v1",
            num_retries=1,
            retry_backoff_s=0.01,
        )
    )
    first, second = call(client, "one"), call(client, "two")
    assert [t.error_kind for t in first.tries] == [ErrorKind.CONNECTION, ErrorKind.CONNECTION]
    assert client.reachability.unreachable
    # The next request is not sent at all: a record says why, and that nothing was sent.
    assert [t.error_kind for t in second.tries] == [ErrorKind.UNREACHABLE]
    assert second.tries[0].try_number == 0 and not second.tries[0].sent
    assert "127.0.0.1:9" in (second.tries[0].error_message or "")


def test_an_endpoint_failing_for_a_whole_window_is_declared_unreachable(
    server: ModelServer,
) -> None:
    server.rules["gone"] = lambda body, hit: Reply(fault=Fault.DROP)
    client = client_for(server, "gone", num_retries=2, retry_backoff_s=0.2, unreachable_after_s=0.3)
    first = call(client, "one")
    assert len(first.tries) == 3 and client.reachability.unreachable
    later = call(client, "two")
    assert [t.error_kind for t in later.tries] == [ErrorKind.UNREACHABLE]
    assert len(server.hits_for("gone")) == 3


@pytest.mark.parametrize("kind", [Fault.DROP, Fault.TRUNCATE])
def test_one_success_keeps_the_endpoint_reachable_through_later_failures(
    server: ModelServer, kind: Fault
) -> None:
    server.rules["wobbly"] = lambda body, hit: Reply("D", fault=None if hit == 1 else kind)
    client = client_for(server, "wobbly", num_retries=0)
    assert call(client, "ok").final.ok  # type: ignore[union-attr]
    for n in range(5):
        assert call(client, f"bad{n}").final.error_kind in {  # type: ignore[union-attr]
            ErrorKind.DROPPED,
            ErrorKind.TRUNCATED,
        }
    assert not client.reachability.unreachable
