"""The test ModelServer's rate limits: admitted up to the limit, 429 with Retry-After past it,
OpenAI's `x-ratelimit-*` headers on every reply, tokens counted as prompt + max output, exact
window peaks. Over real HTTP, on a clock the test moves (a ManualClock as the server's clock): the
windows are OpenAI's minute, every wait is checked to the millisecond, and nothing sleeps, so the
machine's load cannot move a request into another window."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from support.clock import ManualClock
from support.model_server import ModelServer, Reply, ServerLimits, WindowPeaks, openai_duration

RATE_HEADERS = (
    "x-ratelimit-limit-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-reset-requests",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-tokens",
)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: dict[str, Any]


def post(server: ModelServer, model: str, **fields: Any) -> Answer:
    """One chat completion request, as a client sends it; 4xx answers are returned, not raised."""
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], **fields}
    request = urllib.request.Request(
        f"{server.api_base}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return Answer(response.status, _lower(response.headers), json.load(response))
    except urllib.error.HTTPError as error:
        return Answer(error.code, _lower(error.headers), json.load(error))


def _lower(headers: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


@pytest.fixture
def clock(server: ModelServer) -> Iterator[ManualClock]:
    """The server's windows run on this clock for the test: time moves when the test says."""
    clock = ManualClock()
    server.clock = clock
    yield clock
    server.clock = time.monotonic


def test_admits_up_to_the_rpm_then_429_with_retry_after(
    server: ModelServer, clock: ManualClock
) -> None:
    server.rules["m"] = lambda body, hit: Reply("A")
    server.limits["m"] = ServerLimits(rpm=3, window_s=60.0)
    statuses = []
    for _ in range(3):  # admitted at 0, 10 and 20 s
        statuses.append(post(server, "m").status)
        clock.advance(10.0)
    assert statuses == [200, 200, 200]
    clock.advance(2.5)
    refused = post(server, "m")  # at 32.5 s
    assert refused.status == 429
    assert refused.body["error"]["code"] == "rate_limit_exceeded"
    assert refused.body["error"]["type"] == "requests"
    # Until the first admission leaves the window, at 60 s: whole seconds rounded up, exact ms.
    assert refused.headers["retry-after"] == "28"
    assert refused.headers["retry-after-ms"] == "27500"
    assert server.rejected("m") == 1
    assert server.window_peaks("m") == WindowPeaks(requests=3, tokens=30)
    clock.advance(27.25)
    early = post(server, "m")  # a quarter of a second too soon: still refused
    assert early.status == 429 and early.headers["retry-after-ms"] == "250"
    clock.advance(0.25)
    assert post(server, "m").status == 200  # the refused requests were not counted
    assert server.rejected("m") == 2
    assert server.window_peaks("m").requests == 3


def test_every_reply_carries_the_rate_limit_headers(
    server: ModelServer, clock: ManualClock
) -> None:
    server.rules["m"] = lambda body, hit: Reply("A", prompt_tokens=10)
    server.limits["m"] = ServerLimits(rpm=2, tpm=1000, window_s=60.0)
    first = post(server, "m", max_tokens=5)
    clock.advance(20.0)
    second = post(server, "m", max_tokens=5)
    clock.advance(5.0)
    refused = post(server, "m", max_tokens=5)
    for answer in (first, second, refused):
        assert set(RATE_HEADERS) <= set(answer.headers), answer.headers
        assert answer.headers["x-ratelimit-limit-requests"] == "2"
        assert answer.headers["x-ratelimit-limit-tokens"] == "1000"
    assert first.headers["x-ratelimit-remaining-requests"] == "1"
    assert first.headers["x-ratelimit-remaining-tokens"] == "985"
    assert second.headers["x-ratelimit-remaining-requests"] == "0"
    assert second.headers["x-ratelimit-remaining-tokens"] == "970"
    assert refused.status == 429
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    # Reset: until the window is empty again, 60 s after the second admission.
    assert first.headers["x-ratelimit-reset-requests"] == "1m0s"
    assert refused.headers["x-ratelimit-reset-requests"] == "55s"
    assert refused.headers["x-ratelimit-reset-tokens"] == "55s"


def test_unlimited_models_get_no_rate_limit_headers(server: ModelServer) -> None:
    server.rules["free"] = lambda body, hit: Reply("A")
    answer = post(server, "free")
    assert answer.status == 200
    assert not any(h.startswith("x-ratelimit") for h in answer.headers)
    with pytest.raises(KeyError, match="free"):
        server.window_peaks("free")


