"""Bad input at load, for every suite, built from the suites' own demo data: a non-UTF-8 line,
a file that is not an image, a Parquet file that does not read, and row fields the format does
not define (counted, never fatal at this level)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.image_check import NotAnImageError, check_image
from roadeval.benchmarks.loading import describe_unknown_fields, read_jsonl
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.tbbench.rows import PARQUET_BATCH_ROWS


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("demos")
    names = ("trip", "roadbench", "tbbench")
    return {name: get_suite(name).generate_demo(root / name) for name in names}


@pytest.fixture
def trip(demos: dict[str, Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(demos["trip"], tmp_path / "trip"))


@pytest.fixture
def roadbench(demos: dict[str, Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(demos["roadbench"], tmp_path / "roadbench"))


@pytest.fixture
def tbbench(demos: dict[str, Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(demos["tbbench"], tmp_path / "tbbench"))


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((64, 64), 80).convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")


def break_utf8(path: Path, line: int, field: str) -> str:
    """Put a Latin-1 byte into one field of one line; return that row's id."""
    lines = path.read_bytes().split(b"\n")
    row = json.loads(lines[line - 1])
    row[field] = "caf\x00"
    lines[line - 1] = json.dumps(row).encode().replace(b"\\u0000", b"\xe9")
    path.write_bytes(b"\n".join(lines))
    return row["id"]


# --- JSONL that is not UTF-8 -----------------------------------------------------------------


def test_a_non_utf8_line_is_one_bad_row_naming_line_item_field_and_byte(trip: Path) -> None:
    path = trip / "items.jsonl"
    item_id = break_utf8(path, 3, "question")
    read = list(read_jsonl(path))
    assert len(read) == 43
    bad = [(line, row) for line, row in read if isinstance(row, ItemError)]
    assert len(bad) == 1
    line, error = bad[0]
    assert line == 3
    problem = error.problem
    assert (problem.file, problem.line, problem.item_id, problem.field) == (
        str(path),
        3,
        item_id,
        "question",
    )
    start = len(b"".join(path.read_bytes().split(b"\n", 2)[:2])) + 2
    offset = path.read_bytes().index(b"\xe9")
    assert f"not UTF-8: b'\\xe9' at byte {offset - start} of the line" in problem.message
    assert f"(byte {offset} of the file)" in problem.message


def test_skip_reports_the_non_utf8_line_and_loads_the_rest(trip: Path) -> None:
    path = trip / "items.jsonl"
    break_utf8(path, 3, "question")
    suite = get_suite("trip")
    with pytest.raises(ItemError, match=r"line 3, .*field 'question': not UTF-8"):
        suite.load(trip)
    report = suite.load(trip, on_bad_item=BadItemPolicy.SKIP)
    assert [(p.line, p.field) for p in report.skipped] == [(3, "question")]
    assert len(report.items) == 42


def test_a_line_that_is_not_json_either_still_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": "a"}\n\xff\xfe garbage\n{"id": "b"}\n')
    read = list(read_jsonl(path))
    assert [line for line, _ in read] == [1, 2, 3]
    problem = read[1][1].problem
    assert (problem.line, problem.field, problem.item_id) == (2, None, None)
    assert "not UTF-8: b'\\xff' at byte 0 of the line (byte 12 of the file)" in problem.message


def test_roadbench_labels_go_through_the_same_reader(roadbench: Path) -> None:
    labels = roadbench / "task_6" / "labels.jsonl"
    item_id = break_utf8(labels, 2, "road_type")
    suite = get_suite("roadbench")
    with pytest.raises(ItemError) as caught:
        suite.load(roadbench)
    assert (caught.value.problem.line, caught.value.problem.item_id) == (2, item_id)
    report = suite.load(roadbench, on_bad_item=BadItemPolicy.SKIP)
    assert [(p.file, p.line) for p in report.skipped] == [(str(labels), 2)]


# --- files that are not images ---------------------------------------------------------------


