"""The request key: anything that changes what a model sees changes the key; nothing else does."""

from __future__ import annotations

import hashlib

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.messages import ImageRef, user_message
from roadeval.benchmarks.output import ModelOutput
from roadeval.tasks.requests.request import ModelCall, ModelRequest


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
