"""The TRIP loader: good rows become Items; each bad row names file, line and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.item import AnswerKind, MediaKind
from roadeval.benchmarks.trip.loader import load_items


def test_text_and_image_rows_load(write_source, text_row, image_row, sign_png: bytes) -> None:
    source = write_source([text_row("M_b_1"), image_row("M_i_1", answer="c", modality="Image")])
    report = load_items(source)
    text, image = report.items
    assert report.skipped == []
    assert text.item_id == "M_b_1" and text.task == "mcq" and text.suite == "trip"
    assert text.answer_kind is AnswerKind.CHOICE and text.reference == "A"
    assert text.options == {"A": "57.5 s", "B": "45.0 s", "C": "42.5 s", "D": "38.3 s"}
    assert text.labels == {
        "role": "traffic management",
        "subject": "signal control",
        "knowledge_point": "Webster optimal cycle",
        "capability": "numerical calculation",
        "difficulty": "medium",
        "modality": "text",
    }
    assert text.extra == {"explanation": "(1.5 x 12 + 5) / 0.4 = 57.5 s"}
    assert text.media == ()
    # Lower-case gold letters and other modality spellings are normalised.
    assert image.reference == "C" and image.labels["modality"] == "image"
    assert [media.kind for media in image.media] == [MediaKind.IMAGE]
    assert image.media[0].read_bytes() == sign_png


def test_point_cloud_row_carries_its_scan_or_two_renders(write_source, text_row) -> None:
    scan = text_row("V_p_1", modality="point_cloud", point_cloud="scan.bin")
    rendered = text_row(
        "V_p_2",
        modality="point_cloud",
        bev_image="images/sign.png",
        front_image="images/sign.png",
    )
    source = write_source([scan, rendered])
    (source / "scan.bin").write_bytes(b"\x00" * 16)
    drawn, given = load_items(source).items
    assert drawn.labels["modality"] == "point cloud"
    assert [(m.kind, m.role) for m in drawn.media] == [(MediaKind.POINT_CLOUD, "source")]
    assert [(m.kind, m.role, m.index) for m in given.media] == [
        (MediaKind.IMAGE, "bev", 0),
        (MediaKind.IMAGE, "front", 1),
    ]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"bev_image": "images/sign.png"}, "bev_image", "its scan or its two renders, not both"),
        ({"point_cloud": "scan.las"}, "point_cloud", "unknown point-cloud extension '.las'"),
        ({"point_cloud": "absent.bin"}, "point_cloud", "file not found"),
    ],
)
def test_point_cloud_row_errors(
    write_source, text_row, changes: dict[str, Any], field: str, message: str
) -> None:
    row = text_row("V_p_1", modality="point_cloud", **{"point_cloud": "scan.bin", **changes})
    source = write_source([row])
    for name in ("scan.bin", "scan.las"):
        (source / name).write_bytes(b"\x00" * 16)
    with pytest.raises(ItemError) as caught:
        load_items(source)
    assert caught.value.problem.field == field and message in caught.value.problem.message


def test_version_comes_from_version_file_else_from_the_file_hash(write_source, text_row) -> None:
    source = write_source([text_row()])
    assert load_items(source).items[0].suite_version.startswith("sha256:")
    (source / "VERSION").write_text("v3\n", encoding="utf-8")
    assert load_items(source / "items.jsonl").items[0].suite_version == "v3"


# (row changes, image row?, field named, message part)
BAD_ROWS: list[tuple[dict[str, Any], bool, str, str]] = [
    ({"question": None}, False, "question", "missing"),
    ({"D": None}, False, "D", "missing"),
    ({"answer": "E"}, False, "answer", "not one of A, B, C, D"),
    ({"answer": "AB"}, False, "answer", "not one of A, B, C, D"),
    ({"answer": "B", "B": "  "}, False, "B", "correct option is blank"),
    ({"difficulty": "extreme"}, False, "difficulty", "not one of easy, medium, hard"),
    ({"modality": "video"}, False, "modality", "not one of text, image, point cloud"),
    ({"role_tag": ""}, False, "role_tag", "empty"),
    ({"explanation": 7}, False, "explanation", "expected str"),
    ({"image": "images/missing.png"}, True, "image", "file not found"),
    ({"image": None}, True, "image", "missing"),
    ({"image": "items.jsonl"}, True, "image", "unsupported image type"),
    ({"image": "images/sign.png"}, False, "image", "must not reference a visual"),
]


@pytest.mark.parametrize(("changes", "is_image", "field", "message"), BAD_ROWS)
def test_bad_row_names_file_line_and_field(
    write_source, text_row, image_row, changes: dict, is_image: bool, field: str, message: str
) -> None:
    bad = (image_row if is_image else text_row)("bad_1", **changes)
    source = write_source([text_row("ok_1"), bad])
    with pytest.raises(ItemError) as caught:
        load_items(source)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field) == (str(source / "items.jsonl"), 2, field)
    assert message in problem.message
    assert problem.item_id == "bad_1"


def test_duplicate_id_names_the_first_line(write_source, text_row) -> None:
    source = write_source([text_row("x"), text_row("y"), text_row("x")])
    expected = r"line 3, item 'x', field 'id': duplicate id \(first on line 1\)"
    with pytest.raises(ItemError, match=expected):
        load_items(source)


def test_skip_policy_keeps_the_good_rows_and_reports_the_bad(write_source, text_row) -> None:
    rows = [text_row("a"), "{not json", text_row("b", answer="Z"), text_row("a"), text_row("c")]
    report = load_items(write_source(rows), BadItemPolicy.SKIP)
    assert [item.item_id for item in report.items] == ["a", "c"]
    assert [(p.line, p.field) for p in report.skipped] == [(2, None), (3, "answer"), (4, "id")]


def test_missing_source_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SuiteSourceError, match=r"no items\.jsonl"):
        load_items(tmp_path)
