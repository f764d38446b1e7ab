"""A refused key (401, 403, an invalid-key error) is not retried, and after `auth_failed_after`
refusals with no success between the model is declared auth_failed: its remaining calls are not
sent. Every record names the key's variable, never the key."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from roadeval.benchmarks.messages import user_message
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient, run_on_gateway
from roadeval.tasks.calls.reachability import KeyRefusals
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ErrorKind, ModelCall

from support.model_server import ModelServer, Reply

KEY_ENV = "ROADEVAL_TEST_REFUSED_KEY"
SECRET = "sk-refused-0c9d8e7f6a5b4c3d2e1f"


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, SECRET)
    return KEY_ENV


def echo_401(body: dict[str, Any], hit: int) -> Reply:
    """OpenAI's wording, with the key echoed back as some providers do."""
    return Reply(
        status=401, text=f"Incorrect API key provided: {body['_headers']['authorization']}"
    )


def client_for(server: ModelServer, name: str, **spec: Any) -> ModelClient:
    settings: dict[str, Any] = {"num_retries": 3, "retry_backoff_s": 0.0, **spec}
    return ModelClient(
        ModelSpec(model=f"openai/{name}", name=name, api_base=server.api_base, **settings)
    )


def ask_many(client: ModelClient, n: int) -> list[CallOutcome]:
    async def every() -> list[CallOutcome]:
        requests = [client.request([user_message(f"Q{k}?")], 1) for k in range(n)]
        return list(await asyncio.gather(*(client.complete(r) for r in requests)))

    return run_on_gateway(every())


def finals(outcomes: list[CallOutcome]) -> list[ModelCall]:
    calls = [o.final for o in outcomes]
    assert all(c is not None for c in calls)
    return [c for c in calls if c is not None]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=401, text="Incorrect API key provided"),
        Reply(status=403, text="Forbidden"),
        Reply(status=400, text="API key not valid. Please pass a valid API key."),
    ],
    ids=["401", "403", "400-invalid-key"],
)
def test_a_refused_key_is_auth_and_is_not_retried(
    server: ModelServer, keyed: str, reply: Reply
) -> None:
    server.rules["refused"] = lambda body, hit: reply
    [outcome] = ask_many(client_for(server, "refused", api_key_env=keyed), 1)
    assert [t.error_kind for t in outcome.tries] == [ErrorKind.AUTH]
    assert len(server.hits_for("refused")) == 1  # num_retries=3, none spent
    assert f"key from api_key_env {KEY_ENV}" in (outcome.tries[0].error_message or "")


def test_after_three_refusals_the_rest_is_skipped_unsent(server: ModelServer, keyed: str) -> None:
    server.rules["revoked"] = echo_401
    client = client_for(server, "revoked", api_key_env=keyed, max_concurrency=1)
    calls = finals(ask_many(client, 10))
    assert len(server.hits_for("revoked")) == 3
    assert SECRET in server.hits_for("revoked")[0]["_headers"]["authorization"]
    kinds = [c.error_kind for c in calls]
    assert kinds.count(ErrorKind.AUTH) == 3 and kinds.count(ErrorKind.AUTH_FAILED) == 7
    skipped = [c for c in calls if c.error_kind == ErrorKind.AUTH_FAILED]
    assert all(c.try_number == 0 and not c.sent for c in skipped)
    message = skipped[0].error_message or ""
    assert "model revoked" in message and f"key from api_key_env {KEY_ENV}" in message
    # The echoed key is in no record: redacted to its variable's name.
    refused = [c.error_message or "" for c in calls if c.error_kind == ErrorKind.AUTH]
    assert all(f"[redacted:{KEY_ENV}]" in m for m in refused)
    assert not any(SECRET in (c.error_message or "") for c in calls)


def test_the_number_of_refusals_is_the_models_and_a_success_resets_it(
    server: ModelServer, keyed: str
) -> None:
    # Refused, refused, answered, then refused for good: three refusals after the success.
    server.rules["flaky-key"] = lambda body, hit: Reply("A") if hit == 3 else echo_401(body, hit)
    client = client_for(server, "flaky-key", api_key_env=keyed, max_concurrency=1)
    kinds = Counter(c.error_kind for c in finals(ask_many(client, 8)))
    assert kinds == {ErrorKind.AUTH: 5, None: 1, ErrorKind.AUTH_FAILED: 2}
    assert len(server.hits_for("flaky-key")) == 6
    once = client_for(server, "once", api_key_env=keyed, max_concurrency=1, auth_failed_after=1)
    server.rules["once"] = echo_401
    kinds = Counter(c.error_kind for c in finals(ask_many(once, 3)))
    assert kinds == {ErrorKind.AUTH: 1, ErrorKind.AUTH_FAILED: 2}


def test_requests_in_flight_when_declared_are_all_that_is_sent_after(
    server: ModelServer, keyed: str
) -> None:
    server.rules["busy-revoked"] = lambda body, hit: Reply(status=401, delay_s=0.05)
    client = client_for(server, "busy-revoked", api_key_env=keyed, max_concurrency=4)
    outcomes = ask_many(client, 40)
    tries = [t for o in outcomes for t in o.tries]
    # Every request the server saw is on record as a sent try (a try dropped under load and
    # retried is one of them: its retry met the verdict, so its request ends auth_failed).
    assert sum(t.sent for t in tries) == len(server.hits_for("busy-revoked"))
    refused = sum(t.error_kind == ErrorKind.AUTH for t in tries)
    assert 3 <= refused <= 3 + 4 - 1  # the verdict, then what was in flight when it landed
    unsent = [o for o in outcomes if not any(t.sent for t in o.tries)]
    assert len(unsent) >= 40 - (3 + 4 - 1)
    assert all(o.final is not None and o.final.error_kind == ErrorKind.AUTH_FAILED for o in unsent)


def test_the_verdict_names_the_key_variable_or_its_absence() -> None:
    keyed = KeyRefusals(ModelSpec(model="openai/m", name="m", api_key_env="MY_KEY"))
    unset = KeyRefusals(ModelSpec(model="openai/m"))
    local = KeyRefusals(ModelSpec(model="openai/m", api_base="http://127.0.0.1:1/v1"))
    for refusals in (keyed, unset, local):
        refusals.note(False)
        refusals.note(None)  # a try that says nothing of the key (a 500, a timeout)
        refusals.note(False)
        assert not refusals.failed
        refusals.note(False)
        assert refusals.failed
    assert "model m" in (keyed.verdict or "") and "api_key_env MY_KEY" in (keyed.verdict or "")
    assert "no key variable (api_key_env unset)" in (unset.verdict or "")
    assert "placeholder key no-key" in (local.verdict or "")
