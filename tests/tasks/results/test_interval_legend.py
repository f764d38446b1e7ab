"""The line under a leaderboard that says what its intervals are, from the manifest's record:
per headline its method over its items or clusters, per task the methods and where each held,
a blind ablation's rows left out, and a manifest from before clusters read as it can be."""

from __future__ import annotations

from typing import Any

from roadeval.tasks.results.interval_legend import interval_legend
from roadeval.tasks.results.intervals import BOOTSTRAP, CLUSTERED, WILSON, IntervalSettings
from roadeval.tasks.results.manifest import HeadlineMethod, IntervalsRecord
from roadeval.tasks.results.uncertainty import intervals_record


def _record(*headlines: HeadlineMethod) -> IntervalsRecord:
    record = intervals_record(IntervalSettings(resamples=1000, seed=3))
    record.headlines = list(headlines)
    return record


def _method(task: str, metric: str, method: str, **more: Any) -> HeadlineMethod:
    return HeadlineMethod(suite="stride", task=task, metric=metric, method=method, **more)


def test_a_suite_with_clustered_and_independent_rows() -> None:
    scenes = {"clusters": 761, "items": 1150, "unit": "scenes"}
    record = _record(
        _method("*", "mcq_accuracy", CLUSTERED, **scenes),
        _method("*", "traj_ade", CLUSTERED, **scenes),
        _method("SP-1", "accuracy", WILSON, items=50),
        _method("SP-2", "accuracy", CLUSTERED, items=50, clusters=31, unit="scenes"),
        _method("TRJ-5", "ade", BOOTSTRAP, items=50),
        _method("*", "mcq_accuracy", CLUSTERED, variant="blind", items=9, clusters=3),
        HeadlineMethod(suite="trip", task="*", metric="accuracy", method=WILSON, items=9),
    )
    assert interval_legend(record, "stride") == (
        "[a, b]: 95% interval. mcq_accuracy, traj_ade: percentile bootstrap over 761 scenes "
        "(1,150 items, each scene's drawn together); accuracy per task: Wilson score interval "
        "(items independent) in SP-1; percentile bootstrap over the task's scenes in SP-2; "
        "ade per task: percentile bootstrap over items. Bootstrap: 1,000 resamples, seed 3."
    )
    assert interval_legend(record, "trip") == (
        "[a, b]: 95% interval. accuracy: Wilson score interval over 9 independent items."
    )
    assert interval_legend(record, "v2xqa") is None
    assert interval_legend(None, "stride") is None


def test_a_manifest_from_before_clusters_says_what_it_can() -> None:
    """Its methods name no items (and its per-task headlines the task '')."""
    record = _record(_method("*", "mcq_accuracy", WILSON), _method("", "ade", BOOTSTRAP))
    assert interval_legend(record, "stride") == (
        "[a, b]: 95% interval. mcq_accuracy: Wilson score interval (items independent); ade per "
        "task: percentile bootstrap over items. Bootstrap: 1,000 resamples, seed 3."
    )
