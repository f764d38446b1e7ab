"""Item images: each file read once, checked to be a readable image, and sized from its header."""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.errors import ItemError, ItemProblem
from roadeval.benchmarks.image_check import NotAnImageError, image_media
from roadeval.benchmarks.item import Media, MediaKind

# The label rows name no image field (the file is `<id>.png`, or task 6's `img`): errors about
# the image itself are reported under this name.
IMAGE_FIELD = "image"


def checked_image(
    image: Path, view: str, labels: Path, line: int | None, item_id: str | None
) -> tuple[Media, tuple[int, int]]:
    """The image's media and (width, height); a missing or unreadable image is an ItemError
    naming the label file, the line, the item and the field `image`."""
    try:
        media, info = image_media(MediaKind.IMAGE, image, role=view)
    except NotAnImageError as exc:
        raise ItemError(ItemProblem(str(labels), line, IMAGE_FIELD, str(exc), item_id)) from None
    return media, info.size
