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
