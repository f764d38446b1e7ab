"""Finding a row's images under the two roots as the release does (`<id>` + the first of its
extensions that exists), checking and hashing them; a missing one is an error, not a drop."""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.errors import ItemError, ItemProblem
from roadeval.benchmarks.image_check import NotAnImageError, image_media
from roadeval.benchmarks.item import Media, MediaKind
from roadeval.benchmarks.loading import is_file
from roadeval.benchmarks.v2xqa.rows import AnnotationRow
from roadeval.benchmarks.v2xqa.tasks import VIEW_IMAGES, ImageSide

# The release's COMMON_IMAGE_EXTENSIONS, in its order: the first file that exists wins.
IMAGE_EXTENSIONS: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


def find_image(root: Path, image_id: str) -> Path | None:
    """`root/<image_id><ext>` for the first extension that exists (case as released)."""
    for ext in IMAGE_EXTENSIONS:
        path = root / f"{image_id}{ext}"
        if is_file(path):
            return path
    return None


def row_media(
    path: Path, line: int, row: AnnotationRow, roots: dict[ImageSide, Path]
) -> tuple[Media, ...]:
    """The row's images in the release's order (CO: vehicle, then infrastructure), as Media
    with role and index; an ItemError names the file, line, item and the id field."""
    sides = VIEW_IMAGES[row.spec.view]
    found: dict[ImageSide, Path] = {}
    missing: list[str] = []
    for side in sides:
        image = find_image(roots[side], row.image_ids[side])
        if image is None:
            missing.append(_not_found(side, row.image_ids[side], roots))
        else:
            found[side] = image
    if missing:
        first = next(side for side in sides if side not in found)
        raise _error(path, line, row, first, "; ".join(missing))
    media = []
    for index, side in enumerate(sides):
        try:
            item_media, _ = image_media(MediaKind.IMAGE, found[side], role=side.value, index=index)
        except NotAnImageError as exc:
            raise _error(path, line, row, side, str(exc)) from None
        media.append(item_media)
    return tuple(media)


def _not_found(side: ImageSide, image_id: str, roots: dict[ImageSide, Path]) -> str:
    message = (
        f"{side.value}-side image {image_id!r} not found in {roots[side]} "
        f"(tried {', '.join(IMAGE_EXTENSIONS)})"
    )
    other = next(s for s in ImageSide if s is not side)
    elsewhere = find_image(roots[other], image_id)
    if elsewhere is not None:
        message += f"; a file of that name is in the {other.value} root: {elsewhere}"
    return message


def _error(path: Path, line: int, row: AnnotationRow, side: ImageSide, message: str) -> ItemError:
    return ItemError(ItemProblem(str(path), line, side.id_field, message, row.item_id))
