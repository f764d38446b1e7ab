"""Which engine scores a run's heavy items: what the panel says when it says it (a cluster by
address, `engine: ray`, `engine: local`); by default a local Ray only when the estimated work
pays for its start (`RAY_START_S`), and the reason the manifest records."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.suite import TASK3_ITEM_S, TASK3_VERTEX_S
from roadeval.tasks.shard.remote_scoring import ScoringConfig, ScoringEngine
from roadeval.tasks.shard.scoring_choice import RAY_START_S, HeavyWork, choose_scoring

RAY, LOCAL = ScoringEngine.RAY, ScoringEngine.LOCAL


def _item(item_id: str, task: str, reference: Any) -> Item:
    return Item(
        suite="roadbench",
        suite_version="1",
        item_id=item_id,
        task=task,
        question="?",
        answer_kind=AnswerKind.YAML,
        reference=reference,
    )


def _task3(n: int, vertices: int) -> Item:
    line = "LINESTRING (" + ", ".join(f"{v} {v}" for v in range(vertices)) + ")"
    return _item(f"i{n}", "3", {"lines": [line], "junctions": []})


def test_what_the_panel_names_is_obeyed_whatever_the_work() -> None:
    tiny, huge = HeavyWork(1, 0.001), HeavyWork(10**6, 10**4)
    assert choose_scoring(ScoringConfig(engine=RAY), tiny).engine is RAY
    given = choose_scoring(ScoringConfig(address="10.0.0.6:6379"), tiny)
    assert (given.engine, given.address) == (RAY, "10.0.0.6:6379")
    assert choose_scoring(ScoringConfig(engine=LOCAL), huge).engine is LOCAL


def test_by_default_a_local_ray_starts_only_when_the_work_pays_for_it() -> None:
    config = ScoringConfig()
    assert config.engine is ScoringEngine.AUTO
    none = choose_scoring(config, HeavyWork(0, 0.0), cpus=2)
    assert (none.engine, none.reason) == (LOCAL, "no heavy items to score")
    # On 2 CPUs Ray saves at most half the CPU time: it pays past twice its start.
    small = choose_scoring(config, HeavyWork(7, 2 * RAY_START_S - 0.1), cpus=2)
    assert small.engine is LOCAL
    assert small.reason.startswith("7 heavy items, about 13.9 CPU s to score: a local Ray on 2")
    large = choose_scoring(config, HeavyWork(9000, 2 * RAY_START_S + 0.1), cpus=2)
    assert large.engine is RAY and "saves up to 7.0 s" in large.reason
    # One CPU: Ray cannot spread anything, so it never pays.
    assert choose_scoring(config, HeavyWork(10**6, 10**4), cpus=1).engine is LOCAL
    # `num_cpus` is the local Ray's size, whatever the machine's.
    assert (
        choose_scoring(ScoringConfig(num_cpus=1), HeavyWork(10**6, 10**4), cpus=8).engine is LOCAL
    )


def test_the_estimate_counts_heavy_items_of_shards_that_score_not_a_reruns_copies() -> None:
    suite = get_suite("roadbench")
    items = [_task3(0, 2), _task3(1, 30)]
    light = _item("l", "1", 3)

    def shard(chosen: list[Item], copies: bool = False) -> Any:
        return SimpleNamespace(suite=suite, items=chosen, copies=copies)

    work = HeavyWork.of([shard([*items, light]), shard([_task3(2, 500)], copies=True)])
    assert work.items == 2
    expected = 2 * TASK3_ITEM_S + 32 * TASK3_VERTEX_S
    assert abs(work.cpu_s - expected) < 1e-12
