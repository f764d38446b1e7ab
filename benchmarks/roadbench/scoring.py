"""Per-item values and the official per-task summaries, from the metric scripts' view of each
item (`Outcome`); the suite and the prediction-file scorer share these functions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from roadeval.benchmarks.roadbench.metrics_counting import rmse, weighted_scores
from roadeval.benchmarks.roadbench.metrics_lanes import (
    LaneComparison,
    add_comparisons,
    compare_lanes,
    hamming_loss,
    lane_exact_match,
)
from roadeval.benchmarks.roadbench.metrics_network import network_metric_names, score_network
from roadeval.benchmarks.roadbench.outcomes import Outcome
from roadeval.benchmarks.roadbench.tasks import (
    LANE_ALPHABETS,
    LANE_COUNTING_TASKS,
    LANE_DESIGNATION_TASKS,
    ROADNET_TASK,
)

ERROR_VALUE = "release_error"


def count_values(truth: int, result: Outcome) -> dict[str, float]:
    predicted = float(result.value)
    return {
        "correct": float(predicted == truth),
        "abs_error": abs(predicted - truth),
        "squared_error": (predicted - truth) ** 2,
    }


def designation_values(task: str, truth: list[str], result: Outcome) -> dict[str, float]:
    comparison = compare_lanes(result.value, truth, LANE_ALPHABETS[task])
    return {
        "hamming_loss": hamming_loss(comparison, LANE_ALPHABETS[task]),
        "lane_exact_match": lane_exact_match(comparison),
        "exact_match": float(comparison.lanes > 0 and comparison.exact_lanes == comparison.lanes),
        "lanes": float(comparison.lanes),
    }


def item_values(
    task: str, truth: Any, result: Outcome, image_size: Sequence[int] | None = None
) -> tuple[dict[str, float], str | None]:
    """Per-item metric values (plus `release_error`) and any anomaly found while scoring."""
    anomaly = result.anomaly
    # The release counts an error for a bad answer, a crash and a dropped item alike.
    error = result.error or anomaly is not None
    if task in LANE_COUNTING_TASKS:
        values = count_values(truth, result)
    elif task in LANE_DESIGNATION_TASKS:
        values = designation_values(task, truth, result)
    elif task == ROADNET_TASK:
        if image_size is None:
            raise ValueError("task 3 needs the image size")
        width, height = image_size
        network = score_network(result.value, truth, width, height)
        values = dict(network.values)
        anomaly = anomaly or network.anomaly
        error = error or network.dropped
    else:
        values = {"correct": float(result.value == truth)}
    values[ERROR_VALUE] = float(error)
    return values, anomaly


def summarize_counts(truths: Sequence[Any], results: Sequence[Outcome]) -> dict[str, float]:
    """Tasks 1 and 4: support-weighted precision, recall, F1 and RMSE over all items."""
    predicted = [result.value for result in results]
    scores = weighted_scores(truths, predicted)
    return {
        "f1": scores.f1,
        "precision": scores.precision,
        "recall": scores.recall,
        "rmse": rmse([float(t) for t in truths], [float(p) for p in predicted]),
    }


def summarize_designations(
    task: str, truths: Sequence[list[str]], results: Sequence[Outcome]
) -> dict[str, float]:
    """Tasks 2 and 5: Hamming loss and exact match pooled over all lanes of all items."""
    alphabet = LANE_ALPHABETS[task]
    parts: list[LaneComparison] = [
        compare_lanes(result.value, truth, alphabet)
        for truth, result in zip(truths, results, strict=True)
    ]
    total = add_comparisons(parts)
    return {
        "hamming_loss": hamming_loss(total, alphabet),
        "exact_match": lane_exact_match(total),
        "lanes": float(total.lanes),
    }


def summarize_road_types(truths: Sequence[str], results: Sequence[Outcome]) -> dict[str, float]:
    """Task 6: accuracy, support-weighted recall and F1 ("unknown" is a class of its own)."""
    scores = weighted_scores(list(truths), [result.value for result in results])
    return {"accuracy": scores.accuracy, "recall": scores.recall, "f1": scores.f1}


def summarize_network(per_item: Sequence[dict[str, float]]) -> dict[str, float]:
    """Task 3: each per-item value averaged over items, per theta."""
    return {
        name: float(np.mean([values[name] for values in per_item]))
        for name in network_metric_names()
    }


def summarize_task(
    task: str,
    truths: Sequence[Any],
    results: Sequence[Outcome],
    per_item: Sequence[dict[str, float]],
) -> dict[str, float]:
    """The official metrics of one task, plus `items` and `errors` (the release's error_cnt)."""
    if not results:
        return {}
    if task in LANE_COUNTING_TASKS:
        metrics = summarize_counts(truths, results)
    elif task in LANE_DESIGNATION_TASKS:
        metrics = summarize_designations(task, truths, results)
    elif task == ROADNET_TASK:
        metrics = summarize_network(per_item)
    else:
        metrics = summarize_road_types(truths, results)
    metrics["items"] = float(len(results))
    metrics["errors"] = float(sum(values[ERROR_VALUE] for values in per_item))
    return metrics
