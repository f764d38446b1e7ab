"""Loading questions files: frames in the release's order, `<obj>` substitution, bad rows named by
file, item and field, unknown fields counted, and both released extracts loading cleanly."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from stride_support import jpeg, nuscenes_root, waymo_root, write

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.item import MediaKind
from roadeval.benchmarks.messages import message_images, message_text
from roadeval.benchmarks.stride.suite import StrideSuite

WAYMO_ROW: dict[str, Any] = {
    "id": "SP-2",
    "task": "space-perception",
    "question": "Where is <obj> relative to the ego vehicle?",
    "question_format": "MCQ",
    "scoring_type": "mcq",
    "choices": {"A": "In front", "B": "Behind"},
    "ground_truth": "A",
    "scene_id": "seg1",
    "group_id": "group_010",
    "object_id": "seg1-010#obj00",
    "question_id": "waymo_val_seg1_group_010_SP-2_obj00",
    "bbox_xyxy": [4.0, 4.0, 20.0, 16.0],
    "image_paths": [f"seg1/CAM_FRONT/seg1-{n:03d}_FRONT.jpg" for n in range(1, 6)],
}
TRAJECTORY_ROW: dict[str, Any] = {
    **{k: v for k, v in WAYMO_ROW.items() if k not in ("choices", "bbox_xyxy", "object_id")},
    "id": "TRJ-5",
    "question_id": "waymo_val_seg1_group_010_TRJ-5",
    "question": "Predict 5 points.",
    "question_format": "OEQ",
    "scoring_type": "trajectory_waypoints",
    "ground_truth": "[[1, 0], [2, 0], [3, 0], [4, 0], [5, 0]]",
}


def waymo_file(tmp_path: Path, rows: list[dict[str, Any]], name: str = "questions.json") -> Path:
    questions = {"meta": {"split": "waymo_v1"}, "tasks": rows}
    for row in rows:
        for index, relative in enumerate(row.get("image_paths") or []):
            write(tmp_path / "images" / relative, jpeg(40 * index + 5))
    return write(tmp_path / name, json.dumps(questions))


def test_waymo_frames_in_order_with_the_box_on_the_query_frame(tmp_path: Path) -> None:
    path = waymo_file(tmp_path, [WAYMO_ROW])
    suite = StrideSuite(images="images")
    (item,) = suite.load(path).items
    assert item.item_id == WAYMO_ROW["question_id"] and item.task == "SP-2"
    assert [m.kind for m in item.media] == [MediaKind.FRAME] * 5
    assert [Path(m.path).name for m in item.media] == [
        Path(p).name for p in WAYMO_ROW["image_paths"]
    ]
    assert item.labels == {
        "split": "waymo",
        "family": "space-perception",
        "scoring_type": "mcq",
        "question_format": "MCQ",
    }
    messages = suite.messages(item)
    (message,) = messages
    # The text first, then the five frames (re-encoded as JPEG, as the release's runner sends).
    assert [part["type"] for part in message["content"]] == ["text"] + ["image_url"] * 5
    images = [Image.open(io.BytesIO(data)) for data in message_images(messages)]
    assert {image.format for image in images} == {"JPEG"}
    # Only the query frame carries the red box (three 1-pixel strokes at the box's edges).
    last = images[-1].convert("RGB")
    red = last.getpixel((3, 10))  # strokes at x = 2, 3, 4 around the box's left edge x1 = 4
    assert isinstance(red, tuple)
    assert red[0] > 200 and red[1] < 60 and red[2] < 60
    first = images[0].convert("RGB").getpixel((3, 10))
    assert isinstance(first, tuple) and first[0] < 150
    text = message_text(messages)
    assert (
        "Question: Where is the object in the red bounding box relative to the ego vehicle?\n"
        in text
    )
    assert "<obj>" not in text
    assert messages == suite.messages(item)  # renders are deterministic files


def test_nuscenes_frames_come_from_the_group_file(tmp_path: Path) -> None:
    root = tmp_path / "scenes"
    row = {
        "id": "SP-1",
        "question": "Which way does <obj> move?",
        "question_format": "MCQ",
        "scoring_type": "mcq",
        "choices": {"A": "Toward", "B": "Away"},
        "ground_truth": "B",
        "scene_id": "scene_012",
        "group_id": "group_002",
        "object_id": "tok",
        "source_group_file": "scene_012/group_002_vehicle_annotations.json",
    }
    questions = {"meta": {"split": "nuscenes_v6"}, "tasks": [row]}
    nuscenes_root(questions, root)
    path = write(tmp_path / "questions.json", json.dumps(questions))
    suite = StrideSuite(images=str(root))
    (item,) = suite.load(path).items
    assert [Path(m.path).name for m in item.media] == [
        f"{n:03d}_CAM_grid.jpg" for n in range(6, 11)
    ]
    # With the selected-vehicle render present, it replaces the query frame.
    write(root / "scene_012" / "group_002_selected_vehicle_render.jpg", jpeg(200))
    (item,) = suite.load(path).items
    assert Path(item.media[-1].path).name == "group_002_selected_vehicle_render.jpg"
    assert [m.index for m in item.media] == [0, 1, 2, 3, 4]


def test_malformed_ground_truth_trajectory_is_named_and_skippable(tmp_path: Path) -> None:
    bad = {**TRAJECTORY_ROW, "ground_truth": "about five metres ahead"}
    path = waymo_file(tmp_path, [WAYMO_ROW, bad])
    suite = StrideSuite(images="images")
    with pytest.raises(ItemError) as caught:
        suite.load(path)
    problem = caught.value.problem
    assert (problem.file, problem.item_id, problem.field) == (
        str(path),
        TRAJECTORY_ROW["question_id"],
        "ground_truth",
    )
    assert "out of the trajectory means" in problem.message
    report = suite.load(path, on_bad_item=BadItemPolicy.SKIP)
    assert [item.task for item in report.items] == ["SP-2"]
    assert [p.item_id for p in report.skipped] == [TRAJECTORY_ROW["question_id"]]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"question_format": "FRQ"}, "question_format"),
        ({"scoring_type": "open_oeq_text"}, "scoring_type"),
        ({"ground_truth": "Z"}, "ground_truth"),
        ({"choices": None}, "choices"),
        ({"scene_id": None}, "scene_id"),
        ({"image_paths": ["seg1/CAM_FRONT/missing.jpg"]}, "image_paths"),
        ({"bbox_xyxy": ["a", "b", "c", "d"]}, "bbox_xyxy"),
    ],
)
def test_bad_rows_name_their_field(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    path = waymo_file(tmp_path, [WAYMO_ROW])
    row = {**WAYMO_ROW, **change}
    path.write_text(json.dumps({"meta": {"split": "waymo_v1"}, "tasks": [row]}))
    with pytest.raises(ItemError) as caught:
        StrideSuite(images="images").load(path)
    assert caught.value.problem.field == field


def test_unknown_fields_are_counted(tmp_path: Path) -> None:
    path = waymo_file(tmp_path, [{**WAYMO_ROW, "my_note": 1}, {**TRAJECTORY_ROW, "my_note": 2}])
    report = StrideSuite(images="images").load(path)
    assert report.unknown_fields == {str(path): {"my_note": 2}}


def test_ids_are_unique_and_a_repeated_key_is_an_error(tmp_path: Path) -> None:
    # Without question_ids, two rows that differ only in their question get hashed suffixes.
    first = {k: v for k, v in WAYMO_ROW.items() if k != "question_id"}
    second = {**first, "question": "Is <obj> in front?"}
    path = waymo_file(tmp_path, [first, second])
    ids = [item.item_id for item in StrideSuite(images="images").load(path).items]
    assert len(set(ids)) == 2 and all(
        i.startswith("SP-2:seg1:group_010:seg1-010#obj00~") for i in ids
    )
    assert ids == [item.item_id for item in StrideSuite(images="images").load(path).items]
    path.write_text(
        json.dumps({"meta": {"split": "waymo_v1"}, "tasks": [first, copy.deepcopy(first)]})
    )
    report = StrideSuite(images="images").load(path, on_bad_item=BadItemPolicy.SKIP)
    assert len(report.items) == 1 and "repeats the matching key" in report.skipped[0].message


def test_sources_that_are_not_the_layout(tmp_path: Path) -> None:
    with pytest.raises(SuiteSourceError, match="no such file"):
        StrideSuite().load(tmp_path / "nowhere.json")
    write(tmp_path / "a" / "questions.json", json.dumps({"meta": {}, "items": []}))
    with pytest.raises(SuiteSourceError, match="'tasks' list"):
        StrideSuite().load(tmp_path / "a")


def test_the_released_extracts_load_cleanly(samples: Path, tmp_path: Path) -> None:
    waymo = json.loads((samples / "waymo_mini.json").read_text())
    nuscenes = json.loads((samples / "nuscenes_mini.json").read_text())
    suite_w = StrideSuite(images=str(waymo_root(waymo, tmp_path / "waymo")))
    suite_n = StrideSuite(images=str(nuscenes_root(nuscenes, tmp_path / "nuscenes")))
    for suite, name, expected in (
        (suite_w, "waymo_mini.json", "waymo"),
        (suite_n, "nuscenes_mini.json", "nuscenes"),
    ):
        report = suite.load(samples / name)
        assert report.unknown_fields == {} and report.skipped == []
        assert len(report.items) == 3 and len({i.item_id for i in report.items}) == 3
        assert {i.labels["split"] for i in report.items} == {expected}
        for item in report.items:
            frames = suite.render(item)
            expected_frames = 8 if item.task == "SC-6" else 5
            assert len(frames) == expected_frames, item.item_id
            assert message_text(suite.prompt(item, frames)).startswith(
                f"You are given {expected_frames} "
            )
    waymo_items = suite_w.load(samples / "waymo_mini.json").items
    kinds = {i.task: i.extra["kind"] for i in waymo_items}
    assert kinds == {"SP-2": "mcq", "TM-2": "mcq", "SC-4": "judged"}
    sp2 = next(i for i in waymo_items if i.task == "SP-2")
    assert sp2.labels["scenario"] == "Foreign Object Debris"
    assert sp2.extra["bbox"] == [654.408, 734.577, 686.693, 820.923]
    text = message_text(suite_w.prompt(sp2, suite_w.render(sp2)))
    assert "Target object: the object in the red bounding box in the 5th image.\n" in text
    assert (
        "Choices: {'A': 'In front', 'B': 'Front-left', 'C': 'Front-right', 'D': 'Directly left', "
        "'E': 'Directly right', 'F': 'Rear-left', 'G': 'Rear-right', 'H': 'Behind'}\n"
    ) in text
