"""The generated demo: same bytes every run, every label filled, answers spread, quality passes."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.trip import demo_drawing
from roadeval.benchmarks.trip.quality import check_quality
from roadeval.benchmarks.trip.taxonomy import CAPABILITIES, DIFFICULTIES, ROLES


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return get_suite("trip").generate_demo(tmp_path_factory.mktemp("trip-demo"))


@pytest.fixture(scope="module")
def demo_items(demo_root: Path) -> list[Item]:
    report = get_suite("trip").load(demo_root)
    assert report.skipped == []
    return report.items


def _tree(root: Path) -> dict[str, bytes]:
    files = sorted(path for path in root.rglob("*") if path.is_file())
    return {str(path.relative_to(root)): path.read_bytes() for path in files}


def test_generation_is_byte_identical(demo_root: Path, tmp_path: Path) -> None:
    again = get_suite("trip").generate_demo(tmp_path / "again")
    first, second = _tree(demo_root), _tree(again)
    # items.jsonl, VERSION, one PNG per image item, one scan per point-cloud item
    assert len(first) == 2 + 14 + 3
    assert first == second


def test_demo_shape_and_labels(demo_items: list[Item]) -> None:
    assert len(demo_items) == 43
    labels = {
        name: Counter(item.labels[name] for item in demo_items)
        for name in ("role", "capability", "difficulty", "modality")
    }
    assert labels["modality"] == {"text": 26, "image": 14, "point cloud": 3}
    assert set(labels["role"]) == set(ROLES)
    assert set(labels["capability"]) == set(CAPABILITIES)
    assert set(labels["difficulty"]) == set(DIFFICULTIES)
    assert all(len(item.labels) == 6 and all(item.labels.values()) for item in demo_items)
    assert len({item.labels["subject"] for item in demo_items}) >= 8
    assert Counter(item.reference for item in demo_items) == {"A": 11, "B": 11, "C": 11, "D": 10}
    assert all(item.extra["explanation"] for item in demo_items)


def test_demo_passes_the_quality_checks(demo_items: list[Item]) -> None:
    assert check_quality(demo_items) == []


def test_image_item_messages_carry_the_png_and_repeat_exactly(
    demo_root: Path, demo_items: list[Item]
) -> None:
    suite = get_suite("trip")
    image_item = next(item for item in demo_items if item.labels["modality"] == "image")
    (message,) = suite.messages(image_item)
    image_part, text_part = message["content"]
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    png = base64.b64decode(url.split(",", 1)[1])
    assert png.startswith(b"\x89PNG") and png == Path(image_item.media[0].path).read_bytes()
    assert "attached image" in text_part["text"]
    reloaded = {item.item_id: item for item in suite.load(demo_root).items}[image_item.item_id]
    assert json.dumps(suite.messages(reloaded)) == json.dumps(suite.messages(image_item))
    assert reloaded.content_hash == image_item.content_hash


def _white_runs(row: np.ndarray) -> int:
    white = np.all(row > 230, axis=-1).astype(int)
    return int(np.count_nonzero(np.diff(np.concatenate(([0], white))) == 1))


@pytest.mark.parametrize("lanes", [2, 3, 5])
def test_lane_drawing_shows_one_line_more_than_lanes(lanes: int) -> None:
    pixels = np.asarray(demo_drawing.one_way_road(lanes))
    # Row 20 crosses the first dash of every lane line and both edge lines.
    assert _white_runs(pixels[20]) == lanes + 1
