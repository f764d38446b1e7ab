"""What STRIDE's metrics and labels mean to a reader (`StrideSuite.vocabulary`): MCQ accuracy,
the vision judge's 0-10 score (a judged metric: a placeholder judge's is marked so), waypoint
errors in metres, the counts the release prints, and the six task families in the paper's
order (its templates are named by their family: SP-3a is a space-perception template)."""

from __future__ import annotations

from roadeval.benchmarks.vocabulary import (
    COUNT,
    JUDGE_POINTS,
    METRES,
    SHARE,
    Better,
    LabelInfo,
    MetricInfo,
    Vocabulary,
)

FAMILIES = {
    "SC": "scene context",
    "SP": "space perception",
    "SU": "space understanding",
    "TE": "time extrapolation",
    "TM": "time memory",
    "TRJ": "trajectory prediction",
}


def _metres(name: str, label: str, what: str) -> MetricInfo:
    return MetricInfo(name, label, f"{what} (metres)", Better.LOWER, METRES)


def _count(name: str, label: str, what: str) -> MetricInfo:
    return MetricInfo(name, label, what, None, COUNT)


VOCABULARY = Vocabulary(
    metrics=(
        MetricInfo(
            "mcq_accuracy",
            "MCQ accuracy",
            "share of multiple-choice items answered right (micro-average)",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "accuracy",
            "MCQ accuracy",
            "share of the template's multiple-choice items answered right",
            Better.HIGHER,
            SHARE,
        ),
        MetricInfo(
            "correct",
            "MCQ items right",
            "multiple-choice items answered right (a count per template; a share in slices)",
            Better.HIGHER,
            COUNT,
        ),
        MetricInfo(
            "judge_score",
            "judge score",
            "the vision judge's 0-10 grade of open answers, mean over the judged items",
            Better.HIGHER,
            JUDGE_POINTS,
            judged=True,
        ),
        _metres("traj_ade", "trajectory ADE", "mean distance between predicted and true waypoints"),
        _metres("traj_fde", "trajectory FDE", "distance at the last compared waypoint"),
        _metres(
            "traj_min_fde",
            "trajectory min-FDE",
            "smallest distance from the last predicted point to the true ones",
        ),
        _metres("ade", "ADE", "mean distance between predicted and true waypoints"),
        _metres("fde", "FDE", "distance at the last compared waypoint"),
        _metres(
            "min_fde", "min-FDE", "smallest distance from the last predicted point to the true ones"
        ),
        MetricInfo(
            "mcq_random_baseline",
            "MCQ chance accuracy",
            "mean of 1 / options: what guessing scores",
            None,
            SHARE,
        ),
        MetricInfo(
            "random_baseline",
            "chance accuracy",
            "mean of 1 / options: what guessing scores",
            None,
            SHARE,
        ),
        _count("mcq_correct", "MCQ items right", "multiple-choice items answered right"),
        _count(
            "mcq_unparsed", "MCQ answers unread", "multiple-choice replies with no letter (wrong)"
        ),
        _count(
            "mcq_not_an_option",
            "MCQ answers not an option",
            "replies whose letter is not an option (wrong)",
        ),
        _count("unparsed", "answers unread", "replies with no letter (wrong)"),
        _count(
            "not_an_option",
            "answers not an option",
            "replies whose letter is not an option (wrong)",
        ),
        _count("traj_parsed", "trajectories read", "trajectory replies whose waypoints were read"),
        _count(
            "traj_parse_failures",
            "trajectories unread",
            "trajectory replies scored as staying at the origin",
        ),
        _count("parsed", "trajectories read", "trajectory replies whose waypoints were read"),
        _count(
            "parse_failures",
            "trajectories unread",
            "trajectory replies scored as staying at the origin",
        ),
        _count("judge_scored", "judged", "open answers the judge scored"),
        _count(
            "judge_unscored", "judge unreadable", "open answers whose verdict could not be read"
        ),
        _count("judge_unanswered", "unanswered", "open items with no answer to judge"),
        _count("unanswered", "unanswered", "open items with no answer to judge"),
        _count("not_judged", "not judged", "open items outside the release's judged templates"),
    ),
    task_groups=FAMILIES,
    labels={
        "family": LabelInfo(
            "task family", tuple(name.replace(" ", "-") for name in FAMILIES.values())
        ),
        "split": LabelInfo(
            "split", ("nuscenes", "waymo"), {"nuscenes": "nuScenes v6", "waymo": "Waymo E2E v1"}
        ),
        "scenario": LabelInfo("scenario"),
    },
)
