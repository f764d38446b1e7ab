"""TRIP-Evaluate's vocabulary: answer letters, label fields, and the values the paper defines.

TRIP-Evaluate has no public release, so the item file format is ours, built from the item fields the
paper lists (see BENCHMARKS.md); the names here are the single place that format is spelled out.
"""

from __future__ import annotations

from enum import StrEnum

# The suite's name (`TripSuite.name`), spelled out here only.
SUITE_NAME = "trip"
# TRIP has one task: every item is a four-option single-choice question.
TASK = "mcq"
ITEMS_FILE = "items.jsonl"
# Optional first line of this file names the suite version; otherwise the items file's hash does.
VERSION_FILE = "VERSION"

LETTERS: tuple[str, ...] = ("A", "B", "C", "D")


class Modality(StrEnum):
    """What the item shows besides its text; decides the attached media and the prompt's note."""

    TEXT = "text"
    IMAGE = "image"
    POINT_CLOUD = "point cloud"


# Spellings accepted in the `modality` field (after lower-casing and trimming).
MODALITY_SPELLINGS: dict[str, Modality] = {
    "text": Modality.TEXT,
    "text-only": Modality.TEXT,
    "text only": Modality.TEXT,
    "image": Modality.IMAGE,
    "point cloud": Modality.POINT_CLOUD,
    "point_cloud": Modality.POINT_CLOUD,
    "point-cloud": Modality.POINT_CLOUD,
    "pointcloud": Modality.POINT_CLOUD,
}

DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")

# The paper's four roles and four capabilities. The loader accepts any non-empty tag (a release may
# extend the taxonomy); the quality checks flag values outside these lists.
ROLES: tuple[str, ...] = ("vehicle", "traffic management", "traveler", "planning-and-design")
CAPABILITIES: tuple[str, ...] = (
    "knowledge memory",
    "logical reasoning",
    "numerical calculation",
    "scene semantic understanding",
)

# Item label name -> the JSONL field it comes from; these six labels slice accuracy.
LABEL_FIELDS: dict[str, str] = {
    "role": "role_tag",
    "subject": "subject_tag",
    "knowledge_point": "knowledge_point",
    "capability": "capability_tag",
    "difficulty": "difficulty",
    "modality": "modality",
}

# Every field an item row may carry: the paper's item fields plus the media file references.
# Anything else in a row is counted as an unknown field at load.
ROW_FIELDS: frozenset[str] = frozenset(
    {
        "id",
        "question",
        *LETTERS,
        "answer",
        "explanation",
        *LABEL_FIELDS.values(),
        "image",
        "bev_image",
        "front_image",
        "point_cloud",
    }
)

# Media roles of a point-cloud item: the paper shows each as two deterministic renders, in order.
BEV_ROLE = "bev"
FRONT_ROLE = "front"
POINT_CLOUD_ROLE = "source"

IMAGE_MIME_TYPES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
}
