"""CPU work of a shard (rendering, building prompts, scoring) stays off the gateway loop that
every model call shares."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import ImageRef, Message
from roadeval.benchmarks.suite import ParsedAnswer
from roadeval.benchmarks.trip.suite import TripSuite
from roadeval.storage.store import LocalStore
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.render.stage import render_items
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.plan import Shard, plan_shard
from roadeval.tasks.shard.stages import run_shard


class ThreadRecordingTrip(TripSuite):
    """TRIP, noting the threads its items are rendered, prompted and scored in."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: dict[str, set[str]] = {"render": set(), "prompt": set(), "score": set()}

    def _note(self, stage: str) -> None:
        self.threads[stage].add(threading.current_thread().name)

    def render(self, item: Item) -> tuple[ImageRef, ...]:
        self._note("render")
        return super().render(item)

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        self._note("prompt")
        return super().prompt(item, images)

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        self._note("score")
        return super().score(item, parsed)


def test_renders_prompts_and_scores_are_computed_off_the_gateway_loop(tmp_path: Path) -> None:
    suite = ThreadRecordingTrip()
    items = suite.load(suite.generate_demo(tmp_path / "trip")).items[:5]
    client = ModelClient(ModelSpec(model="roadeval/always-a"))
    store = LocalStore(tmp_path / "store")
    shard = Shard("run", 0, suite, client, items)
    plan = plan_shard(shard, render_items(suite, items).renders, ResponseCache(store))
    result = run_shard(plan, store)
    assert len(result.scored) == 5 and result.counts["errors"] == 0
    for stage, threads in suite.threads.items():
        assert threads and "roadeval-gateway" not in threads, (stage, threads)
