"""TRIP's one prompt for every modality: question, options "A. ...", and a one-letter answer.

The paper states the protocol (one core prompt for text, image and point-cloud items, only a note
added for attached visuals, output limited to one letter A/B/C/D) but publishes no prompt text, and
there is no release to copy it from. The wording below is therefore ours; it is versioned by
PROMPT_VERSION so any change to it misses the response cache and shows in the run manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from roadeval.benchmarks.item import Item, MediaKind
from roadeval.benchmarks.messages import ImageRef, Message, user_message
from roadeval.benchmarks.trip.taxonomy import IMAGE_MIME_TYPES, LETTERS, Modality

PROMPT_VERSION = "trip-v1"

_HEADER = (
    "The following is a single-choice question about transportation. "
    "Exactly one of the options A, B, C, D is correct."
)
# The only modality-dependent text: one sentence saying what the attached visuals are.
_VISUAL_NOTE: dict[Modality, str] = {
    Modality.TEXT: "",
    Modality.IMAGE: "The attached image is part of the question.",
    Modality.POINT_CLOUD: (
        "The two attached images are renderings of one point cloud: "
        "a bird's-eye view (BEV) first, then a front view."
    ),
}
_INSTRUCTION = "Output only one letter from A/B/C/D, with no other text."


def prompt_text(item: Item) -> str:
    """The user text for an item; identical for every modality except the visual note."""
    note = _VISUAL_NOTE[Modality(item.labels["modality"])]
    options = "\n".join(f"{letter}. {item.options[letter]}" for letter in LETTERS)
    blocks = [_HEADER, note, f"Question: {item.question}", options, _INSTRUCTION]
    return "\n\n".join(block for block in blocks if block)


def shown_images(item: Item) -> tuple[ImageRef, ...]:
    """The item's images in media order (a point-cloud item's two renders), typed by suffix."""
    renders = sorted(
        (media for media in item.media if media.kind is MediaKind.IMAGE),
        key=lambda media: media.index if media.index is not None else 0,
    )
    return tuple(
        ImageRef(m.path, m.sha256, IMAGE_MIME_TYPES[Path(m.path).suffix.lower()]) for m in renders
    )


def build_messages(item: Item, images: Sequence[ImageRef]) -> list[Message]:
    """One user turn: the item's images first, then the prompt text."""
    return [user_message(prompt_text(item), images)]
