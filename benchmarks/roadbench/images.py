"""Item images: the release's file name for each label row, and the size read from the file."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, UnidentifiedImageError

from roadeval.benchmarks.errors import ItemError, ItemProblem


def image_size(image: Path, labels: Path, line: int | None, item_id: str | None) -> tuple[int, int]:
    """(width, height) from the image header; a missing or unreadable image is an ItemError
    naming the label file, the line and the field `image`."""
    try:
        with Image.open(image) as opened:
            return opened.size
    except FileNotFoundError:
        message = f"image file {image} does not exist"
    except (UnidentifiedImageError, OSError) as exc:
        message = f"image file {image} is not a readable image: {exc}"
    raise ItemError(ItemProblem(str(labels), line, "image", message, item_id))
