"""STRIDE's tasks (the release's question templates): their ids and what the release does with
each: MCQ accuracy, waypoint metrics for TRJ-5 / TRJ-6, and the vision judge for the open
templates of each split (`stride/bleurt.py`)."""

from __future__ import annotations

from enum import StrEnum

# The suite's name (`StrideSuite.name`), spelled out here only.
SUITE_NAME = "stride"


class Split(StrEnum):
    NUSCENES = "nuscenes"
    WAYMO = "waymo"


class Kind(StrEnum):
    """How an item is scored."""

    MCQ = "mcq"  # accuracy over the parsed option letter
    TRAJECTORY = "trajectory"  # ADE / FDE / min-FDE over parsed waypoints
    JUDGED = "judged"  # the vision judge's 0-10 score
    # An open question outside the release's judged set: loaded and asked, never scored.
    OPEN_UNJUDGED = "open-unjudged"


QUESTION_FORMATS = ("MCQ", "OEQ")
SCORING_TYPES = ("mcq", "open_oeq_text", "trajectory_waypoints")
# Waypoint templates and the point count each asks for (`expected_point_count`: 5 for TRJ-5,
# 4 otherwise).
TRAJECTORY_POINTS: dict[str, int] = {"TRJ-5": 5, "TRJ-6": 4}
# The release's default open-OEQ sets (`NUSCENES_OPEN_OEQ_IDS`, `WAYMO_OPEN_OEQ_IDS`).
JUDGED_TEMPLATES: dict[Split, frozenset[str]] = {
    Split.NUSCENES: frozenset({"SC-6", "SP-7", "SU-7", "TE-6", "TRJ-7"}),
    Split.WAYMO: frozenset({"SC-4", "SP-3a", "TRJ-7", "TRJ-9"}),
}
# The scene-overview template: every grid of the scene instead of the group's five frames.
SCENE_OVERVIEW = "SC-6"
SCENE_OVERVIEW_MAX_FRAMES = 8


def expected_points(template: str) -> int:
    """How many waypoints the parser prefers for a template (the release: 5 for TRJ-5, else 4)."""
    return 5 if template == "TRJ-5" else 4


def item_kind(template: str, question_format: str, split: Split) -> Kind:
    """The release's routing: MCQ by format; waypoints for OEQ TRJ-5/6; the judge for the split's
    open templates."""
    if question_format == "MCQ":
        return Kind.MCQ
    if template in TRAJECTORY_POINTS:
        return Kind.TRAJECTORY
    if template in JUDGED_TEMPLATES[split]:
        return Kind.JUDGED
    return Kind.OPEN_UNJUDGED


def family_of(template: str) -> str:
    """The template's family code (SP-3a -> SP, TRJ-10 -> TRJ), for rows without `task`."""
    return template.split("-", 1)[0]


# Each split's templates, as its release's `meta.counts_by_template` lists them (nuScenes v6:
# 23, Waymo v1: 24; the paper's catalogue has 39, not all in either split).
TEMPLATES: dict[Split, frozenset[str]] = {
    Split.NUSCENES: frozenset(
        {
            "SC-6", "SP-1", "SP-2", "SP-3", "SP-5", "SP-7", "SU-1", "SU-2", "SU-4", "SU-7",
            "TE-1", "TE-6", "TM-2", "TM-3", "TM-4", "TM-5",
            "TRJ-1", "TRJ-2", "TRJ-3", "TRJ-4", "TRJ-5", "TRJ-6", "TRJ-7",
        }
    ),
    Split.WAYMO: frozenset(
        {
            "SC-1", "SC-2", "SC-3", "SC-4", "SP-2", "SP-3", "SP-3a",
            "TE-1", "TE-2", "TE-4", "TE-5", "TM-2", "TM-3", "TM-5",
            "TRJ-1", "TRJ-2", "TRJ-3", "TRJ-4", "TRJ-5", "TRJ-6", "TRJ-7", "TRJ-8", "TRJ-9",
            "TRJ-10",
        }
    ),
}  # fmt: skip
# The family (a row's `task`) each template code names, per split: SC is nuScenes' scene
# context but Waymo's scenario corner cases (the releases' `counts_by_task_family`).
_FAMILIES = {
    "SP": "space-perception",
    "SU": "space-understanding",
    "TE": "time-extrapolation",
    "TM": "time-memory",
    "TRJ": "trajectory-prediction",
}
FAMILIES: dict[Split, dict[str, str]] = {
    Split.NUSCENES: {**_FAMILIES, "SC": "scene-context"},
    Split.WAYMO: {**_FAMILIES, "SC": "scenario-corner-case"},
}
