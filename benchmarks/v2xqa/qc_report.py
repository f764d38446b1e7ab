"""`roadeval qc v2xqa`: the release's schema.md checks and the paper's views, over a source.

The loader already checks each row as schema.md recommends (task_id one of the twelve, options
exactly A-D, the gold among them, the view's image ids, each image found under its root and
readable, (task_id, sample_id) once); with bad rows skipped, each refused row is filed under the
rule of its field. Over the items: each row in the file of its task, question ids of their task's
bank, options a model can tell apart, and no question asked twice of the same images.
"""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.audit import (
    CODES,
    IDS,
    IMAGES,
    OPTIONS,
    Audit,
    AuditedSuite,
    Rule,
    suite_rules,
)
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.item_checks import begin_audit, check_repeated_questions, option_problems
from roadeval.benchmarks.loading import read_jsonl
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.source_shape import RowShape, require_shape
from roadeval.benchmarks.v2xqa.rows import annotation_files
from roadeval.benchmarks.v2xqa.tasks import ANNOTATION_SUFFIX, TASK_IDS

RULES = suite_rules(
    "JSON objects with the schema's fields, each of its type",
    "(task_id, sample_id)",
    Rule(
        CODES,
        f"task_id one of {', '.join(TASK_IDS)}, and the task of its file; "
        "question_id of that task's bank (warn)",
    ),
    Rule(OPTIONS, "options exactly A-D, none blank, no two alike; selected_option_id among them"),
    Rule(
        IMAGES,
        "the images the view shows (VS vehicle side, IS roadside, CO both) found under their "
        "roots and readable",
    ),
)
FIELD_RULES: dict[str, str] = {
    "sample_id": IDS,
    "task_id": CODES,
    "question_id": CODES,
    "options": OPTIONS,
    "selected_option_id": OPTIONS,
    "image_id_vs": IMAGES,
    "image_id_is": IMAGES,
}
ROW_SHAPE = RowShape(
    "a V2X-QA annotation file",
    ("sample_id", "task_id", "question", "options", "selected_option_id"),
)


def quality_report(suite: AuditedSuite, source: Path) -> QualityReport:
    """Audit the annotation files under `source` (a folder, or one file) and their images."""
    for path in annotation_files(Path(source).absolute()):
        rows = ((f"line {number}", row) for number, row in read_jsonl(path, suite.limits))
        require_shape(path, rows, ROW_SHAPE)
    audit = begin_audit(suite, source, RULES, FIELD_RULES)
    for item in audit.items:
        _check_codes(audit, item)
        for problem in option_problems(item.options):
            audit.add(OPTIONS, item, problem, field="options")
    check_repeated_questions(audit)
    return audit.report()


def _check_codes(audit: Audit, item: Item) -> None:
    """The release files each task's rows as `<task_id>_annotations.jsonl`, and names each
    question template `<task_id>_Q<n>` (schema.md's example: CO1_Q1)."""
    origin = audit.loaded.origins.get(item.item_id)
    if origin is not None:
        name = Path(origin.file).name
        file_task = name.removesuffix(ANNOTATION_SUFFIX)
        if file_task in TASK_IDS and file_task != item.task:
            message = f"a {item.task} row in {name}, the file of {file_task}"
            audit.add(CODES, item, message, field="task_id")
    question_id = item.labels.get("question_id", "")
    if question_id and not question_id.startswith(f"{item.task}_"):
        message = f"question_id {question_id!r} is not of {item.task}'s bank ({item.task}_Q<n>)"
        audit.warn(CODES, item, message, field="question_id")
