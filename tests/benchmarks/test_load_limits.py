"""The load limits (`benchmarks.loading.LoadLimits`), one place for every suite and layout: a row
nested too deeply, a text too long, a line too long, a number JSON has not, a lone surrogate. Each
is a bad row naming file, line (or row, or item) and field, never a traceback; each bound is a
suite option."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, SuiteSourceError
from roadeval.benchmarks.loading import (
    DEFAULT_LIMITS,
    READ_LIMITS,
    LoadLimits,
    limit_problem,
    read_jsonl,
    take_limits,
)
from roadeval.benchmarks.registry import get_suite

NAMES = ("trip", "roadbench", "tbbench", "v2xqa", "stride")


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("demos")
    return {name: get_suite(name).generate_demo(root / name) for name in NAMES}


def copy_of(demos: dict[str, Path], name: str, tmp_path: Path) -> Path:
    source = demos[name]
    if source.is_dir():
        return Path(shutil.copytree(source, tmp_path / name))
    return Path(shutil.copytree(source.parent, tmp_path / name)) / source.name


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def nested(depth: int) -> Any:
    """A value of `depth` levels of lists, innermost a number."""
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# --- the reader every JSONL suite shares -----------------------------------------------------


def test_a_line_of_100000_brackets_is_one_bad_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "a"}\n' + "[" * 100_000 + "\n" + '{"id": "b"}\n', encoding="utf-8")
    read = list(read_jsonl(path))
    assert [line for line, _ in read] == [1, 2, 3]
    error = read[1][1]
    assert isinstance(error, ItemError)
    assert (error.problem.file, error.problem.line) == (str(path), 2)
    assert "nested deeper than 64 levels" in error.problem.message
    assert read[2][1] == {"id": "b"}


def test_depth_64_reads_and_65_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    # The row object is level 1: a field holding 63 levels of lists is 64 deep.
    ok = {"id": "a", "deep": nested(63)}
    deep = {"id": "b", "question": "q", "deep": {"x": nested(63)}}
    write_lines(path, [json.dumps(ok), json.dumps(deep)])
    (_, first), (_, second) = read_jsonl(path)
    assert first == ok
    assert isinstance(second, ItemError)
    problem = second.problem
    assert (problem.line, problem.field, problem.item_id) == (2, "deep", "b")
    assert problem.message == "nested deeper than 64 levels (suite option max_depth)"
    assert list(read_jsonl(path, LoadLimits(max_depth=65)))[1][1] == deep


def test_a_long_text_names_its_field_and_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [
        {"id": "a", "question": "x" * 1_000_000},
        {"id": "b", "options": {"A": "ok", "B": "y" * 1_000_001}},
        {"id": "c", "choice": ["ok", "z" * 2_000_000]},
        {"id": "d", "k" * 1_000_001: 1},
    ]
    write_lines(path, [json.dumps(row) for row in rows])
    read = [row for _, row in read_jsonl(path, DEFAULT_LIMITS)]
    assert read[0] == rows[0]
    problems = [(r.problem.line, r.problem.field, r.problem.message) for r in read[1:]]
    assert problems[0] == (
        2,
        "options.B",
        "text of 1,000,001 characters, over the limit of 1,000,000 (suite option max_text_chars)",
    )
    assert problems[1][:2] == (3, "choice[1]")
    assert problems[2][0] == 4 and problems[2][2].startswith("the key: text of 1,000,001")
    # A file read outside a suite's load (a release's predictions: replies may be long) has
    # no bound on text; the other bounds hold.
    assert [row for _, row in read_jsonl(path)] == rows
    assert (READ_LIMITS.max_depth, READ_LIMITS.max_row_bytes) == (64, 64 * 2**20)


def test_a_line_over_max_row_bytes_is_skipped_unread(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    long = json.dumps({"id": "b", "question": "q" * 5000})
    write_lines(path, ['{"id": "a"}', long, '{"id": "c"}'])
    read = list(read_jsonl(path, LoadLimits(max_row_bytes=1000)))
    assert [line for line, _ in read] == [1, 2, 3]
    error = read[1][1]
    assert isinstance(error, ItemError)
    assert error.problem.message == (
        f"line of {len(long):,} bytes, over the limit of 1,000 (suite option max_row_bytes)"
    )
    assert read[2][1] == {"id": "c"}
    # Exactly at the limit reads (the newline is not counted).
    assert list(read_jsonl(path, LoadLimits(max_row_bytes=len(long))))[1][1] == json.loads(long)


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ('{"id": "a", "n": ' + "9" * 5000 + "}", None, "a number too large"),
        ('{"id": "a", "q": "bad \\ud800 text"}', "q", "lone surrogate"),
        ('{"id": "a", "q": {"\\udfff": 1}}', "q.'\\udfff'...", "the key: holds a lone"),
        ("[1, 2]", None, "row is not a JSON object"),
        ('{"id": "a", ', None, "not JSON"),
    ],
)
def test_numbers_python_cannot_read_and_text_no_file_can_hold(
    tmp_path: Path, text: str, field: str | None, message: str
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    ((_, error),) = read_jsonl(path)
    assert isinstance(error, ItemError), error
    assert (error.problem.line, error.problem.field) == (1, field)
    assert message in error.problem.message


def test_limit_problem_walks_any_depth_python_reads_without_recursing() -> None:
    row = {"deep": nested(900)}
    assert limit_problem(row, DEFAULT_LIMITS) == (
        "deep",
        "nested deeper than 64 levels (suite option max_depth)",
    )
    assert limit_problem({"blob": b"\x00" * 2_000_000}, DEFAULT_LIMITS) is None


# --- the limits as suite options -------------------------------------------------------------


def test_every_suite_takes_the_limits_as_options() -> None:
    for name in NAMES:
        suite = get_suite(name, max_depth=8, max_text_chars=100, max_row_bytes=4096)
        assert suite.limits == LoadLimits(8, 100, 4096), name
        assert get_suite(name).limits == DEFAULT_LIMITS, name


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"max_text_chars": 0},
            "option max_text_chars must be a positive integer up to 1,073,741,824, got 0",
        ),
        (
            {"max_row_bytes": "64M"},
            "option max_row_bytes must be a positive integer up to 1,073,741,824, got '64M'",
        ),
        ({"max_row_bytes": 2**40}, "option max_row_bytes must be a positive integer up to"),
        ({"max_depth": True}, "option max_depth must be a positive integer up to 512, got True"),
        ({"max_depth": 10_000}, "option max_depth must be a positive integer up to 512"),
    ],
)
def test_a_bad_limit_option_names_suite_and_option(options: dict[str, Any], message: str) -> None:
    for name in NAMES:
        with pytest.raises(ValueError, match=f"suite '{name}': {message}"):
            get_suite(name, **options)


def test_take_limits_takes_only_the_limits() -> None:
    options: dict[str, Any] = {"max_depth": 3, "images": "x"}
    assert take_limits("stride", options) == LoadLimits(max_depth=3)
    assert options == {"images": "x"}


# --- each suite's own reading ----------------------------------------------------------------


def test_trip_a_20mb_question_is_refused_and_an_option_admits_it(
    demos: dict[str, Path], tmp_path: Path
) -> None:
    source = copy_of(demos, "trip", tmp_path)
    items = source / "items.jsonl"
    rows = rows_of(items)
    rows[2]["question"] = "Which lane? " + "x" * 20_000_000
    write_lines(items, [json.dumps(row) for row in rows])
    with pytest.raises(ItemError) as caught:
        get_suite("trip").load(source)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field, problem.item_id) == (
        str(items),
        3,
        "question",
        rows[2]["id"],
    )
    assert "over the limit of 1,000,000" in problem.message
    report = get_suite("trip").load(source, on_bad_item=BadItemPolicy.SKIP)
    assert len(report.items) == len(rows) - 1
    admitted = get_suite("trip", max_text_chars=30_000_000).load(source)
    assert len(admitted.items) == len(rows)


def test_roadbench_labels_and_extra_labels_are_held_to_the_limits(
    demos: dict[str, Path], tmp_path: Path
) -> None:
    source = copy_of(demos, "roadbench", tmp_path)
    labels = source / "task_3" / "labels.jsonl"
    rows = rows_of(labels)
    rows[1]["ground_truth"]["lines"] = nested(80)
    write_lines(labels, [json.dumps(row) for row in rows])
    extra = source / "task_4_5" / "extra_labels.jsonl"
    lines = extra.read_text(encoding="utf-8").splitlines()
    lines[0] = '{"a": ' * 50_000
    write_lines(extra, lines)
    report = get_suite("roadbench").load(source, on_bad_item=BadItemPolicy.SKIP)
    found = {(p.file, p.line, p.field) for p in report.skipped}
    assert found == {(str(extra), 1, None), (str(labels), 2, "ground_truth")}
    assert all("nested deeper than 64" in p.message for p in report.skipped)


def test_tbbench_parquet_rows_are_held_to_the_same_limits(
    demos: dict[str, Path], tmp_path: Path
) -> None:
    source = copy_of(demos, "tbbench", tmp_path)
    path = sorted((source / "data").glob("*.parquet"))[0]
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[1]["problem"] = "p" * 1_000_001
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    with pytest.raises(ItemError) as caught:
        get_suite("tbbench").load(source)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field) == (str(path), 2, "problem")
    assert "over the limit of 1,000,000" in problem.message
    assert len(get_suite("tbbench", max_text_chars=2_000_000).load(source).items) > 0


def test_v2xqa_an_option_too_long_names_file_line_and_option(
    demos: dict[str, Path], tmp_path: Path
) -> None:
    source = copy_of(demos, "v2xqa", tmp_path)
    annotations = source / "IS2_annotations.jsonl"
    rows = rows_of(annotations)
    rows[0]["options"]["C"] = "c" * 1_000_001
    write_lines(annotations, [json.dumps(row) for row in rows])
    with pytest.raises(ItemError) as caught:
        get_suite("v2xqa").load(source)
    problem = caught.value.problem
    assert (problem.file, problem.line, problem.field) == (str(annotations), 1, "options.C")


def test_stride_rows_and_the_file_are_held_to_the_limits(
    demos: dict[str, Path], tmp_path: Path
) -> None:
    questions = copy_of(demos, "stride", tmp_path)
    body = json.loads(questions.read_text(encoding="utf-8"))
    n = len(body["tasks"])
    body["tasks"][0]["question"] = "q" * 1_000_001
    body["tasks"][1]["choices"] = {"A": nested(70)}
    body["tasks"][2]["ground_truth"] = "\ud800"
    questions.write_text(json.dumps(body), encoding="utf-8")
    suite = get_suite("stride", images=None)
    with pytest.raises(ItemError) as caught:
        suite.load(questions)
    assert (caught.value.problem.file, caught.value.problem.field) == (str(questions), "question")
    assert caught.value.problem.item_id == "tasks[0]"
    report = suite.load(questions, on_bad_item=BadItemPolicy.SKIP)
    assert [(p.item_id, p.field) for p in report.skipped] == [
        ("tasks[0]", "question"),
        ("tasks[1]", "choices"),
        ("tasks[2]", "ground_truth"),
    ]
    assert len(report.items) == n - 3
    # Too deep for Python's reader at all: the file is refused, naming it.
    questions.write_text('{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(SuiteSourceError, match=r"questions.json: nested deeper than 64 levels"):
        suite.load(questions)
    questions.write_text('{"meta": {"split": "' + "w" * 1_000_001 + '"}, "tasks": []}')
    with pytest.raises(SuiteSourceError, match=r"questions.json: meta.split: text of 1,000,001"):
        suite.load(questions)
