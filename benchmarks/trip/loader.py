"""Reads a TRIP `items.jsonl` (and the images it names) into Items, checking the schema row by row.

A row that breaks the format (a missing field, an answer outside A-D, an unknown modality or
difficulty, a missing image or one that is not a readable image, a repeated id) raises an
ItemError naming file, line and field, or is skipped and reported under `BadItemPolicy.SKIP`.
Row keys outside the format are counted in the report's `unknown_fields`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, NoReturn

from roadeval.benchmarks.errors import BadItemPolicy, ItemError, ItemProblem, SuiteSourceError
from roadeval.benchmarks.image_check import NotAnImageError, image_media
from roadeval.benchmarks.item import AnswerKind, Item, Media, MediaKind
from roadeval.benchmarks.loading import (
    DEFAULT_LIMITS,
    LoadLimits,
    LoadReport,
    collect,
    is_file,
    read_jsonl,
    require,
)
from roadeval.benchmarks.pointcloud import POINT_CLOUD_SUFFIXES
from roadeval.benchmarks.source_shape import folder_listing
from roadeval.benchmarks.trip.taxonomy import (
    BEV_ROLE,
    DIFFICULTIES,
    FRONT_ROLE,
    IMAGE_MIME_TYPES,
    ITEMS_FILE,
    LABEL_FIELDS,
    LETTERS,
    MODALITY_SPELLINGS,
    POINT_CLOUD_ROLE,
    ROW_FIELDS,
    SUITE_NAME,
    TASK,
    VERSION_FILE,
    Modality,
)

# Fields that hold free text tags: required and non-empty, but not limited to a fixed list.
_TAG_FIELDS = ("role_tag", "subject_tag", "knowledge_point", "capability_tag")


def items_path(source: Path) -> Path:
    """The items file of a source given as its folder or as the file itself, made absolute so
    that media paths stay valid whatever the working directory later is."""
    path = source / ITEMS_FILE if source.is_dir() else source
    if not path.is_file():
        found = f" (found {folder_listing(source)})" if source.is_dir() else ""
        raise SuiteSourceError(f"TRIP source {source}: no {ITEMS_FILE} found{found}")
    return path.absolute()


def suite_version(items_file: Path) -> str:
    """The VERSION file's first line if the folder has one, else a hash of the items file."""
    version_file = items_file.parent / VERSION_FILE
    if version_file.is_file():
        try:
            lines = version_file.read_text(encoding="utf-8").strip().splitlines()
        except UnicodeDecodeError as exc:
            raise SuiteSourceError(f"{version_file}: not UTF-8 at byte {exc.start}") from None
        if lines and lines[0].strip():
            return lines[0].strip()
    return "sha256:" + hashlib.sha256(items_file.read_bytes()).hexdigest()[:16]


def load_items(
    source: Path,
    policy: BadItemPolicy = BadItemPolicy.ERROR,
    limits: LoadLimits = DEFAULT_LIMITS,
) -> LoadReport:
    """Load every row of the source's items file; see the module docstring for the checks."""
    path = items_path(Path(source))
    builder = _RowBuilder(path, suite_version(path))
    report = LoadReport()
    rows = read_jsonl(path, limits)
    collect(rows, builder.build, policy, report, file=path, known_fields=ROW_FIELDS)
    return report


