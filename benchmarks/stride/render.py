"""The frames as the release's runner sends them: each opened as RGB, the Waymo query frame with
the red box of `bbox_xyxy` drawn on it (`draw_red_bbox`: three 1-pixel rectangles growing outward,
pure red), then JPEG-encoded at quality 85 (`run_openai.image_to_data_url`). Renders are files in
the media cache, named by what went into them, so a frame shared by many items is encoded once."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from roadeval.benchmarks.item import Item, MediaKind
from roadeval.benchmarks.media_store import cached_render
from roadeval.benchmarks.messages import ImageRef

# Bump when the drawing or the encoding changes, so that old renders are not reused.
RENDER_VERSION = "stride-render-1"
JPEG_QUALITY = 85
BOX_STROKES = 3
RED = (255, 0, 0)


def draw_red_box(image: Image.Image, bbox: Sequence[float]) -> Image.Image:
    """The release's box: rectangles at offsets 0..2 around (x1, y1, x2, y2), on a copy."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    x1, y1, x2, y2 = (float(v) for v in bbox[:4])
    for width in range(BOX_STROKES):
        draw.rectangle([x1 - width, y1 - width, x2 + width, y2 + width], outline=RED)
    return out


def render_frame(path: Path, bbox: Sequence[float] | None) -> bytes:
    with Image.open(path) as opened:
        image = opened.convert("RGB")
    if bbox is not None:
        image = draw_red_box(image, bbox)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()


def render_key(sha256: str, bbox: Sequence[float] | None) -> str:
    box = ",".join(repr(float(v)) for v in bbox) if bbox is not None else ""
    return hashlib.sha256(f"{RENDER_VERSION}|{sha256}|{box}".encode()).hexdigest()


def cached_frame(path: Path, sha256: str, bbox: Sequence[float] | None) -> ImageRef:
    """`render_frame` as a file in the media cache (made once), with the digest of its bytes."""
    key = render_key(sha256, bbox)
    return cached_render(
        "stride-renders", key, ".jpg", "image/jpeg", lambda: render_frame(path, bbox)
    )


def item_frames(item: Item) -> tuple[ImageRef, ...]:
    """The item's frames in order, the box (if any) on the last one."""
    frames = sorted(
        (m for m in item.media if m.kind is MediaKind.FRAME),
        key=lambda media: media.index if media.index is not None else 0,
    )
    bbox = item.extra.get("bbox")
    last = len(frames) - 1
    return tuple(
        cached_frame(Path(m.path), m.sha256, bbox if i == last else None)
        for i, m in enumerate(frames)
    )