def test_check_image_accepts_an_image_and_refuses_garbage_and_a_truncated_png() -> None:
    data = png_bytes()
    info = check_image(data)
    assert (info.format, info.size, info.suffix) == ("PNG", (64, 64), ".png")
    with pytest.raises(NotAnImageError, match=r"not an image \(content starts b'not a pn'\)"):
        check_image(b"not a png at all")
    # The header reads, so only verify() (which walks the chunks) finds the missing half.
    with pytest.raises(NotAnImageError, match="not a readable PNG image"):
        check_image(data[: len(data) // 2])


def test_trip_image_that_is_not_an_image(trip: Path) -> None:
    row = next(r for r in rows_of(trip / "items.jsonl") if r.get("image"))
    (trip / row["image"]).write_bytes(b"GIF89a? no")
    with pytest.raises(ItemError) as caught:
        get_suite("trip").load(trip)
    problem = caught.value.problem
    assert (problem.item_id, problem.field) == (row["id"], "image")
    assert problem.line is not None and "not an image" in problem.message


def test_trip_truncated_png(trip: Path) -> None:
    row = next(r for r in rows_of(trip / "items.jsonl") if r.get("image"))
    image = trip / row["image"]
    image.write_bytes(image.read_bytes()[: image.stat().st_size // 2])
    report = get_suite("trip").load(trip, on_bad_item=BadItemPolicy.SKIP)
    assert [(p.item_id, p.field) for p in report.skipped] == [(row["id"], "image")]
    assert "not a readable PNG image" in report.skipped[0].message


def test_roadbench_truncated_and_garbage_images(roadbench: Path) -> None:
    first, second = rows_of(roadbench / "task_3" / "labels.jsonl")[:2]
    truncated = roadbench / "task_3" / f"{first['id']}.png"
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    (roadbench / "task_3" / f"{second['id']}.png").write_bytes(b"\x00" * 100)
    report = get_suite("roadbench").load(roadbench, on_bad_item=BadItemPolicy.SKIP)
    labels = str(roadbench / "task_3" / "labels.jsonl")
    assert [(p.file, p.line, p.item_id, p.field) for p in report.skipped] == [
        (labels, 1, first["id"], "image"),
        (labels, 2, second["id"], "image"),
    ]
    assert "not a readable PNG image" in report.skipped[0].message
    assert "not an image" in report.skipped[1].message


def test_tbbench_embedded_frame_cut_short(tbbench: Path) -> None:
    path = sorted((tbbench / "data").glob("*.parquet"))[0]
    table = pq.read_table(path)
    rows = table.to_pylist()
    frame = rows[1]["image"][0]
    frame["bytes"] = frame["bytes"][: len(frame["bytes"]) // 2]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    with pytest.raises(ItemError) as caught:
        get_suite("tbbench").load(tbbench)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field) == (str(path), 2, "image")
    assert "frame 0: embedded bytes: not a readable PNG image" in problem.message


# --- Parquet that does not read --------------------------------------------------------------


def test_a_truncated_parquet_file_is_a_source_error(tbbench: Path) -> None:
    path = sorted((tbbench / "data").glob("*.parquet"))[0]
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(SuiteSourceError) as caught:
        get_suite("tbbench").load(tbbench, on_bad_item=BadItemPolicy.SKIP)
    message = str(caught.value)
    assert message.startswith(f"{path}: not a readable Parquet file: ")
    assert "magic bytes not found" in message


def test_a_damaged_page_after_good_rows_is_a_source_error(tbbench: Path) -> None:
    path = sorted((tbbench / "data").glob("*.parquet"))[0]
    # A second row group, past the first batch, whose page header is damaged: the footer
    # still reads, and so do the first batch's rows.
    table = pq.read_table(path)
    copies = PARQUET_BATCH_ROWS // table.num_rows + 2
    pq.write_table(pa.concat_tables([table] * copies), path, row_group_size=PARQUET_BATCH_ROWS)
    column = pq.ParquetFile(path).metadata.row_group(1).column(2)
    assert column.path_in_schema == "problem"
    data = bytearray(path.read_bytes())
    data[column.data_page_offset : column.data_page_offset + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))
    with pytest.raises(SuiteSourceError) as caught:
        get_suite("tbbench").load(tbbench)
    message = str(caught.value)
    assert message.startswith(
        f"{path}: not a readable Parquet file (reading from row {PARQUET_BATCH_ROWS + 1}): "
    )


# --- fields the format does not define -------------------------------------------------------


def test_unknown_fields_are_counted_per_file_and_field(trip: Path) -> None:
    path = trip / "items.jsonl"
    rows = rows_of(path)
    rows[0]["hint"] = "x"
    rows[4]["hint"] = "y"
    rows[4]["Answer"] = "A"
    write_rows(path, rows)
    report = get_suite("trip").load(trip)
    assert len(report.items) == 43
    assert report.unknown_fields == {str(path): {"hint": 2, "Answer": 1}}
    assert describe_unknown_fields(report.unknown_fields) == (
        f"{path}: 'Answer' (1 row), 'hint' (2 rows)"
    )


def test_demo_data_has_no_unknown_fields(trip: Path, roadbench: Path, tbbench: Path) -> None:
    for name, source in (("trip", trip), ("roadbench", roadbench), ("tbbench", tbbench)):
        assert get_suite(name).load(source).unknown_fields == {}, name


def test_roadbench_fields_are_checked_per_label_file(roadbench: Path) -> None:
    # `road_type` belongs to task 6, not to task 1/2; extra_labels rows are checked too.
    labels = roadbench / "task_1_2" / "labels.jsonl"
    rows = rows_of(labels)
    rows[0]["road_type"] = "main"
    write_rows(labels, rows)
    extra = roadbench / "task_4_5" / "extra_labels.jsonl"
    extra_rows = rows_of(extra)
    extra_rows[0]["note"] = "x"
    write_rows(extra, extra_rows)
    report = get_suite("roadbench").load(roadbench)
    assert report.unknown_fields == {str(labels): {"road_type": 1}, str(extra): {"note": 1}}


def test_tbbench_parquet_columns_outside_the_release_are_counted(tbbench: Path) -> None:
    path = sorted((tbbench / "data").glob("*.parquet"))[0]
    table = pq.read_table(path)
    pq.write_table(table.append_column("source_video", [["v"] * table.num_rows]), path)
    report = get_suite("tbbench").load(tbbench)
    assert report.unknown_fields == {str(path): {"source_video": table.num_rows}}
