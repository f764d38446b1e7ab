"""`roadeval run` on bad benchmark input: exit code 2, one message naming the file (and line or
row, item and field where there is one), no traceback, nothing in the store. Every bad input is
made from a suite's own demo data."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.tbbench.rows import PARQUET_BATCH_ROWS
from roadeval.flows.cli.main import app

pytestmark = pytest.mark.usefixtures("under_prefect")

runner = CliRunner()

# A bad input: (the panel to run, the texts its error message must contain).
Case = tuple[Path, list[str]]
# A fresh copy of a suite's demo source under the test's folder.
Demo = Callable[[str], Path]


@pytest.fixture(scope="module")
def demo_sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("demos")
    names = ("trip", "roadbench", "tbbench", "v2xqa", "stride")
    return {name: get_suite(name).generate_demo(root / name) for name in names}


@pytest.fixture
def demo(demo_sources: dict[str, Path], tmp_path: Path) -> Demo:
    def copy(name: str) -> Path:
        source = demo_sources[name]
        if source.is_dir():
            return Path(shutil.copytree(source, tmp_path / name))
        # A suite whose source is a file (STRIDE's questions.json) beside its images.
        return Path(shutil.copytree(source.parent, tmp_path / name)) / source.name

    return copy


def write_panel(tmp_path: Path, suite: str, source: Path, **entry: Any) -> Path:
    panel = {
        "name": "bad-input",
        "suites": [{"name": suite, "source": str(source), **entry}],
        "models": [{"model": "roadeval/random"}],
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel), encoding="utf-8")
    return path


def json_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def cut_in_half(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def first_parquet(source: Path) -> Path:
    return sorted((source / "data").glob("*.parquet"))[0]


def trip_line_not_utf8(tmp_path: Path, demo: Demo) -> Case:
    source = demo("trip")
    items = source / "items.jsonl"
    lines = items.read_bytes().split(b"\n")
    row = json.loads(lines[2])
    lines[2] = json.dumps({**row, "question": "caf\x00"}).encode().replace(b"\\u0000", b"\xe9")
    items.write_bytes(b"\n".join(lines))
    where = f"{items}, line 3, item {row['id']!r}, field 'question': not UTF-8: b'\\xe9' at byte"
    return write_panel(tmp_path, "trip", source), [where]


def trip_image_not_an_image(tmp_path: Path, demo: Demo) -> Case:
    source = demo("trip")
    items = source / "items.jsonl"
    line, row = next((n, r) for n, r in enumerate(json_rows(items), 1) if r.get("image"))
    (source / row["image"]).write_bytes(b"this is no picture")
    where = f"{items}, line {line}, item {row['id']!r}, field 'image': image file"
    return write_panel(tmp_path, "trip", source), [where, "not an image"]


def roadbench_image_truncated(tmp_path: Path, demo: Demo) -> Case:
    source = demo("roadbench")
    labels = source / "task_3" / "labels.jsonl"
    row = json_rows(labels)[1]
    cut_in_half(source / "task_3" / f"{row['id']}.png")
    where = f"{labels}, line 2, item {row['id']!r}, field 'image': image file"
    return write_panel(tmp_path, "roadbench", source), [where, "not a readable PNG image"]


def tbbench_frame_truncated(tmp_path: Path, demo: Demo) -> Case:
    source = demo("tbbench")
    path = first_parquet(source)
    table = pq.read_table(path)
    rows = table.to_pylist()
    frame = rows[0]["image"][0]
    frame["bytes"] = frame["bytes"][: len(frame["bytes"]) // 2]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    where = f"{path}, line 1, item 'EGO-TRA-0000', field 'image': frame 0: embedded bytes: "
    return write_panel(tmp_path, "tbbench", source), [where + "not a readable PNG image"]


def tbbench_parquet_truncated(tmp_path: Path, demo: Demo) -> Case:
    source = demo("tbbench")
    path = first_parquet(source)
    cut_in_half(path)
    return write_panel(tmp_path, "tbbench", source), [
        f"{path}: not a readable Parquet file: Parquet magic bytes not found"
    ]


def tbbench_parquet_page_damaged(tmp_path: Path, demo: Demo) -> Case:
    source = demo("tbbench")
    path = first_parquet(source)
    # A second row group past the first batch, with a damaged page header; the footer is fine.
    table = pq.read_table(path)
    copies = math.ceil((PARQUET_BATCH_ROWS + 1) / table.num_rows)
    pq.write_table(pa.concat_tables([table] * copies), path, row_group_size=PARQUET_BATCH_ROWS)
    offset = pq.ParquetFile(path).metadata.row_group(1).column(2).data_page_offset
    data = bytearray(path.read_bytes())
    data[offset : offset + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))
    where = f"{path}: not a readable Parquet file (reading from row {PARQUET_BATCH_ROWS + 1}): "
    return write_panel(tmp_path, "tbbench", source), [where, "page header"]


def panel_is_a_folder(tmp_path: Path, demo: Demo) -> Case:
    folder = tmp_path / "panels"
    folder.mkdir()
    return folder, [f"{folder}: is a folder, not a panel file"]


def panel_not_utf8(tmp_path: Path, demo: Demo) -> Case:
    path = tmp_path / "panel.yaml"
    path.write_bytes(b"name: caf\xe9\nsuites: [{name: trip, demo: true}]\n")
    return path, [f"{path}: line 1: not UTF-8: b'\\xe9' at byte 9 of the line"]


def unknown_fields_refused(tmp_path: Path, demo: Demo) -> Case:
    source = demo("roadbench")
    labels = source / "task_6" / "labels.jsonl"
    rows = json_rows(labels)
    for row in rows[:3]:
        row["weather"] = "rain"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    panel = write_panel(tmp_path, "roadbench", source, unknown_fields="error")
    return panel, [
        "suite roadbench: rows carry fields outside the suite's row format",
        f"{labels}: 'weather' (3 rows)",
    ]


def v2xqa_image_in_neither_root(tmp_path: Path, demo: Demo) -> Case:
    source = demo("v2xqa")
    annotations = source / "VS1_annotations.jsonl"
    row = json_rows(annotations)[1]
    image = next((source / "images" / "vehicle").glob(f"{row['image_id_vs']}.*"))
    image.unlink()
    # The release would drop the row without a word; roadeval names it.
    where = (
        f"{annotations}, line 2, item 'VS1:{row['sample_id']}', field 'image_id_vs': "
        f"vehicle-side image {row['image_id_vs']!r} not found in {source / 'images' / 'vehicle'}"
    )
    return write_panel(tmp_path, "v2xqa", source), [where]


def v2xqa_top_logprobs_out_of_range(tmp_path: Path, demo: Demo) -> Case:
    panel = write_panel(tmp_path, "v2xqa", demo("v2xqa"), options={"top_logprobs": 25})
    return panel, ["v2xqa option top_logprobs must be an integer from 1 to 20, got 25"]


def stride_ground_truth_malformed(tmp_path: Path, demo: Demo) -> Case:
    questions = demo("stride")
    body = json.loads(questions.read_text(encoding="utf-8"))
    task = next(t for t in body["tasks"] if t["id"] == "TRJ-5")
    task["ground_truth"] = "about five metres ahead"
    questions.write_text(json.dumps(body), encoding="utf-8")
    item = task.get("question_id") or task["id"]
    return write_panel(tmp_path, "stride", questions), [
        f"{questions}",
        "field 'ground_truth'",
        "out of the trajectory means",
        str(item),
    ]


def judged_suite_without_judge(tmp_path: Path, demo: Demo) -> Case:
    return write_panel(tmp_path, "stride", demo("stride")), [
        "stride scores answers with a judge model, and the panel names none",
        "judge: {api_base: URL}",
    ]


CASES: dict[str, Callable[[Path, Demo], Case]] = {
    "trip-line-not-utf8": trip_line_not_utf8,
    "trip-image-not-an-image": trip_image_not_an_image,
    "roadbench-image-truncated": roadbench_image_truncated,
    "tbbench-frame-truncated": tbbench_frame_truncated,
    "tbbench-parquet-truncated": tbbench_parquet_truncated,
    "tbbench-parquet-page-damaged": tbbench_parquet_page_damaged,
    "panel-is-a-folder": panel_is_a_folder,
    "panel-not-utf8": panel_not_utf8,
    "unknown-fields-refused": unknown_fields_refused,
    "v2xqa-image-in-neither-root": v2xqa_image_in_neither_root,
    "v2xqa-top-logprobs-out-of-range": v2xqa_top_logprobs_out_of_range,
    "stride-ground-truth-malformed": stride_ground_truth_malformed,
    "judged-suite-without-judge": judged_suite_without_judge,
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_clear_error(case: str, tmp_path: Path, demo: Demo) -> None:
    panel, expected = CASES[case](tmp_path, demo)
    store = tmp_path / "store"
    result = runner.invoke(app, ["run", "--panel", str(panel), "--store", str(store)])
    output = result.output
    assert result.exit_code == 2, output
    assert "Traceback" not in output
    # Rich wraps long lines; the message is compared with its line breaks undone.
    message = " ".join(output.split())
    assert message.startswith("error: "), message
    for text in expected:
        assert text in message, message
    assert not (store / "tables").exists()


def test_a_v2x_row_without_its_image_is_listed_and_the_rest_runs(
    tmp_path: Path, demo: Demo
) -> None:
    panel, _ = v2xqa_image_in_neither_root(tmp_path, demo)
    body = yaml.safe_load(panel.read_text(encoding="utf-8"))
    body["suites"][0]["on_bad_item"] = "skip"
    panel.write_text(yaml.safe_dump(body), encoding="utf-8")
    source = Path(body["suites"][0]["source"])
    # Every row that shows the removed vehicle image: VS rows and CO rows name it.
    missing = [
        (path.name, row)
        for path in sorted(source.glob("*_annotations.jsonl"))
        for row in json_rows(path)
        if row.get("image_id_vs") == "000101"
    ]
    store = tmp_path / "store"
    result = runner.invoke(app, ["run", "--panel", str(panel), "--store", str(store)])
    assert result.exit_code == 0, result.output
    message = " ".join(result.output.split())
    assert f"v2xqa: {len(missing)} bad rows skipped" in message
    manifest = json.loads(next(store.glob("runs/*/manifest.json")).read_text(encoding="utf-8"))
    (suite,) = manifest["suites"]
    assert len(suite["skipped_items"]) == len(missing) == 8
    assert all("field 'image_id_vs'" in entry for entry in suite["skipped_items"])
    scored = runner.invoke(
        app,
        [
            "query",
            "--store",
            str(store),
            "--format",
            "csv",
            "select count(distinct item_id) from scores",
        ],
    )
    assert scored.output.splitlines()[1] == str(48 - len(missing))
