"""`roadeval qc SUITE --source PATH` for every suite, through the command line: each demo passes;
a fault planted in a copy of it is found, named by its rule, item, field, file and line, and
exits 1; a source that is not the suite's layout exits 2 with one line saying what was expected
and what was found."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.demo import demo_id
from roadeval.benchmarks.tbbench.demo import SCHEMA as TBBENCH_SCHEMA

from support import probe_suite  # noqa: F401  (registers the suite)
from support.trip_panel import invoke

SUITES = ("trip", "roadbench", "tbbench", "v2xqa", "stride")
Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """suite -> (the demo's folder, its source), each generated once by the suite itself."""
    made = {}
    for suite in SUITES:
        root = tmp_path_factory.mktemp(f"qc-{suite}")
        made[suite] = (root, get_suite(suite).generate_demo(root))
    return made


@pytest.fixture
def demo_copy(demos: dict[str, tuple[Path, Path]], tmp_path: Path) -> Callable[[str], Path]:
    """A private copy of a suite's demo: its source, to plant a fault in."""

    def copy(suite: str) -> Path:
        root, source = demos[suite]
        target = Path(shutil.copytree(root, tmp_path / suite))
        return target / source.relative_to(root)

    return copy


def qc(suite: str, source: Path) -> tuple[int, dict[str, Any]]:
    """Exit code and the JSON report."""
    result = invoke("qc", suite, "--source", str(source), "--format", "json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def edit_jsonl(path: Path, edit: Callable[[Rows], Rows]) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(row) + "\n" for row in edit(rows)), encoding="utf-8")


def edit_parquet(path: Path, edit: Callable[[Rows], Rows]) -> None:
    rows = edit(pq.read_table(path).to_pylist())
    pq.write_table(pq.read_table(path).from_pylist(rows, schema=TBBENCH_SCHEMA), path)


def edit_questions(path: Path, edit: Callable[[Rows], Rows]) -> None:
    payload = json.loads(path.read_text(encoding="utf-8"))
    payload["tasks"] = edit(payload["tasks"])
    path.write_text(json.dumps(payload), encoding="utf-8")


def set_field(index: int, **values: Any) -> Callable[[Rows], Rows]:
    def edit(rows: Rows) -> Rows:
        rows[index].update(values)
        return rows

    return edit


@pytest.mark.parametrize("suite", SUITES)
def test_each_demo_passes_every_rule(demos: dict[str, tuple[Path, Path]], suite: str) -> None:
    code, report = qc(suite, demos[suite][1])
    assert code == 0 and report["passed"]
    assert report["n_items"] > 0 and report["n_refused"] == 0
    assert {rule["status"] for rule in report["rules"]} == {"pass"}
    assert "ids" in {rule["rule"] for rule in report["rules"]}


# Where a suite's rows go, for a foreign file to stand in for them.
FILE_OF = {
    "trip": "items.jsonl",
    "roadbench": "task_6/labels.jsonl",
    "tbbench": "rows.jsonl",
    "v2xqa": "VS1_annotations.jsonl",
    "stride": "questions.json",
}
PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
V2XQA_ROW = {
    "sample_id": "000100",
    "task_id": "VS1",
    "question_id": "VS1_Q1",
    "question": "Which road layout is ahead of the ego vehicle?",
    "options": {"A": "A crossing.", "B": "A straight road.", "C": "A merge.", "D": "Works."},
    "selected_option_id": "A",
    "image_id_vs": "000100",
    "image_id_is": None,
}
TRIP_ROW = {"id": "V_t_1", "question": "Q?", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"}
# What each suite's refusal says it expected.
EXPECTED = {
    "trip": "is not a TRIP items.jsonl",
    "roadbench": "is not RoadBench's task_6 labels",
    "tbbench": "is not a TB-Bench split",
    "v2xqa": "is not a V2X-QA annotation file",
    "stride": "a STRIDE questions file",
}


def _foreign(tmp_path: Path, suite: str, text: str) -> Path:
    path = tmp_path / "foreign" / FILE_OF[suite]
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return tmp_path / "foreign" if suite == "roadbench" else path


def _assert_refused(suite: str, source: Path, found: str) -> None:
    result = invoke("qc", suite, "--source", str(source))
    said = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert said.startswith("error: ") and said.count("error:") == 1, said
    assert EXPECTED[suite] in said and found in said, said
    assert "Traceback" not in result.output


@pytest.mark.parametrize("suite", SUITES)
def test_a_text_file_in_the_suites_place_is_refused(tmp_path: Path, suite: str) -> None:
    _assert_refused(suite, _foreign(tmp_path, suite, PASSWD), "not JSON")


@pytest.mark.parametrize("suite", SUITES)
def test_another_suites_rows_are_refused(tmp_path: Path, suite: str) -> None:
    row = TRIP_ROW if suite in ("v2xqa", "stride") else V2XQA_ROW
    text = json.dumps({"tasks": [row]}) if suite == "stride" else json.dumps(row) + "\n"
    found = "'sample_id'" if row is V2XQA_ROW else "'A'"
    _assert_refused(suite, _foreign(tmp_path, suite, text), found)


def _trip_image_gone(source: Path) -> None:
    (source / "images" / "P_i_1.png").unlink()


def _roadbench_road_type(source: Path) -> None:
    edit_jsonl(source / "task_6" / "labels.jsonl", set_field(0, road_type="highway"))


def _roadbench_image_gone(source: Path) -> None:
    (source / "task_3" / f"{demo_id('network', 1)}.png").unlink()


def _tbbench_gold(source: Path) -> None:
    edit_parquet(
        source / "data" / "relative_distance-00000-of-00001.parquet",
        set_field(0, solution="far apart"),
    )


def _tbbench_short_clip(source: Path) -> None:
    def drop_frame(rows: Rows) -> Rows:
        rows[1]["image"] = rows[1]["image"][:7]
        return rows

    edit_parquet(source / "data" / "ego_turning-00000-of-00001.parquet", drop_frame)


def _v2xqa_gold(source: Path) -> None:
    edit_jsonl(source / "VS1_annotations.jsonl", set_field(0, selected_option_id="E"))


def _v2xqa_asked_twice(source: Path) -> None:
    def repeat(rows: Rows) -> Rows:
        return [*rows, {**rows[2], "sample_id": "999999"}]

    edit_jsonl(source / "CO2_annotations.jsonl", repeat)


def _stride_short_trajectory(source: Path) -> None:
    def cut(rows: Rows) -> Rows:
        first = next(row for row in rows if row["id"] == "TRJ-5")
        first["ground_truth"] = json.dumps(json.loads(first["ground_truth"])[:4])
        return rows

    edit_questions(source, cut)


def _stride_repeated_row(source: Path) -> None:
    edit_questions(source, lambda rows: [*rows, dict(rows[1])])


def _stride_no_red_box(source: Path) -> None:
    (source.parent / "scene_002" / "group_001_selected_vehicle_render.jpg").unlink()


# suite, fault, then what the report says: rule, item id, field, the message's words, and the
# file and line of the row (None where rows have no lines).
PLANTED = {
    "trip-missing-image": (
        "trip", _trip_image_gone, "media", "P_i_1", "image", "file not found", "items.jsonl", 27
    ),
    "roadbench-unknown-road-type": (
        "roadbench", _roadbench_road_type, "labels", "6:", "road_type", "'highway' is not one",
        "task_6/labels.jsonl", 1,
    ),
    "roadbench-missing-image": (
        "roadbench", _roadbench_image_gone, "images", demo_id("network", 1), "image",
        "does not exist",
        "task_3/labels.jsonl", 2,
    ),
    "tbbench-unreadable-gold": (
        "tbbench", _tbbench_gold, "gold", "RD-0000", "solution", "no '<number> meters'",
        "relative_distance-00000-of-00001.parquet", 1,
    ),
    "tbbench-short-clip": (
        "tbbench", _tbbench_short_clip, "frames", "EGO-TURN-0001", "image",
        "7 frame(s); a EGO-TURN item shows 8", "ego_turning-00000-of-00001.parquet", 2,
    ),
    "v2xqa-gold-outside-options": (
        "v2xqa", _v2xqa_gold, "options", "VS1:", "selected_option_id", "'E' is not one of",
        "VS1_annotations.jsonl", 1,
    ),
    "v2xqa-question-asked-twice": (
        "v2xqa", _v2xqa_asked_twice, "duplicate-questions", "CO2:999999", "question",
        "asks again what 'CO2:", "CO2_annotations.jsonl", 5,
    ),
    "stride-short-trajectory": (
        "stride", _stride_short_trajectory, "gold", "TRJ-5:scene_001", "ground_truth",
        "the gold has 4 waypoints; TRJ-5 states 5", "questions.json", None,
    ),
    "stride-repeated-row": (
        "stride", _stride_repeated_row, "ids", "TM-2:scene_001", "question",
        "repeats the matching key of tasks[1]", "questions.json", None,
    ),
    "stride-query-frame-without-box": (
        "stride", _stride_no_red_box, "box", "SP-1:scene_002", "source_group_file",
        "has no red box", "questions.json", None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", PLANTED)
def test_a_planted_fault_is_found_where_it_is(demo_copy: Callable[[str], Path], case: str) -> None:
    suite, plant, rule, item, field, words, file, line = PLANTED[case]
    source = demo_copy(suite)
    plant(source)
    code, report = qc(suite, source)
    assert code == 1 and not report["passed"]
    rules = {entry["rule"]: entry for entry in report["rules"]}
    failed = [name for name, entry in rules.items() if entry["status"] == "fail"]
    assert failed == [rule], json.dumps(report, indent=1)
    finding = rules[rule]["findings"][0]
    assert rules[rule]["count"] == len(rules[rule]["findings"]) >= 1
    assert finding["status"] == "fail"
    assert item in (finding["item_id"] or ""), finding
    assert finding["field"] == field and words in finding["message"], finding
    assert finding["file"].endswith(file) and finding["line"] == line, finding


def test_the_table_names_the_file_line_item_and_field(demo_copy: Callable[[str], Path]) -> None:
    source = demo_copy("roadbench")
    _roadbench_road_type(source)
    result = invoke("qc", "roadbench", "--source", str(source))
    said = " ".join(result.output.split())
    assert result.exit_code == 1
    assert "task_6/labels.jsonl:1, item 6:" in said and "field road_type (fail)" in said
    assert "quality checks failed: labels" in said
    assert "(60 items read, 0 rows refused by the loader)" in said


def test_image_roots_are_suite_options(demo_copy: Callable[[str], Path], tmp_path: Path) -> None:
    source = demo_copy("v2xqa")
    moved = Path(shutil.move(source / "images" / "vehicle", tmp_path / "elsewhere"))
    code, report = qc("v2xqa", source)
    assert code == 1 and [r["rule"] for r in report["rules"] if r["status"] == "fail"] == ["images"]
    option = f"vehicle_images={moved}"
    result = invoke("qc", "v2xqa", "--source", str(source), "--option", option)
    assert result.exit_code == 0, result.output


def test_a_suite_without_rules_of_its_own_gets_the_shared_checks(tmp_path: Path) -> None:
    row = {"id": "q1", "question": "Which?", "options": {"A": "x", "B": "y"}, "answer": "A"}
    rows = [row, {**row, "id": "q2"}, {**row, "id": "q1", "question": "Other?"}]
    source = tmp_path / "probe.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, report = qc("contract-probe", source)
    assert code == 1
    rules = {entry["rule"]: entry for entry in report["rules"]}
    assert list(rules) == ["format", "ids", "duplicate-questions"]
    (repeat,) = rules["duplicate-questions"]["findings"]
    assert repeat["item_id"] == "q2" and "asks again what 'q1' asks" in repeat["message"]
    assert (repeat["file"], repeat["line"]) == (str(source), 2)
    (same_id,) = rules["ids"]["findings"]
    assert same_id["line"] == 3 and same_id["field"] == "id"
