"""Builds TB-Bench Items from either released layout, one row per item."""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.loading import DEFAULT_LIMITS, LoadLimits, LoadReport, collect
from roadeval.benchmarks.tbbench.frames import row_frames
from roadeval.benchmarks.tbbench.keywords import ORIENTATION
from roadeval.benchmarks.tbbench.prompt import asks_format_only
from roadeval.benchmarks.tbbench.rows import (
    ROW_FIELDS,
    Layout,
    Row,
    RowIds,
    find_source_files,
    iter_rows,
    read_choices,
    require_text,
    row_error,
)
from roadeval.benchmarks.tbbench.tasks import SUITE_NAME, RuleFamily, TaskSpec


def gold_kind(spec: TaskSpec, solution: str) -> str:
    """distance, angle or class: which reading the release compares with this gold."""
    if spec.family is RuleFamily.DISTANCE:
        return "distance"
    if spec.family is RuleFamily.ORIENTATION and solution not in ORIENTATION.classes:
        return "angle"
    return "class"


def load_items(
    source: Path,
    *,
    suite_version: str,
    policy: BadItemPolicy,
    add_choices: bool,
    limits: LoadLimits = DEFAULT_LIMITS,
) -> LoadReport:
    """Every row of every file under `source`; bad rows raise (ERROR) or are reported (SKIP)."""
    found = find_source_files(source)
    ids = RowIds()
    report = LoadReport()
    for path in found.files:

        def build(line: int, row: Row, path: Path = path) -> Item:
            return _build_item(path, line, row, ids, found.layout, suite_version, add_choices)

        rows = iter_rows(path, found.layout, limits=limits)
        collect(rows, build, policy, report, file=path, known_fields=ROW_FIELDS)
    return report


def _build_item(
    path: Path,
    line: int,
    row: Row,
    ids: RowIds,
    layout: Layout,
    suite_version: str,
    add_choices: bool,
) -> Item:
    item_id, spec = ids.assign(path, line, row)
    problem = require_text(path, line, row, "problem", item_id)
    solution = require_text(path, line, row, "solution", item_id)
    choices = read_choices(path, line, row, item_id)
    if add_choices and not choices and not asks_format_only(spec.release_name, problem):
        raise row_error(path, line, "choice", "add_choices needs the row's choices", item_id)
    media = row_frames(path, line, row, item_id, layout)
    kind = gold_kind(spec, solution)
    return Item(
        suite=SUITE_NAME,
        suite_version=suite_version,
        item_id=item_id,
        task=spec.code,
        question=problem,
        options={chr(ord("A") + index): choice for index, choice in enumerate(choices)},
        answer_kind=AnswerKind.LABEL if kind == "class" else AnswerKind.NUMBER,
        reference=solution,
        media=media,
        labels={"release_task": spec.release_name, "gold_kind": kind, "frames": str(len(media))},
    )
