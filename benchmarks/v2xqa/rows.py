"""The release's annotation rows, checked one by one as its schema.md recommends; shared by the
loader (which adds images) and the prediction scorer (which needs none).

Checks: `task_id` is one of the twelve, `sample_id`, `question_id` and `question` are strings
(ids and question not blank), `options` holds exactly A-D as strings, `selected_option_id` is
one of A-D (stripped and upper-cased, as the release reads it), the image ids the view needs are
non-empty strings (ids, not paths), and (task_id, sample_id) appears once. Strings are stripped
as the release's loader strips them, so that the prompt carries the release's bytes. (The
release skips a bad row without a word.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from roadeval.benchmarks.errors import ItemError, ItemProblem, SuiteSourceError
from roadeval.benchmarks.source_shape import folder_listing
from roadeval.benchmarks.v2xqa.tasks import (
    LETTERS,
    TASK_BY_ID,
    TASK_IDS,
    TASKS,
    VIEW_IMAGES,
    ImageSide,
    TaskSpec,
    item_id,
)

# Every field the release's files carry (`canonical_answer` is optional); others are counted.
ROW_FIELDS: frozenset[str] = frozenset(
    {
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
)


@dataclass(frozen=True)
class AnnotationRow:
    """One checked row: what the prompt, the images and the scorer need (no canonical answer:
    it restates the gold, and nothing a baseline can see may hold it)."""

    spec: TaskSpec
    sample_id: str
    question_id: str
    question: str
    options: dict[str, str]
    gold: str
    image_ids: dict[ImageSide, str]

    @property
    def item_id(self) -> str:
        return item_id(self.spec.task_id, self.sample_id)


def annotation_files(source: Path) -> list[Path]:
    """The release's `{VS,IS,CO}{1..4}_annotations.jsonl` under `source` (a folder, or one such
    file), in task order; a folder with none of them is a SuiteSourceError."""
    if source.is_file():
        if source.name not in {spec.file_name for spec in TASKS}:
            raise SuiteSourceError(
                f"{source}: not a V2X-QA annotation file (expected e.g. VS1_annotations.jsonl)"
            )
        return [source]
    if not source.is_dir():
        raise SuiteSourceError(f"{source}: no such folder")
    found = [source / spec.file_name for spec in TASKS if (source / spec.file_name).is_file()]
    if not found:
        hint = ""
        nested = [p for p in (source / "test", source / "splits" / "test") if p.is_dir()]
        if nested and any((nested[0] / spec.file_name).is_file() for spec in TASKS):
            hint = f" (the files are in {nested[0]}: point the source there)"
        raise SuiteSourceError(
            f"{source}: no V2X-QA annotation files (VS1..4, IS1..4, CO1..4 "
            f"_annotations.jsonl) in this folder{hint or f'; found {folder_listing(source)}'}"
        )
    return found


@dataclass
class RowChecker:
    """Checks rows of any number of files; remembers (task_id, sample_id) to refuse repeats."""

    _first_seen: dict[str, str] = field(default_factory=dict)

    def check(self, path: Path, line: int, row: dict[str, Any]) -> AnnotationRow:
        fail = _Failer(path, line)
        raw_task = row.get("task_id")
        if raw_task is None:
            fail("task_id", "missing")
        if not isinstance(raw_task, str):
            fail("task_id", f"expected str, got {type(raw_task).__name__}")
        task_id = raw_task.strip()
        if task_id not in TASK_BY_ID:
            fail("task_id", f"{raw_task!r} is not a V2X-QA task ({', '.join(TASK_IDS)})")
        spec = TASK_BY_ID[task_id]
        sample_id = _text(row, "sample_id", fail)
        fail.item_id = item_id(task_id, sample_id)
        first = self._first_seen.get(fail.item_id)
        if first is not None:
            fail("sample_id", f"(task_id, sample_id) repeats the row at {first}")
        question_id = _text(row, "question_id", fail, allow_blank=True)
        question = _text(row, "question", fail)
        options = _options(row, fail)
        gold = row.get("selected_option_id")
        if gold is None:
            fail("selected_option_id", "missing")
        if isinstance(gold, str):
            gold = gold.strip().upper()  # as the release reads the gold ("b" is B)
        if gold not in LETTERS:
            fail("selected_option_id", f"{gold!r} is not one of A, B, C, D")
        if gold not in options:
            fail("selected_option_id", f"{gold!r} is not among the options")
        image_ids = {side: _image_id(row, side, fail) for side in VIEW_IMAGES[spec.view]}
        for side in ImageSide:
            value = row.get(side.id_field)
            if side not in image_ids and value is not None and not isinstance(value, str):
                fail(side.id_field, f"expected str or null, got {type(value).__name__}")
        canonical = row.get("canonical_answer")
        if canonical is not None and not isinstance(canonical, str):
            fail("canonical_answer", f"expected str or null, got {type(canonical).__name__}")
        self._first_seen[fail.item_id] = f"{path}, line {line}"
        return AnnotationRow(spec, sample_id, question_id, question, options, gold, image_ids)


class _Failer:
    """Raises ItemErrors naming this row's file, line and (once known) item."""

    def __init__(self, path: Path, line: int) -> None:
        self.path, self.line = path, line
        self.item_id: str | None = None

    def __call__(self, field_name: str, message: str) -> NoReturn:
        raise ItemError(ItemProblem(str(self.path), self.line, field_name, message, self.item_id))


def _text(row: dict[str, Any], key: str, fail: _Failer, allow_blank: bool = False) -> str:
    value = row.get(key)
    if value is None:
        fail(key, "missing")
    if not isinstance(value, str):
        fail(key, f"expected str, got {type(value).__name__}")
    if not allow_blank and not value.strip():
        fail(key, "blank")
    return value.strip()


def _options(row: dict[str, Any], fail: _Failer) -> dict[str, str]:
    value = row.get("options")
    if value is None:
        fail("options", "missing")
    if not isinstance(value, dict):
        fail("options", f"expected an object, got {type(value).__name__}")
    if sorted(value) != list(LETTERS):
        fail("options", f"expected exactly the keys A, B, C, D, got {', '.join(map(str, value))}")
    for letter in LETTERS:
        if not isinstance(value[letter], str):
            fail("options", f"option {letter}: expected str, got {type(value[letter]).__name__}")
    # The release's normalize_options: each option stripped, in A-D order.
    return {letter: value[letter].strip() for letter in LETTERS}


def _image_id(row: dict[str, Any], side: ImageSide, fail: _Failer) -> str:
    name = side.id_field
    value = _text(row, name, fail)
    if "/" in value or "\\" in value or value in {".", ".."}:
        fail(name, f"{value!r} is a path; expected an image id (a file name stem)")
    return value
