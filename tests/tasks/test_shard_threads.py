"""CPU work of a shard (building messages, scoring) stays off the gateway loop that every model
call shares."""

from __future__ import annotations

import threading
from pathlib import Path

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import Message, ParsedAnswer
from roadeval.benchmarks.trip.suite import TripSuite
from roadeval.storage.store import LocalStore
from roadeval.tasks.gateway import ModelClient
from roadeval.tasks.model_spec import ModelSpec
from roadeval.tasks.shard import Shard, run_shard


class ThreadRecordingTrip(TripSuite):
    """TRIP, noting the threads its items' messages are built and scored in."""

    def __init__(self) -> None:
        super().__init__()
        self.message_threads: set[str] = set()
        self.score_threads: set[str] = set()

    def messages(self, item: Item) -> list[Message]:
        self.message_threads.add(threading.current_thread().name)
        return super().messages(item)

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        self.score_threads.add(threading.current_thread().name)
        return super().score(item, parsed)


def test_messages_and_scores_are_computed_off_the_gateway_loop(tmp_path: Path) -> None:
    suite = ThreadRecordingTrip()
    items = suite.load(suite.generate_demo(tmp_path / "trip")).items[:5]
    client = ModelClient(ModelSpec(model="roadeval/always-a"))
    result = run_shard(Shard("run", 0, suite, client, items), LocalStore(tmp_path / "store"))
    assert len(result.scored) == 5 and result.counts["errors"] == 0
    assert suite.score_threads == {threading.current_thread().name}
    assert suite.message_threads and "roadeval-gateway" not in suite.message_threads
