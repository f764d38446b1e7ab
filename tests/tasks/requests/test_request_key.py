"""The request key: anything that changes what a model sees changes the key; nothing else does."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.messages import ImageRef, Message, key_default, user_message
from roadeval.benchmarks.output import ModelOutput
from roadeval.tasks.requests.request import (
    ModelCall,
    ModelRequest,
    messages_key_json,
    request_key,
    sample_keys,
)


def image(data: bytes, path: str = "/data/a.png") -> ImageRef:
    return ImageRef(path, hashlib.sha256(data).hexdigest(), "image/png")


def _request(**changes) -> ModelRequest:
    base = dict(
        model="openai/m",
        params={"temperature": 0, "max_tokens": 5},
        messages=[user_message("Which lane?", [image(b"\x89PNG-bytes")])],
        attempt=1,
    )
    base.update(changes)
    return ModelRequest(**base)


def test_same_request_same_key_whatever_the_routing() -> None:
    item = Item(
        suite="x",
        suite_version="1",
        item_id="other",
        task="y",
        question="?",
        answer_kind=AnswerKind.CHOICE,
        reference="A",
    )
    assert _request().key == _request(item=item).key


def test_where_an_image_file_lives_is_not_part_of_the_key() -> None:
    moved = [user_message("Which lane?", [image(b"\x89PNG-bytes", "/elsewhere/b.png")])]
    assert _request(messages=moved).key == _request().key


def test_each_ingredient_changes_the_key() -> None:
    key = _request().key
    assert _request(model="openai/n").key != key
    assert _request(params={"temperature": 0.2, "max_tokens": 5}).key != key
    assert _request(messages=[user_message("Which lane?", [image(b"\x89PNG-other")])]).key != key
    assert _request(messages=[user_message("Which lane? ", [image(b"\x89PNG-bytes")])]).key != key
    assert _request(attempt=2).key != key


def test_parameter_order_does_not_matter() -> None:
    assert _request(params={"max_tokens": 5, "temperature": 0}).key == _request().key


def test_cache_round_trip_marks_cached() -> None:
    response = ModelCall("k", "m", 1, ModelOutput("B", "stop", 10, 1, 0.001, 0.2))
    back = ModelCall.from_cache(response.to_cache(), "k")
    assert back.cached and back.text == "B" and back.cost_usd == 0.001 and back.request_key == "k"
    # A reused answer cost this run nothing; its first cost stays with it.
    assert back.cost_this_run == 0.0 and not back.sent


def _key_as_json_dumps_spells_it(
    model: str,
    params: dict[str, Any],
    messages: list[Message],
    attempt: int,
    api_base: str | None,
    sample: int,
) -> str:
    """The key as it was first defined: `json.dumps` of the whole body (stores hold these)."""
    body: dict[str, Any] = {"model": model, "params": params, "messages": messages}
    body["attempt"] = attempt
    if sample != 1:
        body["sample"] = sample
    if api_base:
        body["api_base"] = api_base.rstrip("/")
    text = json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=key_default
    )
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("api_base", [None, "", "http://127.0.0.1:8000/v1/"])
@pytest.mark.parametrize("sample", [1, 3])
def test_the_key_written_out_member_by_member_is_the_key_json_dumps_made(
    api_base: str | None, sample: int
) -> None:
    image = ImageRef(path="/nowhere.png", sha256="ab" * 32)
    messages: list[Message] = [
        {"role": "system", "content": 'Réponds «A» — ou B. \u2028 "quoted" \\ back'},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Which lane? 车道"},
                {"type": "image", "image": image},
            ],
        },
    ]
    params = {"temperature": 0.0, "max_tokens": 16, "stop": ["\n"], "seed": 7, "logprobs": True}
    for attempt in (1, 2):
        old = _key_as_json_dumps_spells_it("openai/m", params, messages, attempt, api_base, sample)
        assert request_key("openai/m", params, messages, attempt, api_base, sample) == old
        encoded = messages_key_json(messages)
        spliced = request_key(
            "openai/m", params, messages, attempt, api_base, sample, messages_json=encoded
        )
        assert spliced == old


@pytest.mark.parametrize("api_base", [None, "http://127.0.0.1:8000/v1/"])
@pytest.mark.parametrize("attempt", [1, 3])
def test_a_requests_keys_across_samples_are_those_of_each_samples_request(
    api_base: str | None, attempt: int
) -> None:
    """`sample_keys` hashes the prompt once for every sample: each key is the one the sample's
    own request has (the first sample's included, whose key names no sample)."""
    first = _request(api_base=api_base, attempt=attempt)
    encoded = _request(
        api_base=api_base, attempt=attempt, messages_json=messages_key_json(first.messages)
    )
    samples = [1, 2, 7, 100]
    expected = [_request(api_base=api_base, attempt=attempt, sample=s).key for s in samples]
    assert list(sample_keys(first, samples)) == expected
    assert list(sample_keys(encoded, samples)) == expected
    assert len(set(expected)) == len(samples)


def test_the_key_is_computed_once_and_travels_with_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pickle

    from roadeval.tasks.requests import request as module

    computed: list[str] = []
    real = module.request_key

    def counting(*args: Any, **kwargs: Any) -> str:
        computed.append(real(*args, **kwargs))
        return computed[-1]

    monkeypatch.setattr(module, "request_key", counting)
    made = _request()
    assert made.key == made.key == computed[0]
    assert pickle.loads(pickle.dumps(made)).key == made.key  # an answer worker's copy
    assert len(computed) == 1
    assert _request() == made  # the cached key is no field: equality is the fields'
