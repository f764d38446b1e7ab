"""What V2X-QA's metrics, tasks and labels mean to a reader (`V2XQASuite.vocabulary`): accuracy
(a fraction; the release prints percent), its calibration figures, the twelve tasks by the
release's names, the three viewpoints spelled out."""

from __future__ import annotations

from roadeval.benchmarks.v2xqa.tasks import TASKS, Family, View
from roadeval.benchmarks.vocabulary import (
    BRIER,
    COUNT,
    SHARE,
    Better,
    LabelInfo,
    MetricInfo,
    Vocabulary,
)

VOCABULARY = Vocabulary(
    metrics=(
        MetricInfo(
            "accuracy",
            "accuracy",
            "share of questions answered with the gold letter",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "correct",
            "accuracy",
            "share of the slice's questions answered right",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "ece",
            "ECE",
            "expected calibration error: |accuracy - confidence| over 12 equal confidence bins, "
            "weighted by their items (items with a confidence only)",
            Better.LOWER,
            SHARE,
        ),
        MetricInfo(
            "brier",
            "Brier score",
            "squared error of the four letter probabilities against the gold (0-2; items with "
            "a confidence only)",
            Better.LOWER,
            BRIER,
        ),
        MetricInfo(
            "confidence_items",
            "items with a confidence",
            "items whose reply came with letter probabilities",
            None,
            COUNT,
        ),
        MetricInfo(
            "no_confidence_items",
            "items without a confidence",
            "items whose reply came without letter probabilities",
            None,
            COUNT,
        ),
        MetricInfo(
            "letters_seen_lt4",
            "confidences over fewer than 4 letters",
            "items whose confidence rests on fewer than four letters' probabilities",
            None,
            COUNT,
        ),
        MetricInfo("unparsed_count", "unread answers", "replies with no letter A-D", None, COUNT),
    ),
    tasks={spec.task_id: spec.name for spec in TASKS},
    labels={
        "view": LabelInfo(
            "view",
            tuple(View),
            {View.VS: "vehicle side", View.IS: "infrastructure side", View.CO: "cooperative"},
        ),
        "family": LabelInfo("task family", tuple(Family)),
        "question_id": LabelInfo("question"),
    },
)
