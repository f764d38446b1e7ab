"""The reference line drawn as the release draws it, and byte-stable request messages."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from roadeval.benchmarks.messages import message_images, message_text
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.drawing import draw_reference_line
from roadeval.benchmarks.roadbench.render import render_image

SUITE = get_suite("roadbench")
RED = (255, 0, 0)
GREY = (90, 90, 90)


def red_mask(image: Image.Image) -> np.ndarray:
    pixels = np.asarray(image.convert("RGB"))
    return np.all(pixels == RED, axis=-1)


def red_run(mask: np.ndarray, x: int) -> int:
    return int(mask[:, x].sum())


@pytest.fixture(scope="module")
def drawn() -> np.ndarray:
    image = Image.new("RGB", (200, 200), GREY)
    return red_mask(draw_reference_line(image, [(20.0, 100.0), (180.0, 100.0)]))


def test_line_is_red_and_five_pixels_wide(drawn: np.ndarray) -> None:
    for x in (40, 55, 110, 160):
        assert 4 <= red_run(drawn, x) <= 6
        assert drawn[100, x]
    assert not drawn[100, 190]


def test_arrow_heads_at_one_and_two_thirds(drawn: np.ndarray) -> None:
    # Shafts start at 1/3 and 2/3 of the 160 px line (x = 73.3, 126.7) and run 15 px ahead;
    # the head strokes spread well beyond the line's width just behind their tips.
    heads = [x for x in range(20, 181) if red_run(drawn, x) >= 10]
    assert heads
    near_first = [x for x in heads if 75 <= x <= 90]
    near_second = [x for x in heads if 128 <= x <= 143]
    assert near_first and near_second
    assert not [x for x in heads if 30 <= x <= 70 or 95 <= x <= 122 or 148 <= x <= 170]


def test_end_dots_and_nothing_but_red_is_added(drawn: np.ndarray) -> None:
    assert red_run(drawn, 20) >= 9
    image = draw_reference_line(Image.new("RGB", (200, 200), GREY), [(20, 100), (180, 100)])
    colours = {tuple(c) for c in np.asarray(image).reshape(-1, 3)}
    assert colours == {GREY, RED}


def test_original_image_is_not_modified() -> None:
    image = Image.new("RGB", (50, 50), GREY)
    draw_reference_line(image, [(0, 0), (49, 49)])
    assert not red_mask(image).any()


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    source = SUITE.generate_demo(tmp_path_factory.mktemp("rb-msg"))
    loaded = SUITE.load(source).items
    return {task: next(item for item in loaded if item.task == task) for task in "123456"}


def test_message_shape_image_then_prompt(items: dict) -> None:
    messages = SUITE.messages(items["1"])
    assert len(messages) == 1 and messages[0]["role"] == "user"
    parts = messages[0]["content"]
    assert [part["type"] for part in parts] == ["image_url", "text"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert parts[1]["text"] == items["1"].question
    assert parts[1]["text"].endswith("Your YAML output:\n")


def test_bev_prompt_carries_size_and_reference_line(items: dict) -> None:
    item = items["2"]
    text = message_text(SUITE.messages(item))
    width, height = item.extra["image_size"]
    assert f"image:\n  width: {width}\n  height: {height}\n" in text
    assert "# The pixel coordinates of the reference centerline\ncoordinates:\n- x: " in text
    assert f"num_lanes: {len(item.reference)}\n" in text
    assert "**Task: Lane Designations Recognition for Road Network Analysis**" in text


def test_bev_image_has_the_line_and_fpv_image_is_unchanged(items: dict) -> None:
    bev = items["3"]
    sent = Image.open(io.BytesIO(message_images(SUITE.messages(bev))[0]))
    original = Image.open(bev.media[0].path)
    assert sent.size == original.size
    assert red_mask(sent).sum() > red_mask(original).sum() + 100
    fpv = items["6"]
    sent = Image.open(io.BytesIO(message_images(SUITE.messages(fpv))[0]))
    assert np.array_equal(np.asarray(sent), np.asarray(Image.open(fpv.media[0].path)))


def test_messages_are_byte_identical_across_builds(items: dict) -> None:
    for item in items.values():
        first = json.dumps(SUITE.messages(item), sort_keys=True)
        second = json.dumps(SUITE.messages(item), sort_keys=True)
        assert first == second
        # Rendering anew (no cache) gives the same bytes as well.
        media = item.media[0]
        line = item.extra.get("pixel_line")
        assert render_image(Path(media.path), line) == render_image(Path(media.path), line)
        assert render_image(Path(media.path), line) == message_images(SUITE.messages(item))[0]
