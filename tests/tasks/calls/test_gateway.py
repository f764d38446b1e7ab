"""The one call path: LiteLLM against a real local server; retries, Retry-After, errors, cost."""

from __future__ import annotations

import time
from typing import Any

import pytest

from roadeval.benchmarks.messages import user_message
from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ErrorKind, ModelCall

from support.cli_process import wait_until
from support.model_server import ModelServer, Reply


def ask_all(server: ModelServer, name: str, **spec: Any) -> list[ModelCall]:
    """Every HTTP try of one request, in order."""
    client = ModelClient(ModelSpec(model=f"openai/{name}", api_base=server.api_base, **spec))
    request = client.request([user_message("Q?")], 1)
    return run_on_gateway(client.complete(request)).tries


def ask(server: ModelServer, name: str, **spec: Any) -> ModelCall:
    """The final try of one request."""
    return ask_all(server, name, **spec)[-1]


def test_retry_after_is_honoured(server: ModelServer) -> None:
    server.rules["busy"] = lambda body, hit: (
        Reply(status=429, headers={"retry-after": "1"}) if hit == 1 else Reply("B")
    )
    started = time.monotonic()
    response = ask(server, "busy", retry_backoff_s=0.0)
    assert response.ok and response.text == "B"
    # Waited the whole second asked for (a lower bound: a loaded machine only adds to it).
    assert time.monotonic() - started >= 1.0
    assert len(server.hits_for("busy")) == 2


def test_client_errors_are_not_retried(server: ModelServer) -> None:
    server.rules["strict"] = lambda body, hit: Reply(status=400, text="bad image")
    response = ask(server, "strict", retry_backoff_s=0.0)
    assert response.error_kind == ErrorKind.BAD_REQUEST and response.text is None
    assert len(server.hits_for("strict")) == 1


def test_empty_reply_is_an_error_not_an_answer(server: ModelServer) -> None:
    server.rules["mute"] = lambda body, hit: Reply("")
    response = ask(server, "mute")
    assert response.error_kind == ErrorKind.EMPTY


def test_timeouts_are_retried_then_reported(server: ModelServer) -> None:
    # The deadline covers the whole call, the client's own work included. LiteLLM's first call
    # in a process does work of its own that a loaded machine can stretch past the deadline:
    # done first, so that the tries below spend their second reaching the server (ms of it).
    server.rules["warm"] = lambda body, hit: Reply("A")
    assert ask(server, "warm").ok
    server.rules["sleepy"] = lambda body, hit: Reply("A", delay_s=3.0)
    tries = ask_all(server, "sleepy", timeout_s=1.0, num_retries=1, retry_backoff_s=0.0)
    assert [t.error_kind for t in tries] == [ErrorKind.TIMEOUT, ErrorKind.TIMEOUT]
    assert [t.try_number for t in tries] == [1, 2]
    # Each try waited out its whole deadline (load only lengthens a wait)...
    assert all(t.latency_s >= 1.0 for t in tries), [t.latency_s for t in tries]
    # ...as one HTTP request: no hidden retry of the HTTP client's.
    assert len(server.hits_for("sleepy")) == 2


def test_cost_from_panel_prices_and_usage(server: ModelServer) -> None:
    server.rules["priced"] = lambda body, hit: Reply("C", prompt_tokens=1000, completion_tokens=10)
    response = ask(server, "priced", input_cost_per_token=2e-6, output_cost_per_token=1e-5)
    assert response.output is not None
    assert response.output.tokens_in == 1000 and response.output.tokens_out == 10
    assert response.cost_usd == pytest.approx(1000 * 2e-6 + 10 * 1e-5)


def test_unpriced_model_has_unknown_cost_not_zero(server: ModelServer) -> None:
    server.rules["free-or-not"] = lambda body, hit: Reply("D")
    response = ask(server, "free-or-not")
    assert response.ok and response.cost_usd is None


def test_litellm_prices_only_what_its_map_prices(
    server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LiteLLM prices every response it builds; for a model its map lacks, that is a search of
    # the whole map for nothing, a quarter of a call's CPU against a fast server. A call priced
    # here (panel prices, none, a baseline) skips it; a map model keeps LiteLLM's own figure.
    import litellm

    runs: list[str] = []
    priced_by_litellm = litellm.response_cost_calculator

    def counted(**kwargs: Any) -> Any:
        runs.append(str(kwargs.get("model")))
        return priced_by_litellm(**kwargs)

    monkeypatch.setattr(litellm, "response_cost_calculator", counted)
    for name in ("own-priced", "unpriced-here", "gpt-4o-mini"):
        server.rules[name] = lambda body, hit: Reply("F", prompt_tokens=1000, completion_tokens=10)

    priced = ask(server, "own-priced", input_cost_per_token=2e-6, output_cost_per_token=1e-5)
    assert priced.cost_usd == pytest.approx(1000 * 2e-6 + 10 * 1e-5)
    unpriced = ask(server, "unpriced-here")
    assert unpriced.ok and unpriced.cost_usd is None
    assert runs == []

    mapped = ask(server, "gpt-4o-mini")
    entry = litellm.model_cost["gpt-4o-mini"]
    at_map_prices = 1000 * entry["input_cost_per_token"] + 10 * entry["output_cost_per_token"]
    assert runs and mapped.cost_usd == pytest.approx(at_map_prices)


def test_litellm_logs_a_call_only_when_someone_listens(server: ModelServer) -> None:
    # LiteLLM queues a success-logging handler per call on a worker of the gateway's loop;
    # with no callback registered nobody reads it, and under a saturated loop the queue grew
    # to tens of thousands of handlers (most of a large run's memory). Cost is still priced:
    # by LiteLLM's own map for a model it knows.
    import litellm
    from litellm.integrations.custom_logger import CustomLogger
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    from roadeval.tasks.calls.litellm_setup import callbacks_registered

    server.rules["gpt-4o-mini"] = lambda body, hit: Reply(
        "E", prompt_tokens=1000, completion_tokens=10
    )
    assert not callbacks_registered(litellm)
    before = GLOBAL_LOGGING_WORKER.pending_count
    for _ in range(3):
        response = ask(server, "gpt-4o-mini")
        assert response.ok and response.cost_usd is not None and response.cost_usd > 0
    assert GLOBAL_LOGGING_WORKER.pending_count == before

    class Listener(CustomLogger):
        def __init__(self) -> None:
            super().__init__()
            self.heard: list[tuple[str, float | None]] = []

        async def async_log_success_event(
            self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
        ) -> None:
            self.heard.append((kwargs["model"], kwargs.get("response_cost")))

    listener = Listener()
    litellm.callbacks.append(listener)
    server.rules["own-priced"] = lambda body, hit: Reply(
        "E", prompt_tokens=1000, completion_tokens=10
    )
    try:
        assert ask(server, "gpt-4o-mini").ok
        assert ask(server, "own-priced", input_cost_per_token=1e-6, output_cost_per_token=0.0).ok
        wait_until(lambda: len(listener.heard) == 2, timeout=10, what="the callback to hear both")
    finally:
        litellm.callbacks.remove(listener)
    # A callback of the user's still hears every call, with LiteLLM's price even of a call
    # that roadeval prices itself.
    entry = litellm.model_cost["gpt-4o-mini"]
    mapped = 1000 * entry["input_cost_per_token"] + 10 * entry["output_cost_per_token"]
    assert dict(listener.heard) == {
        "gpt-4o-mini": pytest.approx(mapped),
        "own-priced": pytest.approx(1000 * 1e-6),
    }
