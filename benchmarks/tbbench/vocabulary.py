"""What TB-Bench's metrics, tasks and labels mean to a reader (`TBBenchSuite.vocabulary`):
accuracies in percent as the release prints them, and each task's code spelled out by its
dataset name."""

from __future__ import annotations

from roadeval.benchmarks.tbbench.tasks import TASKS
from roadeval.benchmarks.vocabulary import (
    PERCENT,
    SHARE,
    Better,
    LabelInfo,
    MetricInfo,
    Vocabulary,
)

VOCABULARY = Vocabulary(
    metrics=(
        MetricInfo(
            "mean_accuracy",
            "mean accuracy (%)",
            "the unweighted mean of the eight tasks' accuracies, in percent (the release's "
            "overall score)",
            Better.HIGHER,
            PERCENT,
        ),
        MetricInfo(
            "accuracy",
            "accuracy (%)",
            "share of the task's items answered right, in percent",
            Better.HIGHER,
            PERCENT,
        ),
        MetricInfo(
            "correct",
            "accuracy",
            "share of the slice's items answered right (0-1)",
            Better.HIGHER,
            SHARE,
        ),
    ),
    tasks={spec.code: spec.release_name.replace("_", " ") for spec in TASKS},
    labels={
        "gold_kind": LabelInfo(
            "kind of answer",
            ("class", "distance", "angle"),
            {
                "class": "a category",
                "distance": "a distance in metres",
                "angle": "an angle in degrees",
            },
        )
    },
)
