"""Per-model limits through the real call path: tokens per minute, requests per minute and the
provider's rate-limit headers, checked by a server that counts every window exactly."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from roadeval.benchmarks.messages import user_message
from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
from roadeval.tasks.calls.limits import CallLimiter, OverLimit, RateHeaders, parse_duration_s
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ModelCall

from support.model_server import ModelServer, Reply, ServerLimits

WINDOW_S = 1.0  # the tests' minute: the limiter and the server count over the same window


def client_for(
    server: ModelServer, name: str, window_s: float = WINDOW_S, **spec: Any
) -> ModelClient:
    """A client whose limiter counts over the tests' short window; every request asks for 40
    output tokens at most."""
    model = ModelSpec(
        model=f"openai/{name}", api_base=server.api_base, params={"max_tokens": 40}, **spec
    )
    client = ModelClient(model)
    limiter = client.gate.limiter
    client.gate.limiter = CallLimiter(
        limiter.max_concurrency, limiter.rpm, limiter.tpm, window_s=window_s, guard_s=0.05
    )
    return client


def ask_many(client: ModelClient, n: int) -> list[ModelCall]:
    async def every() -> list[ModelCall]:
        requests = [client.request([user_message(f"Q{k}?")], 1, tokens_in_est=10) for k in range(n)]
        outcomes = await asyncio.gather(*(client.complete(r) for r in requests))
        return [o.final for o in outcomes if o.final is not None]

    return run_on_gateway(every())


def test_durations_and_headers_read_as_providers_write_them() -> None:
    assert parse_duration_s("6m0s") == 360.0
    assert parse_duration_s("250ms") == 0.25
    assert parse_duration_s("1h2m3.5s") == 3723.5
    assert parse_duration_s("20") == 20.0
    assert parse_duration_s("soon") is None
    said = RateHeaders.read(
        {"X-RateLimit-Remaining-Requests": "0", "x-ratelimit-reset-requests": "1s"}
    )
    assert said == RateHeaders(remaining_requests=0, reset_requests_s=1.0)
    assert RateHeaders.read({"content-type": "application/json"}) is None


def test_tokens_per_minute_are_never_exceeded(server: ModelServer) -> None:
    # The limit is exact on any machine: the limiter counts a request from its admission until
    # a window after its end, the server from its arrival, in between, on the same clock. That
    # it is used takes the first four, admitted together, arriving within one window: LiteLLM's
    # first call in a process (a second or two of its own work, longer under load) comes first.
    server.rules["warm"] = lambda body, hit: Reply("A")
    assert all(call.ok for call in ask_many(client_for(server, "warm"), 1))
    # Each request counts 10 prompt + 40 max output = 50 tokens: 4 fit in a 200-token window.
    server.rules["tpm"] = lambda body, hit: Reply("A", prompt_tokens=10)
    server.limits["tpm"] = ServerLimits(tpm=200, enforce=False, window_s=WINDOW_S)
    started = time.monotonic()
    calls = ask_many(client_for(server, "tpm", tpm=200, max_concurrency=16), 12)
    assert all(call.ok for call in calls) and len(calls) == 12
    peaks = server.window_peaks("tpm")
    assert peaks.tokens <= 200
    assert peaks.tokens == 200  # the limit is used, not just respected
    assert time.monotonic() - started >= 2 * WINDOW_S  # 12 requests = 3 windows' worth


def test_prompt_tokens_are_reconciled_with_the_provider_count(server: ModelServer) -> None:
    # The plan guessed 10 prompt tokens; the provider counts 60: 100 a request, 2 per window.
    server.rules["heavy"] = lambda body, hit: Reply("A", prompt_tokens=60)
    server.limits["heavy"] = ServerLimits(tpm=200, enforce=False, window_s=WINDOW_S)
    client = client_for(server, "heavy", tpm=200, max_concurrency=1)
    calls = ask_many(client, 6)
    assert all(call.ok for call in calls)
    assert server.window_peaks("heavy").tokens <= 200


def test_requests_per_minute_are_spaced_and_windowed(server: ModelServer) -> None:
    server.rules["rpm"] = lambda body, hit: Reply("A")
    server.limits["rpm"] = ServerLimits(rpm=5, enforce=False, window_s=WINDOW_S)
    # In the tests' 1-s minute, rpm 5 spaces requests 0.2 s apart and never lets a 6th into
    # any window, however the replies come back.
    calls = ask_many(client_for(server, "rpm", rpm=5, max_concurrency=8), 12)
    assert all(call.ok for call in calls)
    assert server.window_peaks("rpm").requests <= 5


def test_a_429_and_the_headers_pause_every_caller(server: ModelServer) -> None:
    # The panel allows more than the provider does; the provider says so in its headers and with
    # 429s, and every caller waits rather than each one finding out for itself.
    server.rules["tight"] = lambda body, hit: Reply("A")
    server.limits["tight"] = ServerLimits(rpm=4, window_s=WINDOW_S)
    calls = ask_many(client_for(server, "tight", max_concurrency=8, retry_backoff_s=0.0), 16)
    assert all(call.ok for call in calls) and len(calls) == 16
    assert server.rejected("tight") <= 4
    assert server.window_peaks("tight").requests <= 4


def test_a_request_larger_than_the_whole_limit_is_refused() -> None:
    limiter = CallLimiter(1, None, 100)

    async def admit() -> None:
        await limiter.acquire(101)

    with pytest.raises(OverLimit, match="more than the model's tpm of 100"):
        asyncio.run(admit())


def test_a_request_over_the_limit_is_an_error_not_sent(server: ModelServer) -> None:
    server.rules["small"] = lambda body, hit: Reply("A")
    (call,) = ask_many(client_for(server, "small", tpm=30), 1)
    assert call.error_kind == "over_limit" and not call.sent
    assert "more than the model's tpm of 30" in (call.error_message or "")
    assert server.hits_for("small") == []
