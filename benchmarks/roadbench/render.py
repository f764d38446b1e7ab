"""The image a RoadBench request carries: BEV images with the reference line drawn on them, FPV
images as they are, each PNG-encoded as the release encodes it; cached on disk by content,
because the release's encoder (optimize=True) takes most of a second per image."""

from __future__ import annotations

import hashlib
from pathlib import Path

import shapely
from PIL import Image

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.media_store import cached_render
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.roadbench.drawing import draw_reference_line, png_bytes

# Bump when the drawing or the encoding changes, so that old renders are not reused.
RENDER_VERSION = "roadbench-render-1"


def render_image(image_path: Path, pixel_line: str | None) -> bytes:
    """PNG bytes of the image, with the reference line drawn on it when one is given."""
    with Image.open(image_path) as opened:
        image = opened.copy()
    if pixel_line is not None:
        coords = [(x, y) for x, y, *_ in shapely.from_wkt(pixel_line).coords]
        image = draw_reference_line(image, coords)
    return png_bytes(image)


def render_key(image_sha256: str, pixel_line: str | None) -> str:
    text = f"{RENDER_VERSION}|{image_sha256}|{pixel_line or ''}"
    return hashlib.sha256(text.encode()).hexdigest()


def rendered_image(image_path: Path, image_sha256: str, pixel_line: str | None) -> ImageRef:
    """`render_image` as a file in the media cache (made once), with the digest of its bytes."""
    key = render_key(image_sha256, pixel_line)
    return cached_render(
        "roadbench-renders", key, ".png", "image/png", lambda: render_image(image_path, pixel_line)
    )


def item_image(item: Item) -> ImageRef:
    """The PNG image sent with this item."""
    media = item.media[0]
    return rendered_image(Path(media.path), media.sha256, item.extra.get("pixel_line"))