def test_tokens_are_prompt_plus_max_output(server: ModelServer, clock: ManualClock) -> None:
    server.rules["m"] = lambda body, hit: Reply("A", prompt_tokens=30)
    server.limits["m"] = ServerLimits(tpm=100, window_s=60.0)
    assert post(server, "m", max_tokens=20).status == 200  # 50, at 0 s
    clock.advance(10.0)
    assert post(server, "m", max_completion_tokens=10).status == 200  # 40: 90 in the window
    refused = post(server, "m")  # 30 more would make 120
    assert refused.status == 429
    assert refused.body["error"]["type"] == "tokens"
    assert refused.headers["x-ratelimit-remaining-tokens"] == "10"
    assert server.window_peaks("m") == WindowPeaks(requests=2, tokens=90)
    # Freeing the first request's 50 tokens is enough: the wait is until it leaves the window
    # (at 60 s), not until the second does.
    assert refused.headers["retry-after-ms"] == "50000"
    clock.advance(50.0)
    assert post(server, "m").status == 200
    assert server.window_peaks("m") == WindowPeaks(requests=2, tokens=90)  # 40 + 30 now


def test_a_request_larger_than_the_tpm_is_refused_without_retry_after(server: ModelServer) -> None:
    server.rules["m"] = lambda body, hit: Reply("A", prompt_tokens=10)
    server.limits["m"] = ServerLimits(tpm=50, window_s=1.0)
    refused = post(server, "m", max_tokens=100)
    assert refused.status == 429
    assert "too large" in refused.body["error"]["message"]
    assert "retry-after" not in refused.headers  # waiting would never help
    assert server.rejected("m") == 1


def test_peaks_are_exact_over_sliding_windows(server: ModelServer, clock: ManualClock) -> None:
    server.rules["m"] = lambda body, hit: Reply("A", prompt_tokens=hit)
    server.limits["m"] = ServerLimits(rpm=100, tpm=10_000, window_s=60.0)
    for _ in range(3):
        post(server, "m")  # tokens 1, 2, 3
    clock.advance(60.0)  # the window is (now - 60 s, now]: those three have just left it
    for _ in range(2):
        post(server, "m", max_tokens=100)  # tokens 104, 105: two requests, 209 tokens
    assert server.window_peaks("m") == WindowPeaks(requests=3, tokens=209)


def test_count_only_never_refuses_and_records_the_overshoot(
    server: ModelServer, clock: ManualClock
) -> None:
    server.rules["m"] = lambda body, hit: Reply("A", prompt_tokens=10)
    server.limits["m"] = ServerLimits(rpm=2, tpm=25, enforce=False, window_s=60.0)
    answers = [post(server, "m") for _ in range(4)]
    assert [a.status for a in answers] == [200] * 4
    assert answers[-1].headers["x-ratelimit-remaining-requests"] == "0"
    assert answers[-1].headers["x-ratelimit-remaining-tokens"] == "0"
    assert server.rejected("m") == 0
    assert server.window_peaks("m") == WindowPeaks(requests=4, tokens=40)


def test_concurrent_requests_admit_exactly_the_limit(
    server: ModelServer, clock: ManualClock
) -> None:
    server.rules["m"] = lambda body, hit: Reply("A", delay_s=0.05)
    server.limits["m"] = ServerLimits(rpm=10, window_s=60.0)
    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(lambda _: post(server, "m").status, range(40)))
    assert statuses.count(200) == 10
    assert statuses.count(429) == 30
    assert server.rejected("m") == 30
    assert server.window_peaks("m").requests == 10


def test_setting_limits_anew_starts_the_count_afresh(
    server: ModelServer, clock: ManualClock
) -> None:
    server.rules["m"] = lambda body, hit: Reply("A")
    server.limits["m"] = ServerLimits(rpm=1, window_s=60.0)
    assert [post(server, "m").status for _ in range(2)] == [200, 429]
    server.limits["m"] = ServerLimits(rpm=1, window_s=60.0)
    assert post(server, "m").status == 200
    assert server.rejected("m") == 0


def test_limits_must_name_a_positive_limit() -> None:
    with pytest.raises(ValueError, match="rpm, tpm"):
        ServerLimits()
    with pytest.raises(ValueError, match="window_s"):
        ServerLimits(rpm=1, window_s=0)


@pytest.mark.parametrize(
    ("seconds", "spelled"),
    [
        (0.25, "250ms"),
        (0.0, "0ms"),
        (1.0, "1s"),
        (17.9991, "18s"),
        (1.5, "1.5s"),
        (360.0, "6m0s"),
        (90.25, "1m30.25s"),
        (3723.0, "1h2m3s"),
    ],
)
def test_durations_are_spelled_as_openai_does(seconds: float, spelled: str) -> None:
    assert openai_duration(seconds) == spelled


def test_admission_times_list_only_admitted_requests(server: ModelServer) -> None:
    # On the server's own clock, time.monotonic (a client's limiter compares with it).
    server.rules["m"] = lambda body, hit: Reply("A")
    server.limits["m"] = ServerLimits(rpm=2, window_s=60.0)
    before = time.monotonic()
    statuses = [post(server, "m").status for _ in range(3)]
    times = server.admission_times("m")
    assert statuses == [200, 200, 429]
    assert len(times) == 2 and before <= times[0] <= times[1] <= time.monotonic()
