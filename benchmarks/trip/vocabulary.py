"""What TRIP-Evaluate's metrics and labels mean to a reader (`TripSuite.vocabulary`): the
paper's accuracy and its two structural penalties (a smaller gap is a steadier model), and its
labels in the paper's order."""

from __future__ import annotations

from roadeval.benchmarks.trip.taxonomy import CAPABILITIES, DIFFICULTIES, ROLES, TASK, Modality
from roadeval.benchmarks.vocabulary import (
    COUNT,
    GAP,
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
            "share of items answered with the gold letter",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "correct",
            "accuracy",
            "share of the slice's items answered with the gold letter",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "modality_penalty",
            "modality penalty",
            "text accuracy minus the accuracy of the worst non-text modality (image, point "
            "cloud): how much a model loses when it must read a picture or a scan",
            Better.LOWER,
            GAP,
        ),
        MetricInfo(
            "difficulty_penalty",
            "difficulty penalty",
            "easy accuracy minus hard accuracy: how much a model loses as the reasoning chain "
            "grows (the paper's cross-difficulty penalty)",
            Better.LOWER,
            GAP,
        ),
        MetricInfo(
            "abnormal_rate",
            "abnormal answer rate",
            "share of replies that were not one letter A-D (read by the abnormal-output rule)",
            Better.LOWER,
            SHARE,
        ),
        MetricInfo(
            "abnormal_count",
            "abnormal answers",
            "replies that were not one letter A-D (items)",
            None,
            COUNT,
        ),
    ),
    tasks={TASK: "single-choice question (A-D)"},
    labels={
        "role": LabelInfo("role", ROLES),
        "capability": LabelInfo("capability", CAPABILITIES),
        "difficulty": LabelInfo("difficulty", DIFFICULTIES),
        "modality": LabelInfo("modality", tuple(m.value for m in Modality)),
        "subject": LabelInfo("subject"),
        "knowledge_point": LabelInfo("knowledge point"),
    },
)
