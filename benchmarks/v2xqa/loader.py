"""Builds V2X-QA Items from the release layout: the annotation files of a folder, their images
under the two roots (see `options`). Bad rows raise, or are listed under `BadItemPolicy.SKIP`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.item import AnswerKind, Item, Media
from roadeval.benchmarks.loading import DEFAULT_LIMITS, LoadLimits, LoadReport, collect, read_jsonl
from roadeval.benchmarks.v2xqa.images import row_media
from roadeval.benchmarks.v2xqa.options import SuiteOptions
from roadeval.benchmarks.v2xqa.rows import ROW_FIELDS, AnnotationRow, RowChecker, annotation_files
from roadeval.benchmarks.v2xqa.tasks import SUITE_NAME, ImageSide

# The release snapshot the loader, prompt and metrics follow (github junwei0001/V2X-QA).
SUITE_VERSION = "release-ee2e9fe"


def load_items(
    source: Path,
    options: SuiteOptions,
    policy: BadItemPolicy = BadItemPolicy.ERROR,
    limits: LoadLimits = DEFAULT_LIMITS,
) -> LoadReport:
    """Every row of every annotation file under `source`, with its images."""
    source = Path(source).absolute()
    roots = {side: options.root(side, source) for side in ImageSide}
    checker = RowChecker()
    report = LoadReport()
    for path in annotation_files(source):

        def build(line: int, row: dict[str, Any], path: Path = path) -> Item:
            checked = checker.check(path, line, row)
            return make_item(checked, row_media(path, line, checked, roots))

        rows = read_jsonl(path, limits)
        collect(rows, build, policy, report, file=path, known_fields=ROW_FIELDS)
    return report


def make_item(row: AnnotationRow, media: tuple[Media, ...]) -> Item:
    """The Item for a checked row: id `task_id:sample_id`, labels view, family, task name and
    question template; the image ids kept in `extra` for audits."""
    return Item(
        suite=SUITE_NAME,
        suite_version=SUITE_VERSION,
        item_id=row.item_id,
        task=row.spec.task_id,
        question=row.question,
        options=row.options,
        answer_kind=AnswerKind.CHOICE,
        reference=row.gold,
        media=media,
        labels={
            "view": row.spec.view.value,
            "family": row.spec.family.value,
            "task_name": row.spec.name,
            "question_id": row.question_id,
        },
        extra={
            "sample_id": row.sample_id,
            **{side.id_field: image_id for side, image_id in row.image_ids.items()},
        },
    )
