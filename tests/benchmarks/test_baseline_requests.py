"""A baseline's answer is a function of its request: the random baselines of every suite draw from
`BaselineCall.rng()`, seeded by the request key the gateway passes, never by the item's id; a call
without a request key cannot draw."""

from __future__ import annotations

from pathlib import Path

import pytest

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import BaselineCall, find_baseline, get_suite
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.model_spec import ModelSpec

NAMES = ("trip", "roadbench", "tbbench", "v2xqa", "stride")
# RoadBench's random baseline answers tasks 1, 4 and 6 only.
RANDOM_TASKS = {"roadbench": {"1", "4", "6"}}


def _item(item_id: str = "q-1") -> Item:
    return Item(
        suite="trip",
        suite_version="test",
        item_id=item_id,
        task="mcq",
        question="Which lane?",
        options={letter: f"option {letter}" for letter in "ABCD"},
        labels={"modality": "text"},
        answer_kind=AnswerKind.CHOICE,
        reference="B",
    )


def _sent_call(spec: ModelSpec, item: Item, attempt: int = 1) -> tuple[str, BaselineCall]:
    """The request key and the call the gateway hands the baseline provider for `item`."""
    client = ModelClient(spec)
    suite = get_suite(item.suite)
    request = client.request(suite.prompt(item, suite.render(item)), attempt, item=item)
    call = client.litellm_kwargs(request, request.messages)["metadata"]["roadeval"]["call"]
    assert isinstance(call, BaselineCall)
    return request.key, call


def test_the_gateway_passes_the_request_key() -> None:
    key, call = _sent_call(ModelSpec(model="roadeval/random", params={"seed": 3}), _item(), 2)
    assert call.request_key == key and len(key) == 64
    assert (call.seed, call.attempt, call.item.reference) == (3, 2, None)


def test_a_call_without_a_request_key_cannot_draw() -> None:
    call = BaselineCall.blind(_item())
    with pytest.raises(ValueError, match="no request key"):
        call.rng()
    baseline = find_baseline("random", "trip", "mcq")
    assert baseline is not None
    with pytest.raises(ValueError, match="no request key"):
        baseline.fn(call)
    # A baseline that draws nothing needs no key.
    judge = find_baseline("midpoint-judge", "trip", "mcq")
    assert judge is not None and '"score": 5' in str(judge.fn(call))


def test_same_request_same_draws_whatever_the_item() -> None:
    spec = ModelSpec(model="roadeval/random", params={"seed": 3})
    key_a, call_a = _sent_call(spec, _item("q-1"))
    key_b, call_b = _sent_call(spec, _item("q-2"))
    assert key_a == key_b
    assert call_a.rng().random() == call_b.rng().random()
    key_c, call_c = _sent_call(spec, _item("q-1"), attempt=2)
    assert key_c != key_a and call_c.rng().random() != call_a.rng().random()


@pytest.mark.parametrize("name", NAMES)
def test_random_baselines_answer_by_request(name: str, tmp_path: Path, media_cache: Path) -> None:
    """Every suite's random baseline: the same request key answers the same for another item id
    (the same prompt), and many requests do not all get one answer."""
    suite = get_suite(name)
    items = [
        item
        for item in suite.load(suite.generate_demo(tmp_path / name)).items
        if item.task in RANDOM_TASKS.get(name, {item.task})
    ]
    replies = []
    for n, item in enumerate(items):
        baseline = find_baseline("random", name, item.task)
        assert baseline is not None, (name, item.task)
        key = f"{n:064x}"
        reply = baseline.fn(BaselineCall.blind(item, 0, 1, key))
        twin = item.model_copy(update={"item_id": f"{item.item_id}-twin"})
        assert baseline.fn(BaselineCall.blind(twin, 0, 1, key)) == reply
        replies.append(str(reply))
    assert len(set(replies)) > 1
