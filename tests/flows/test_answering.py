"""When a run spreads its calls over answer processes: projected from its plans so far."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from roadeval.flows.stages.answer import AnswerSpread, StartingWorkers, planning_waves
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.freshness import now
from roadeval.tasks.shard.answer_workers import SPREAD_FROM, SPREAD_WARMED_FROM, processes_for


class _Planned:
    """A planned item as the spread reads it: whether its first request is answered."""

    def __init__(self, stored: bool) -> None:
        self.stored = stored

    def answered(self, index: int) -> bool:
        return self.stored and index == 0


def plan(items: int, stored: int, baseline: bool = False) -> Any:
    """A shard plan as the spread reads it: `stored` of its `items` answered by the store."""
    planned = [_Planned(n < stored) for n in range(items)]
    spec = SimpleNamespace(is_baseline=baseline)
    shard = SimpleNamespace(client=SimpleNamespace(spec=spec), copies=False)
    return SimpleNamespace(items=planned, shard=shard)


def spread(items: int) -> AnswerSpread:
    return AnswerSpread(None, lambda: [], StopSignal(), "run", now(), False, items)


def test_a_fresh_large_run_is_projected_from_its_first_plan() -> None:
    fresh = spread(4 * SPREAD_FROM)
    fresh.planned, fresh.requests = 500, 500
    assert fresh.projected_requests() == 4 * SPREAD_FROM
    half = spread(4 * SPREAD_FROM)
    half.planned, half.requests = 500, 250
    assert half.projected_requests() == 2 * SPREAD_FROM


def test_a_rerun_the_store_answers_never_starts_workers() -> None:
    rerun = spread(4 * SPREAD_FROM)
    for _ in range(8):
        assert rerun.workers_for(plan(500, stored=500)) is None
    assert rerun.projected_requests() == 0 and rerun.processes == 0
    assert rerun._starting is None


def test_baselines_do_not_count() -> None:
    offline = spread(0)
    assert offline.workers_for(plan(500, stored=0, baseline=True)) is None
    assert offline.planned == 0 and offline._starting is None


def test_a_reruns_copies_do_not_count_toward_its_calls() -> None:
    # A rerun of 20,000 items that asks 13 of them again: the copies' shard is not projected.
    rerun = spread(13)
    copies = plan(SPREAD_FROM * 4, stored=SPREAD_FROM * 4)
    copies.shard.copies = True
    assert rerun.workers_for(copies) is None and rerun.planned == 0
    assert rerun.workers_for(plan(13, stored=0)) is None
    assert rerun.projected_requests() == 13 and rerun._starting is None


def test_handing_out_a_shard_never_waits_for_the_workers_start() -> None:
    # The start is still under way (LiteLLM importing in the server): the loop that hands out
    # shards goes on at once, and the shard's own stage waits for the workers.
    rerun = spread(4 * SPREAD_FROM)
    starting: Future[Any] = Future()
    rerun._starting = starting
    handed: list[Any] = []
    loop = threading.Thread(
        target=lambda: handed.append(rerun.workers_for(plan(500, stored=0))), daemon=True
    )
    loop.start()
    loop.join(timeout=5)
    assert not loop.is_alive(), "the loop waited for the workers' start"
    (workers,) = handed
    assert isinstance(workers, StartingWorkers)
    answered = SimpleNamespace(processes=2, run=lambda plan, store, judge: "answered here")
    starting.set_result(answered)
    assert workers.run(plan(1, stored=0), None, None) == "answered here"  # type: ignore[arg-type]
    assert rerun.processes == 2


def _shard(suite: str, model: str, copies: bool) -> Any:
    spec = SimpleNamespace(label=model)
    return SimpleNamespace(
        suite=SimpleNamespace(name=suite), client=SimpleNamespace(spec=spec), copies=copies
    )


def test_a_reruns_copies_are_planned_once_the_shards_that_may_ask_are() -> None:
    # As `plan_shards` makes them: each suite x model's copies first, then its chunks to ask.
    shards = [
        _shard("trip", "a", True),
        _shard("trip", "a", False),
        _shard("trip", "b", True),
        _shard("trip", "b", False),
        _shard("trip", "b", False),
    ]
    # Those that ask in turn from each model (a's, b's, then b's second), then the copies.
    assert planning_waves(shards) == [[1, 3, 4], [0, 2]]
    assert planning_waves(shards[:1]) == [[0]]


def test_a_warmed_server_spreads_from_far_fewer_requests(monkeypatch: Any) -> None:
    # Each worker of a warmed server is a fork of it: two cores answer from 200 requests.
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert processes_for(None, SPREAD_WARMED_FROM, warmed=True) == 2
    assert processes_for(None, SPREAD_WARMED_FROM - 1, warmed=True) == 1
    assert processes_for(None, SPREAD_WARMED_FROM, warmed=False) == 0
    assert processes_for(None, SPREAD_FROM, warmed=False) == 2
    assert processes_for(1, SPREAD_FROM, warmed=True) == 0
