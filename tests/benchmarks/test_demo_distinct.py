"""No two items of a demo suite send the same request: their prompts (the exact messages, each
image by the sha256 of the bytes sent) differ, so that the response cache, keyed by request, and
the offline baselines, whose answers are a function of the request, never mistake one demo item
for another. A point-cloud item's views are drawn by the render stage from its scan, so its scan
bytes stand for them here."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from roadeval.benchmarks.item import Item, MediaKind
from roadeval.benchmarks.messages import ImageRef, key_default
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import Suite

NAMES = ("trip", "roadbench", "tbbench", "v2xqa", "stride")


def shown(suite: Suite, item: Item) -> tuple[ImageRef, ...]:
    """The images the item's prompt shows; a point-cloud item's scans in place of their views."""
    if suite.draw_job(item) is None:
        return suite.render(item)
    scans = [m for m in item.media if m.kind is MediaKind.POINT_CLOUD]
    assert scans, item.item_id
    return tuple(ImageRef(m.path, m.sha256, "application/x-scan") for m in scans)


def prompt_digest(suite: Suite, item: Item) -> str:
    """The messages as a request key hashes them (an image by its type and sha256)."""
    messages = suite.prompt(item, shown(suite, item))
    return json.dumps(messages, sort_keys=True, ensure_ascii=False, default=key_default)


@pytest.mark.parametrize("name", NAMES)
def test_no_two_demo_items_send_the_same_prompt(
    name: str, tmp_path: Path, media_cache: Path
) -> None:
    suite = get_suite(name)
    items = suite.load(suite.generate_demo(tmp_path / name)).items
    assert len(items) > 1
    by_prompt: dict[str, list[str]] = defaultdict(list)
    for item in items:
        by_prompt[prompt_digest(suite, item)].append(f"{item.task}/{item.item_id}")
    same = [ids for ids in by_prompt.values() if len(ids) > 1]
    assert not same, f"{name}: items with identical prompts: {same}"
