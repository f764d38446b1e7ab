"""The request key: anything that changes what a model sees changes the key; nothing else does."""

from __future__ import annotations

from roadeval.benchmarks.messages import user_message
from roadeval.tasks.request import ModelRequest, ModelResponse


def _request(**changes) -> ModelRequest:
    base = dict(
        model="openai/m",
        params={"temperature": 0, "max_tokens": 5},
        messages=[user_message("Which lane?", [(b"\x89PNG-bytes", "image/png")])],
        attempt=1,
        suite="s",
        task="t",
        item_id="i",
    )
    base.update(changes)
    return ModelRequest(**base)


def test_same_request_same_key_whatever_the_routing() -> None:
    assert _request().key == _request(item_id="other", suite="x", task="y").key


def test_each_ingredient_changes_the_key() -> None:
    key = _request().key
    assert _request(model="openai/n").key != key
    assert _request(params={"temperature": 0.2, "max_tokens": 5}).key != key
    assert (
        _request(messages=[user_message("Which lane?", [(b"\x89PNG-other", "image/png")])]).key
        != key
    )
    assert (
        _request(messages=[user_message("Which lane? ", [(b"\x89PNG-bytes", "image/png")])]).key
        != key
    )
    assert _request(attempt=2).key != key


def test_parameter_order_does_not_matter() -> None:
    assert _request(params={"max_tokens": 5, "temperature": 0}).key == _request().key


def test_cache_round_trip_marks_cached() -> None:
    response = ModelResponse("k", "m", 1, "B", "stop", 10, 1, 0.001, 0.2)
    back = ModelResponse.from_cache(response.to_cache(), "k")
    assert back.cached and back.text == "B" and back.cost_usd == 0.001 and back.request_key == "k"
    # A reused answer cost this run nothing; its first cost stays with it.
    assert back.cost_this_run == 0.0 and not back.sent
