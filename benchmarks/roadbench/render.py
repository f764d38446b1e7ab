"""The image a RoadBench request carries: BEV images with the reference line drawn on them, FPV
images as they are, each PNG-encoded as the release encodes it; cached on disk by content,
because the release's encoder (optimize=True) takes most of a second per image."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import shapely
from PIL import Image

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.media_store import media_cache_root
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.roadbench.drawing import draw_reference_line, png_bytes
from roadeval.storage.store import write_atomic

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


# sha256 of each render this process has read or made, by render key: a render is hashed once.
_DIGESTS: dict[str, str] = {}
_DIGESTS_LOCK = threading.Lock()


def cached_render(image_path: Path, image_sha256: str, pixel_line: str | None) -> ImageRef:
    """`render_image` as a file in the media cache (made once), with the digest of its bytes."""
    key = render_key(image_sha256, pixel_line)
    target = media_cache_root() / "roadbench-renders" / key[:2] / f"{key}.png"
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
    if known is not None and target.is_file():
        return ImageRef(str(target), known, "image/png")
    if target.is_file():
        data = target.read_bytes()
    else:
        data = render_image(image_path, pixel_line)
        write_atomic(target, data)
    digest = hashlib.sha256(data).hexdigest()
    with _DIGESTS_LOCK:
        _DIGESTS[key] = digest
    return ImageRef(str(target), digest, "image/png")


def item_image(item: Item) -> ImageRef:
    """The PNG image sent with this item."""
    media = item.media[0]
    return cached_render(Path(media.path), media.sha256, item.extra.get("pixel_line"))
