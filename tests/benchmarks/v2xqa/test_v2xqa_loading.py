"""Loading the release layout: images per view in the release's order, missing images as
errors naming file, line, item and field, schema checks row by row, unknown fields, options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from v2xqa_support import RowFactory, WriteSource, image_bytes

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.v2xqa.suite import V2XQASuite

SUITE = V2XQASuite()


def _load(source: Path, **options: Any) -> list[Item]:
    return V2XQASuite(**options).load(source).items


def test_media_per_view_in_release_order(write_source: WriteSource, row: RowFactory) -> None:
    source = write_source({"VS1": [row("VS1")], "IS2": [row("IS2")], "CO3": [row("CO3")]})
    items = {item.task: item for item in _load(source)}
    assert [(m.role, m.index) for m in items["VS1"].media] == [("vehicle", 0)]
    assert [(m.role, m.index) for m in items["IS2"].media] == [("infrastructure", 0)]
    assert [(m.role, m.index) for m in items["CO3"].media] == [
        ("vehicle", 0),
        ("infrastructure", 1),
    ]
    co = items["CO3"]
    assert Path(co.media[0].path) == source / "images" / "vehicle" / "v000001.png"
    assert Path(co.media[1].path) == source / "images" / "infrastructure" / "i000001.png"
    assert [ref.path for ref in SUITE.render(co)] == [m.path for m in co.media]
    assert co.item_id == "CO3:000001" and co.reference == "B"
    assert co.labels == {
        "view": "CO",
        "family": "prediction",
        "task_name": "Cooperative Prediction",
        "question_id": "CO3_Q1",
    }
    # The canonical answer restates the gold: nothing a baseline sees may carry it.
    assert "right lane is free" not in json.dumps(co.model_dump(exclude={"options"}))


def test_extensions_in_release_order(write_source: WriteSource, row: RowFactory) -> None:
    source = write_source({"VS1": [row("VS1")]}, skip_images=["v000001"])
    folder = source / "images" / "vehicle"
    (folder / "v000001.bmp").write_bytes(image_bytes(1, "BMP"))
    (folder / "v000001.jpeg").write_bytes(image_bytes(2, "JPEG"))
    [item] = _load(source)
    assert item.media[0].path.endswith("v000001.jpeg") and item.media[0].mime == "image/jpeg"


def test_missing_image_names_file_line_item_and_field(
    write_source: WriteSource, row: RowFactory
) -> None:
    rows = [row("CO1", "000001"), row("CO1", "000002"), row("CO1", "000003")]
    source = write_source({"CO1": rows}, skip_images=["i000002"])
    with pytest.raises(ItemError) as caught:
        _load(source)
    problem = caught.value.problem
    assert problem.file == str(source / "CO1_annotations.jsonl")
    assert (problem.line, problem.item_id, problem.field) == (2, "CO1:000002", "image_id_is")
    assert "'i000002' not found in" in problem.message and ".webp" in problem.message

    report = SUITE.load(source, on_bad_item=BadItemPolicy.SKIP)
    assert [item.item_id for item in report.items] == ["CO1:000001", "CO1:000003"]
    assert [(p.line, p.item_id, p.field) for p in report.skipped] == [
        (2, "CO1:000002", "image_id_is")
    ]


def test_image_in_the_other_root_is_still_missing(
    write_source: WriteSource, row: RowFactory
) -> None:
    source = write_source({"VS1": [row("VS1")]}, skip_images=["v000001"])
    (source / "images" / "infrastructure").mkdir(parents=True, exist_ok=True)
    (source / "images" / "infrastructure" / "v000001.png").write_bytes(image_bytes(3))
    with pytest.raises(ItemError) as caught:
        _load(source)
    assert caught.value.problem.field == "image_id_vs"
    assert "in the infrastructure root" in caught.value.problem.message


def test_a_file_that_is_not_an_image(write_source: WriteSource, row: RowFactory) -> None:
    source = write_source({"IS1": [row("IS1")]}, skip_images=["i000001"])
    (source / "images" / "infrastructure" / "i000001.jpg").write_bytes(b"not an image")
    with pytest.raises(ItemError) as caught:
        _load(source)
    assert caught.value.problem.field == "image_id_is"


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"selected_option_id": "E"}, "selected_option_id", "not one of A, B, C, D"),
        ({"selected_option_id": "bb"}, "selected_option_id", "not one of A, B, C, D"),
        ({"selected_option_id": 2}, "selected_option_id", "not one of A, B, C, D"),
        ({"selected_option_id": ...}, "selected_option_id", "missing"),
        ({"options": {"A": "x", "B": "y", "C": "z"}}, "options", "exactly the keys"),
        ({"options": {"A": "x", "B": "y", "C": "z", "D": 4}}, "options", "option D"),
        ({"task_id": "VS9"}, "task_id", "not a V2X-QA task"),
        ({"task_id": ...}, "task_id", "missing"),
        ({"sample_id": 7}, "sample_id", "expected str"),
        ({"question": "  "}, "question", "blank"),
        ({"question_id": ...}, "question_id", "missing"),
        ({"image_id_vs": None}, "image_id_vs", "missing"),
        ({"image_id_vs": "../x"}, "image_id_vs", "is a path"),
        ({"image_id_is": 3}, "image_id_is", "expected str or null"),
        ({"canonical_answer": ["x"]}, "canonical_answer", "expected str or null"),
    ],
)
def test_schema_checks(
    write_source: WriteSource,
    row: RowFactory,
    changes: dict[str, Any],
    field: str,
    message: str,
) -> None:
    source = write_source({"VS1": [row("VS1", "000001"), row("VS1", "000002", **changes)]})
    with pytest.raises(ItemError) as caught:
        _load(source)
    problem = caught.value.problem
    assert (problem.line, problem.field) == (2, field)
    assert message in problem.message
    report = SUITE.load(source, on_bad_item=BadItemPolicy.SKIP)
    assert [i.item_id for i in report.items] == ["VS1:000001"] and len(report.skipped) == 1


def test_repeated_task_and_sample_id(write_source: WriteSource, row: RowFactory) -> None:
    source = write_source({"VS1": [row("VS1", "000001"), "", row("VS1", "000001")]})
    with pytest.raises(ItemError) as caught:
        _load(source)
    problem = caught.value.problem
    assert (problem.line, problem.item_id, problem.field) == (3, "VS1:000001", "sample_id")
    assert "line 1" in problem.message
    # The same sample id in another task is another question.
    other = write_source({"VS1": [row("VS1", "000001")], "VS2": [row("VS2", "000001")]})
    assert len(_load(other)) == 2


def test_broken_lines_are_bad_rows(write_source: WriteSource, row: RowFactory) -> None:
    source = write_source({"IS3": ["{not json", row("IS3")]})
    report = SUITE.load(source, on_bad_item=BadItemPolicy.SKIP)
    assert len(report.items) == 1 and report.skipped[0].line == 1


def test_strings_are_stripped_as_the_release_strips_them(
    write_source: WriteSource, row: RowFactory
) -> None:
    changes = {"question": " Why? \n", "options": {"A": " a ", "B": "b", "C": "c", "D": "d\t"}}
    source = write_source({"VS1": [row("VS1", **changes, selected_option_id=" b")]})
    [item] = _load(source)
    assert item.question == "Why?" and item.options == {"A": "a", "B": "b", "C": "c", "D": "d"}
    assert item.reference == "B"  # the release upper-cases the gold letter


def test_unknown_fields_are_counted_and_release_fields_are_not(
    write_source: WriteSource, row: RowFactory
) -> None:
    rows = [row("VS1", "000001", note="x"), row("VS1", "000002", note="y", extra=1)]
    rows.append(row("VS1", "000003", canonical_answer=...))
    source = write_source({"VS1": rows})
    report = SUITE.load(source)
    assert report.unknown_fields == {str(source / "VS1_annotations.jsonl"): {"note": 2, "extra": 1}}


def test_a_subset_of_files_loads_and_none_is_a_source_error(
    write_source: WriteSource, row: RowFactory, tmp_path: Path
) -> None:
    source = write_source({"IS4": [row("IS4")]})
    assert [item.task for item in _load(source)] == ["IS4"]
    (tmp_path / "empty" / "test").mkdir(parents=True)
    with pytest.raises(SuiteSourceError, match="no V2X-QA annotation files"):
        _load(tmp_path / "empty")
    (tmp_path / "empty" / "test" / "VS1_annotations.jsonl").write_text("")
    with pytest.raises(SuiteSourceError, match="point the source there"):
        _load(tmp_path / "empty")
    with pytest.raises(SuiteSourceError, match="no such folder"):
        _load(tmp_path / "nowhere")


def test_image_roots_from_options(
    write_source: WriteSource, row: RowFactory, tmp_path: Path
) -> None:
    source = write_source({"CO2": [row("CO2")]})
    moved = tmp_path / "elsewhere"
    (source / "images").rename(moved)
    with pytest.raises(ItemError):
        _load(source)
    absolute = _load(
        source,
        vehicle_images=str(moved / "vehicle"),
        infrastructure_images=moved / "infrastructure",
    )
    relative = _load(
        source,
        vehicle_images="../elsewhere/vehicle",
        infrastructure_images="../elsewhere/infrastructure",
    )
    assert [m.sha256 for m in absolute[0].media] == [m.sha256 for m in relative[0].media]
    assert Path(relative[0].media[0].path).is_absolute()


def test_options_are_validated() -> None:
    assert SUITE.options() == {
        "vehicle_images": "images/vehicle",
        "infrastructure_images": "images/infrastructure",
        "image_max_side": None,
        "top_logprobs": 20,
    }
    with pytest.raises(ValueError, match="no option"):
        V2XQASuite(image_root="x")
    with pytest.raises(ValueError, match="vehicle_images"):
        V2XQASuite(vehicle_images="")
    with pytest.raises(ValueError, match="image_max_side"):
        V2XQASuite(image_max_side=0)
    with pytest.raises(ValueError, match="image_max_side"):
        V2XQASuite(image_max_side=True)


@pytest.mark.parametrize("value", [0, 21, -1, True, 4.0, "20", None])
def test_top_logprobs_is_an_integer_from_1_to_20(value: object) -> None:
    with pytest.raises(ValueError, match=r"top_logprobs must be an integer from 1 to 20, got "):
        V2XQASuite(top_logprobs=value)


def test_top_logprobs_sets_what_every_request_asks() -> None:
    assert V2XQASuite().protocol_generation().top_logprobs == 20
    lowered = V2XQASuite(top_logprobs=5)
    assert lowered.options()["top_logprobs"] == 5
    assert lowered.protocol_generation().params() == {
        "max_tokens": 5,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 5,
    }
    # The class states the default; an instance's option never changes it for others.
    assert V2XQASuite.generation.top_logprobs == 20


def test_release_thumbnails_on_request(
    write_source: WriteSource, row: RowFactory, media_cache: Path
) -> None:
    from PIL import Image

    source = write_source({"VS1": [row("VS1")]}, skip_images=["v000001"])
    Image.new("RGB", (1200, 600), (9, 9, 9)).save(source / "images" / "vehicle" / "v000001.jpg")
    suite = V2XQASuite(image_max_side=560)
    [item] = suite.load(source).items
    [ref] = suite.render(item)
    assert ref.mime == "image/png" and Path(ref.path).is_relative_to(media_cache)
    with Image.open(ref.path) as shown:
        assert shown.size == (560, 280)
    assert suite.render(item) == (ref,)  # made once, read back after