class _RowBuilder:
    """Turns rows into Items; remembers ids seen so far to reject duplicates."""

    def __init__(self, path: Path, version: str) -> None:
        self.path = path
        self.version = version
        self.first_line_of: dict[str, int] = {}

    def build(self, line: int, row: dict[str, Any]) -> Item:
        item_id = _text(row, "id", self.path, line)
        if item_id in self.first_line_of:
            first = self.first_line_of[item_id]
            self._fail(line, "id", f"duplicate id (first on line {first})", item_id)
        question = _text(row, "question", self.path, line)
        options = {letter: require(row, letter, self.path, line, str) for letter in LETTERS}
        answer = self._answer(row, line, item_id, options)
        labels = self._labels(row, line, item_id)
        explanation = require(row, "explanation", self.path, line, str)
        media = self._media(row, line, item_id, Modality(labels["modality"]))
        item = Item(
            suite=SUITE_NAME,
            suite_version=self.version,
            item_id=item_id,
            task=TASK,
            question=question,
            options=options,
            answer_kind=AnswerKind.CHOICE,
            reference=answer,
            media=media,
            labels=labels,
            extra={"explanation": explanation},
        )
        self.first_line_of[item_id] = line
        return item

    def _answer(self, row: dict[str, Any], line: int, item_id: str, options: dict[str, str]) -> str:
        answer = require(row, "answer", self.path, line, str).strip().upper()
        if answer not in LETTERS:
            self._fail(line, "answer", f"{row['answer']!r} is not one of A, B, C, D", item_id)
        if not options[answer].strip():
            self._fail(line, answer, "the correct option is blank", item_id)
        return answer

    def _labels(self, row: dict[str, Any], line: int, item_id: str) -> dict[str, str]:
        values = {field: _text(row, field, self.path, line) for field in _TAG_FIELDS}
        difficulty = require(row, "difficulty", self.path, line, str).strip().lower()
        if difficulty not in DIFFICULTIES:
            allowed = ", ".join(DIFFICULTIES)
            message = f"{row['difficulty']!r} is not one of {allowed}"
            self._fail(line, "difficulty", message, item_id)
        spelled = require(row, "modality", self.path, line, str).strip().lower()
        if spelled not in MODALITY_SPELLINGS:
            allowed = ", ".join(m.value for m in Modality)
            self._fail(line, "modality", f"{row['modality']!r} is not one of {allowed}", item_id)
        values["difficulty"] = difficulty
        values["modality"] = MODALITY_SPELLINGS[spelled].value
        return {label: values[field].strip() for label, field in LABEL_FIELDS.items()}

    def _media(
        self, row: dict[str, Any], line: int, item_id: str, modality: Modality
    ) -> tuple[Media, ...]:
        if modality is Modality.TEXT:
            for field in ("image", "bev_image", "front_image", "point_cloud"):
                if row.get(field) is not None:
                    self._fail(line, field, "a text item must not reference a visual", item_id)
            return ()
        if modality is Modality.IMAGE:
            return (self._image(row, "image", line, item_id),)
        # A point-cloud item names its scan, whose two views the render stage draws; or, with
        # no scan, two views rendered elsewhere. Both at once would leave it unclear what a
        # model was shown.
        views = (("bev_image", BEV_ROLE), ("front_image", FRONT_ROLE))
        if row.get("point_cloud") is not None:
            for field, _ in views:
                if row.get(field) is not None:
                    message = "a point-cloud item names its scan or its two renders, not both"
                    self._fail(line, field, message, item_id)
            scan = self._file(row, "point_cloud", line, item_id)
            if scan.suffix.lower() not in POINT_CLOUD_SUFFIXES:
                allowed = ", ".join(POINT_CLOUD_SUFFIXES)
                message = f"unknown point-cloud extension {scan.suffix!r} (use {allowed})"
                self._fail(line, "point_cloud", message, item_id)
            return (Media.from_file(MediaKind.POINT_CLOUD, scan, role=POINT_CLOUD_ROLE),)
        return tuple(
            self._image(row, field, line, item_id, role=role, index=index)
            for index, (field, role) in enumerate(views)
        )

    def _image(
        self,
        row: dict[str, Any],
        field: str,
        line: int,
        item_id: str,
        role: str | None = None,
        index: int | None = None,
    ) -> Media:
        """The image a field names: a supported suffix, and bytes that are a readable image."""
        path = self._file(row, field, line, item_id)
        if path.suffix.lower() not in IMAGE_MIME_TYPES:
            allowed = ", ".join(IMAGE_MIME_TYPES)
            message = f"unsupported image type {path.suffix!r} (use {allowed})"
            self._fail(line, field, message, item_id)
        try:
            media, _ = image_media(MediaKind.IMAGE, path, role=role, index=index)
        except NotAnImageError as exc:
            self._fail(line, field, str(exc), item_id)
        return media

    def _file(self, row: dict[str, Any], field: str, line: int, item_id: str) -> Path:
        name = _text(row, field, self.path, line)
        path = self.path.parent / name
        if not is_file(path):
            self._fail(line, field, f"file not found: {path}", item_id)
        return path

    def _fail(self, line: int, field: str, message: str, item_id: str) -> NoReturn:
        raise ItemError(ItemProblem(str(self.path), line, field, message, item_id))


def _text(row: dict[str, Any], field: str, path: Path, line: int) -> str:
    """A required string field that must hold more than whitespace."""
    value = require(row, field, path, line, str)
    if not value.strip():
        item_id = row.get("id") if isinstance(row.get("id"), str) else None
        raise ItemError(ItemProblem(str(path), line, field, "empty", item_id))
    return value.strip()
