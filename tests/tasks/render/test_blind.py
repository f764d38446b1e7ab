"""The vision ablation's black images: same size, mode and format as the original, every pixel
black, made once per shape, and an unreadable original named."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from PIL import Image

from roadeval.benchmarks.messages import ImageRef
from roadeval.tasks.render.blind import BlindImageError, BlindImages, blind_renders

# (format, mode, MIME): what releases ship, palette and alpha included.
CASES = [
    ("PNG", "RGB", "image/png"),
    ("PNG", "RGBA", "image/png"),
    ("PNG", "L", "image/png"),
    ("PNG", "LA", "image/png"),
    ("PNG", "P", "image/png"),
    ("JPEG", "RGB", "image/jpeg"),
    ("JPEG", "L", "image/jpeg"),
    ("JPEG", "CMYK", "image/jpeg"),
    ("WEBP", "RGB", "image/webp"),
    ("BMP", "RGB", "image/bmp"),
]


def _image(path: Path, fmt: str, mode: str, size: tuple[int, int], shade: int = 200) -> ImageRef:
    """A bright image of `size` in `fmt` and `mode` at `path`, as a prompt holds it."""
    image = Image.new("RGB", size, (shade, 90, 40)).convert(mode)
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    data = buffer.getvalue()
    path.write_bytes(data)
    return ImageRef(str(path), hashlib.sha256(data).hexdigest(), "image/png")


def _is_black(data: bytes) -> bool:
    with Image.open(io.BytesIO(data)) as image:
        extrema = image.convert("RGB").getextrema()
    return all(high == 0 for _, high in extrema)


@pytest.mark.parametrize(("fmt", "mode", "mime"), CASES)
def test_a_twin_is_black_of_the_originals_size_mode_and_format(
    tmp_path: Path, fmt: str, mode: str, mime: str
) -> None:
    original = _image(tmp_path / f"x.{fmt.lower()}", fmt, mode, (37, 23))
    original = ImageRef(original.path, original.sha256, mime)
    assert not _is_black(original.read_bytes())
    twin = BlindImages().twin(original)
    data = twin.read_bytes()
    assert twin.sha256 == hashlib.sha256(data).hexdigest()
    assert twin.mime == mime and twin.path != original.path
    with Image.open(io.BytesIO(data)) as image:
        assert (image.format, image.mode, image.size) == (fmt, mode, (37, 23))
    assert _is_black(data)


def test_one_twin_per_shape_and_a_new_one_for_a_new_size(tmp_path: Path) -> None:
    a = _image(tmp_path / "a.png", "PNG", "RGB", (64, 48), shade=10)
    b = _image(tmp_path / "b.png", "PNG", "RGB", (64, 48), shade=250)
    c = _image(tmp_path / "c.png", "PNG", "RGB", (65, 48))
    assert a.sha256 != b.sha256
    twins = BlindImages()
    # Two originals of one size: one black image (so a changed image of the same size leaves
    # the blind request as it was); another size: another black image.
    assert twins.twin(a) == twins.twin(b)
    assert twins.twin(c).sha256 != twins.twin(a).sha256
    # Made again in another run (another BlindImages), the same file and digest.
    assert BlindImages().twin(a) == twins.twin(a)


def test_only_items_that_show_an_image_have_blind_renders(tmp_path: Path) -> None:
    a = _image(tmp_path / "a.png", "PNG", "RGB", (8, 8))
    c = _image(tmp_path / "c.png", "PNG", "L", (9, 4))
    blind = blind_renders({"text": (), "one": (a,), "two": (c, a)})
    assert sorted(blind) == ["one", "two"]
    assert [len(images) for images in (blind["one"], blind["two"])] == [1, 2]
    assert blind["two"][1] == blind["one"][0]
    assert all(_is_black(image.read_bytes()) for images in blind.values() for image in images)


def test_an_unreadable_original_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    with pytest.raises(BlindImageError, match=r"broken\.png: cannot read it"):
        BlindImages().twin(ImageRef(str(broken), "0" * 64))
