"""A shard whose landing the store refuses stops the run where it fails, before the shard's
error reaches the run: no model request starts in between."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from roadeval.benchmarks.trip.suite import TripSuite
from roadeval.storage.store import LocalStore, StoreError
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.render.stage import render_items
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.plan import Shard, plan_shard
from roadeval.tasks.shard.stages import run_shard


class FullForTables(LocalStore):
    """A folder whose disk has no room left for a landing's Parquet parts."""

    def put(self, key: str, data: bytes) -> None:
        if key.startswith("tables/"):
            raise OSError(errno.ENOSPC, "No space left on device")
        super().put(key, data)


def test_a_shard_that_cannot_land_stops_the_run_at_once(tmp_path: Path) -> None:
    suite = TripSuite()
    items = suite.load(suite.generate_demo(tmp_path / "trip")).items[:5]
    client = ModelClient(ModelSpec(model="roadeval/always-a"), stop=StopSignal())
    store = FullForTables(tmp_path / "store")
    plan = plan_shard(
        Shard("run", 0, suite, client, items),
        render_items(suite, items).renders,
        ResponseCache(store),
    )
    with pytest.raises(StoreError, match="No space left on device"):
        run_shard(plan, store)
    reason = client.stop.reason
    assert reason is not None and reason.status == "failed"
    assert f"store {store.uri}: No space left on device" in reason.message
