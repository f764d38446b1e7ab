"""What RoadBench's metrics, tasks and labels mean to a reader (`RoadBenchSuite.vocabulary`):
the release's metric scripts' numbers per task, the six released tasks by name, and the capture
conditions of tasks 4 and 5 in English."""

from __future__ import annotations

from roadeval.benchmarks.roadbench.tasks import THETAS
from roadeval.benchmarks.vocabulary import (
    COUNT,
    IMAGE_FRACTION,
    LANES,
    SHARE,
    Better,
    LabelInfo,
    MetricInfo,
    Vocabulary,
    fraction_metrics,
)

_ROADNET = (
    *fraction_metrics(
        "buffer_f1",
        THETAS,
        "buffer F1",
        "F1 of the predicted and true road networks buffered by {theta} of the image size "
        "(2 IoU / (1 + IoU)), mean over images",
        Better.HIGHER,
        SHARE,
    ),
    *fraction_metrics(
        "junction_recall",
        THETAS,
        "junction recall",
        "share of the true junctions matched within {theta} of the image size",
        Better.HIGHER,
        SHARE,
    ),
    *fraction_metrics(
        "junction_rmse",
        THETAS,
        "junction RMSE",
        "RMSE of the junction positions, unmatched ones at {theta} (fraction of the image size)",
        Better.LOWER,
        IMAGE_FRACTION,
    ),
    *fraction_metrics(
        "line_frechet",
        THETAS,
        "line Fréchet",
        "discrete Fréchet distance of matched lines capped at {theta}, unmatched ones at "
        "{theta} (fraction of the image size)",
        Better.LOWER,
        IMAGE_FRACTION,
    ),
)

VOCABULARY = Vocabulary(
    metrics=(
        MetricInfo(
            "f1",
            "F1",
            "F1 over the answer classes (lane counts in tasks 1 and 4, road types in task 6), "
            "weighted by each class's support",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "precision",
            "precision",
            "precision over the classes, support-weighted",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "recall", "recall", "recall over the classes, support-weighted", Better.HIGHER, SHARE
        ),
        MetricInfo(
            "accuracy", "accuracy", "share of images whose road type is right", Better.HIGHER, SHARE
        ),
        MetricInfo("correct", "accuracy", "share of items answered right", Better.HIGHER, SHARE),
        MetricInfo(
            "rmse",
            "lane-count RMSE",
            "root mean squared error of the lane count",
            Better.LOWER,
            LANES,
        ),
        MetricInfo(
            "abs_error", "lane-count error", "absolute error of the lane count", Better.LOWER, LANES
        ),
        MetricInfo(
            "exact_match",
            "lane exact match",
            "share of lanes (over all items) whose every direction is right",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "lane_exact_match",
            "lane exact match (per item)",
            "share of an item's lanes whose every direction is right",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "hamming_loss",
            "Hamming loss",
            "share of lane x direction bits that are wrong",
            Better.LOWER,
            SHARE,
        ),
        MetricInfo(
            "release_error",
            "release errors",
            "share of items the release's scripts count as errors (a bad or missing answer)",
            Better.LOWER,
            SHARE,
        ),
        MetricInfo(
            "errors", "release errors", "items the release's scripts count as errors", None, COUNT
        ),
        MetricInfo("items", "items", "items scored", None, COUNT),
        MetricInfo("lanes", "lanes", "lanes compared (tasks 2 and 5)", None, COUNT),
        *_ROADNET,
    ),
    tasks={
        "1": "BEV lane counting",
        "2": "BEV lane designation",
        "3": "BEV road-network correction",
        "4": "FPV lane counting",
        "5": "FPV lane designation",
        "6": "FPV road type",
    },
    labels={
        "condition": LabelInfo(
            "capture condition",
            ("none",),
            {
                "none": "no special condition",
                "光照不佳": "poor lighting",
                "地面标识遮盖": "road markings occluded",
            },
        )
    },
)
