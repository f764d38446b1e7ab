"""The demo suite: the release layout, the same bytes on every run, drawn images with a red box,
and gold answers that score 1.0 through the suite's own parse, score and corpus metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

from PIL import Image

from roadeval.benchmarks.output import ModelOutput, TokenLogprob
from roadeval.benchmarks.suite import ScoredItem
from roadeval.benchmarks.v2xqa.demo_drawing import BOX_RED
from roadeval.benchmarks.v2xqa.suite import V2XQASuite
from roadeval.benchmarks.v2xqa.tasks import TASK_IDS

SUITE = V2XQASuite()


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_demo_is_byte_deterministic_in_the_release_layout(tmp_path: Path) -> None:
    first = SUITE.generate_demo(tmp_path / "one")
    second = V2XQASuite().generate_demo(tmp_path / "two")
    assert first == tmp_path / "one"
    files = _files(first)
    assert files == _files(second)
    annotation_files = sorted(name for name in files if name.endswith("_annotations.jsonl"))
    assert annotation_files == sorted(f"{task}_annotations.jsonl" for task in TASK_IDS)
    assert sorted({str(Path(name).parent) for name in files if "/" in name}) == [
        "images/infrastructure",
        "images/vehicle",
    ]
    fields = json.loads(files["CO1_annotations.jsonl"].splitlines()[0])
    assert set(fields) == {
        "sample_id",
        "task_id",
        "question_id",
        "question",
        "options",
        "selected_option_id",
        "canonical_answer",
        "image_id_vs",
        "image_id_is",
    }


def _red_box(path: str) -> tuple[int, int, int, int] | None:
    """The bounds of the image's red pixels when they outline a box (its middle not red)."""
    with Image.open(path) as image:
        rgb = image.convert("RGB")
    red = [
        (x, y) for y in range(rgb.height) for x in range(rgb.width) if _is_red(rgb.getpixel((x, y)))
    ]
    if len(red) < 100:
        return None
    left, top = min(x for x, _ in red), min(y for _, y in red)
    right, bottom = max(x for x, _ in red), max(y for _, y in red)
    corners_red = all(_is_red(rgb.getpixel(p)) for p in ((left, top), (right, bottom)))
    middle_red = _is_red(rgb.getpixel(((left + right) // 2, (top + bottom) // 2)))
    return (left, top, right, bottom) if corners_red and not middle_red else None


def _is_red(pixel: object) -> bool:
    assert isinstance(pixel, tuple)
    r, g, b = pixel[:3]
    return r > BOX_RED[0] - 55 and g < 60 and b < 60


def test_demo_loads_with_images_per_view_and_a_red_box(tmp_path: Path) -> None:
    items = SUITE.load(SUITE.generate_demo(tmp_path)).items
    assert sorted({item.task for item in items}) == sorted(TASK_IDS)
    assert len(items) == 12 * 4
    for item in items:
        roles = [m.role for m in sorted(item.media, key=lambda m: m.index or 0)]
        view = item.labels["view"]
        expected = {
            "VS": ["vehicle"],
            "IS": ["infrastructure"],
            "CO": ["vehicle", "infrastructure"],
        }[view]
        assert roles == expected, item.item_id
    images = sorted({m.path for item in items for m in item.media})
    assert len(images) == 8  # four scenes, each seen from both sides
    assert [path for path in images if _red_box(path) is None] == []
    # The gold letters vary, so always-A cannot score 1.0 on the demo.
    assert len({item.reference for item in items}) == 4


def _answer(letter: str, confidence: float) -> ModelOutput:
    rest = (1.0 - confidence) / 3
    others = tuple((other, math.log(rest)) for other in "ABCD" if other != letter)
    return ModelOutput(letter, logprobs=(TokenLogprob(letter, math.log(confidence), others),))


def test_gold_answers_score_one_through_parse_and_score(tmp_path: Path) -> None:
    items = SUITE.load(SUITE.generate_demo(tmp_path)).items
    scored = []
    for item in items:
        parsed = SUITE.parse(item, _answer(str(item.reference), 0.97))
        scored.append(ScoredItem(item, parsed, SUITE.score(item, parsed)))
    for task in TASK_IDS:
        rows = [row for row in scored if row.item.task == task]
        assert SUITE.summarize(task, rows) == {"accuracy": 1.0, "unparsed_count": 0.0}
    groups = {(g.slice, g.slice_value, g.metric): g for g in SUITE.group_values(scored)}
    for view in ("VS", "IS", "CO"):
        assert groups[("view", view, "accuracy")].value == 1.0
        assert math.isclose(groups[("view", view, "ece")].value, 0.03)
    assert groups[("", "", "accuracy")].value == 1.0 and groups[("", "", "accuracy")].n == 48
    assert math.isclose(groups[("", "", "ece")].value, 0.03)
    assert math.isclose(groups[("", "", "brier")].value, 0.03**2 + 3 * 0.01**2)
    assert groups[("", "", "no_confidence_items")].value == 0.0
