"""What a scoring worker reads travels with the batch: a judged item's images go with it, their
bytes carried, and the judge is asked about those (the run's files may be on another machine);
the judge actor opens an S3 store with the settings and credentials the run resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import JudgeReply, JudgeRequest
from roadeval.benchmarks.messages import ImageRef, encode_messages, image_refs
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.stride.judge import judge_request
from roadeval.benchmarks.stride.suite import Kind, item_kind
from roadeval.storage.store import open_store
from roadeval.tasks.requests.image_tokens import image_size
from roadeval.tasks.shard.judge_service import store_environment
from roadeval.tasks.shard.remote_scoring import (
    ScoreInput,
    _with_images,
    ray_address_problem,
    score_batch,
)


class _Method:
    def __init__(self, seen: list[JudgeRequest]) -> None:
        self.seen = seen

    def remote(self, request: JudgeRequest, item: Item) -> Any:
        self.seen.append(request)

        async def reply() -> tuple[JudgeReply, list[Any]]:
            output = ModelOutput('{"score": 7}')
            return JudgeReply("judge", "key", {}, request.prompt_hash, output), []

        return reply()


class _Actor:
    """The judge actor as a worker calls it (`actor.judge.remote(...)`, awaited)."""

    def __init__(self) -> None:
        self.seen: list[JudgeRequest] = []
        self.judge = _Method(self.seen)


def test_a_judged_items_images_travel_with_it_and_are_what_the_judge_sees(
    tmp_path: Path,
) -> None:
    suite = get_suite("stride")
    items = suite.load(suite.generate_demo(tmp_path / "stride")).items
    item = next(i for i in items if item_kind(i) is Kind.JUDGED)
    output = ModelOutput("The car ahead brakes.")
    entry = ScoreInput(item, suite.parse(item, output), output)
    (shipped,) = _with_images(suite, [entry])
    assert shipped.images is not None
    here = suite.render(item)
    assert shipped.images == here and all(image.data for image in shipped.images)
    # On the worker no file of the run's exists: the images are the bytes that came along.
    moved = tuple(
        ImageRef("/nowhere/" + Path(i.path).name, i.sha256, i.mime, i.data) for i in shipped.images
    )
    actor = _Actor()
    (scored,) = score_batch(suite, [ScoreInput(item, entry.parsed, output, moved)], actor)
    assert scored.error is None and scored.score is not None
    assert scored.score.values["judge_score"] == 7.0
    (request,) = actor.seen
    asked = image_refs(request.messages)
    assert [i.digest() for i in asked] == [i.digest() for i in here]
    assert [image_size(i) for i in asked] == [image_size(i) for i in here]
    # Sent exactly as a judge asked about the files here would be.
    expected = judge_request(here, item.question, str(item.reference), output.text).messages
    assert encode_messages(request.messages) == encode_messages(expected)


def test_the_judge_actor_gets_the_s3_settings_and_credentials_resolved_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert store_environment(open_store("/tmp/a-folder-store")) == {}
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-example")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    settings = store_environment(open_store("s3://bucket/prefix"))
    assert settings == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "secret-example",
    }


def test_ray_addresses() -> None:
    for good in ("10.0.0.5:6379", "head.example:6379", "ray://head:10001"):
        assert ray_address_problem(good) is None, good
    for bad in ("head", "http://head:6379", "ray://head", ":6379", "head:0", "auto"):
        assert ray_address_problem(bad) is not None, bad


def test_inline_images_equal_their_references_and_send_their_bytes(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(b"png bytes")
    ref = ImageRef(str(path), "digest")
    carried = ref.inlined()
    assert carried == ref and carried.data == b"png bytes"
    path.unlink()
    assert carried.data_url() == "data:image/png;base64,cG5nIGJ5dGVz"
