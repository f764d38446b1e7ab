"""Loading the release layouts: items per task, ids, labels, the task 2/5 filter, and clear
errors (file, line, field) for bad rows, with SKIP loading the rest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.loader import designation_kept

SUITE = get_suite("roadbench")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return SUITE.generate_demo(tmp_path_factory.mktemp("rb-demo"))


def copy_of(demo: Path, tmp_path: Path) -> Path:
    target = tmp_path / "release"
    shutil.copytree(demo, target)
    return target


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path: Path, content: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in content), encoding="utf-8")


def test_demo_loads_every_task_with_unique_ids(demo: Path) -> None:
    report = SUITE.load(demo)
    assert report.skipped == []
    tasks = [item.task for item in report.items]
    assert {task: tasks.count(task) for task in set(tasks)} == {str(t): 10 for t in range(1, 7)}
    ids = [item.item_id for item in report.items]
    assert len(ids) == len(set(ids))
    first = report.items[0]
    assert first.item_id == f"1:{first.extra['release_id']}"
    assert first.labels == {"task_name": "bev_lane_counting", "view": "bev"}
    assert first.extra["image_size"] == [400, 400]
    assert first.media[0].role == "bev"


def test_conditions_become_a_label_for_tasks_4_and_5(demo: Path) -> None:
    items = SUITE.load(demo).items
    conditions = {item.labels.get("condition") for item in items if item.task in {"4", "5"}}
    assert conditions == {"none", "光照不佳", "地面标识遮盖"}
    assert all("condition" not in item.labels for item in items if item.task in {"1", "6"})


def test_repository_layout_with_dataset_folder(demo: Path, tmp_path: Path) -> None:
    source = copy_of(demo, tmp_path)
    for folder in ("task_3", "task_6"):
        dataset = source / folder / "dataset"
        dataset.mkdir()
        for path in list((source / folder).iterdir()):
            if path.is_file():
                path.rename(dataset / path.name)
    report = SUITE.load(source)
    assert sum(item.task == "3" for item in report.items) == 10
    assert sum(item.task == "6" for item in report.items) == 10


def test_absent_folders_yield_no_items(demo: Path, tmp_path: Path) -> None:
    source = copy_of(demo, tmp_path)
    shutil.rmtree(source / "task_3")
    shutil.rmtree(source / "task_4_5")
    tasks = {item.task for item in SUITE.load(source).items}
    assert tasks == {"1", "2", "6"}


def test_no_label_file_at_all_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SuiteSourceError):
        SUITE.load(tmp_path)


def test_designation_filter_follows_the_release_datasets() -> None:
    assert designation_kept(2, ["B", "CD"], "ABCD")
    assert not designation_kept(0, [], "ABCD")
    assert not designation_kept(3, ["B", "C"], "ABCD")
    assert not designation_kept(2, ["B", "G"], "ABCD")
    assert designation_kept(2, ["B", "G"], "ABCDG")


def test_rows_outside_the_designation_filter_still_count_lanes(demo: Path, tmp_path: Path) -> None:
    source = copy_of(demo, tmp_path)
    labels = source / "task_1_2" / "labels.jsonl"
    content = rows(labels)
    content[0]["laneinfo"] = content[0]["laneinfo"] + ["C"]
    write_rows(labels, content)
    items = SUITE.load(source).items
    assert sum(item.task == "1" for item in items) == 10
    assert sum(item.task == "2" for item in items) == 9


def break_row(source: Path, folder: str, index: int, change: dict, drop: str | None = None) -> Path:
    labels = source / folder / "labels.jsonl"
    content = rows(labels)
    content[index].update(change)
    if drop:
        del content[index][drop]
    write_rows(labels, content)
    return labels


@pytest.mark.parametrize(
    ("folder", "change", "drop", "field", "message"),
    [
        ("task_1_2", {}, "id", "id", "missing"),
        ("task_1_2", {"pixel_line": "LINESTRING (1 2, 3"}, None, "pixel_line", "does not parse"),
        (
            "task_3",
            {"ground_truth": {"junctions": ["POINT (1 2"], "lines": []}},
            None,
            "ground_truth.junctions",
            "does not parse",
        ),
        (
            "task_3",
            {"ground_truth": {"junctions": [], "lines": ["POINT (1 2)"]}},
            None,
            "ground_truth.lines",
            "LINESTRING",
        ),
        ("task_4_5", {"num_lane": "3"}, None, "num_lane", "expected int"),
        ("task_6", {"img": "missing.png"}, None, "image", "does not exist"),
    ],
)
def test_bad_rows_name_file_line_and_field(
    demo: Path,
    tmp_path: Path,
    folder: str,
    change: dict,
    drop: str | None,
    field: str,
    message: str,
) -> None:
    source = copy_of(demo, tmp_path)
    labels = break_row(source, folder, 2, change, drop)
    with pytest.raises(ItemError) as caught:
        SUITE.load(source)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field) == (str(labels), 3, field)
    assert message in problem.message
    assert str(labels) in str(caught.value) and "line 3" in str(caught.value)


def test_missing_image_and_skip_policy_loads_the_rest(demo: Path, tmp_path: Path) -> None:
    source = copy_of(demo, tmp_path)
    victim = rows(source / "task_4_5" / "labels.jsonl")[4]["id"]
    (source / "task_4_5" / f"{victim}.png").unlink()
    break_row(source, "task_3", 0, {"pixel_line": "not wkt"})
    with pytest.raises(ItemError, match="pixel_line"):
        SUITE.load(source)
    report = SUITE.load(source, on_bad_item=BadItemPolicy.SKIP)
    assert [(p.field, p.line, p.item_id) for p in report.skipped] == [
        ("pixel_line", 1, rows(source / "task_3" / "labels.jsonl")[0]["id"]),
        ("image", 5, victim),
    ]
    tasks = [item.task for item in report.items]
    assert tasks.count("3") == 9 and tasks.count("4") == 9 and tasks.count("1") == 10


def test_duplicate_ids_are_refused(demo: Path, tmp_path: Path) -> None:
    source = copy_of(demo, tmp_path)
    labels = source / "task_6" / "labels.jsonl"
    content = rows(labels)
    write_rows(labels, [*content, content[0]])
    with pytest.raises(ItemError, match="duplicate"):
        SUITE.load(source)
