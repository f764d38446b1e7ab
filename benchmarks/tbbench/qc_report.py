"""`roadeval qc tbbench`: the paper's eight tasks and the release's scorer, over a source.

The loader already refuses a row of an unknown task, a repeated id, a frame that is missing or not
a readable image, and fields of the wrong type; with bad rows skipped, each is filed under the
rule of its field. Over the items: each row in its task's split file, as many frames as the
paper's task shows (one image, or eight frames of a clip), a gold the task's scorer can read (a
gold it cannot read makes every answer wrong), listed choices a model can tell apart with the
gold among them, and no question asked twice of the same frames.
"""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.audit import (
    CHOICES,
    CODES,
    FRAMES,
    GOLD,
    IDS,
    Audit,
    AuditedSuite,
    Rule,
    suite_rules,
)
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.item_checks import (
    begin_audit,
    check_repeated_questions,
    option_problems,
    short,
)
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.source_shape import RowShape, require_shape
from roadeval.benchmarks.tbbench.keywords import KEYWORD_TABLES
from roadeval.benchmarks.tbbench.rows import Layout, find_source_files, iter_rows
from roadeval.benchmarks.tbbench.scoring import extract_angle, extract_distance
from roadeval.benchmarks.tbbench.tasks import (
    CLIP_FRAMES,
    SINGLE_FRAME_TASKS,
    TASKS,
    find_task,
    frames_of,
)

RULES = suite_rules(
    "rows with image, problem, task and solution (choice and id optional)",
    "`id`, else <task code>-<n> by the row's place in its split",
    Rule(
        CODES,
        f"task one of the eight ({', '.join(spec.code for spec in TASKS)}), and the task of the "
        "split file it is in",
    ),
    Rule(
        FRAMES,
        f"frames present and readable: 1 for {', '.join(sorted(SINGLE_FRAME_TASKS))}, "
        f"{CLIP_FRAMES} for the clip tasks",
    ),
    Rule(
        GOLD,
        "a gold the task's scorer reads: '<n> meters' (RD, EGO-TRA), one of the task's "
        "keyword classes, or for OR a class or '<n> degrees'",
    ),
    Rule(CHOICES, "listed choices none blank, no two alike, the class gold among them"),
)
FIELD_RULES: dict[str, str] = {
    "id": IDS,
    "task": CODES,
    "image": FRAMES,
    "solution": GOLD,
    "choice": CHOICES,
}
ROW_SHAPE = RowShape("a TB-Bench split", ("problem", "task", "solution"))


def quality_report(suite: AuditedSuite, source: Path) -> QualityReport:
    """Audit the TB-Bench source `source` (a split file, or a folder of one layout's files)."""
    source = Path(source)
    found = find_source_files(source)
    noun = "line" if found.layout is Layout.JSONL else "row"
    for path in found.files:
        rows = iter_rows(path, found.layout, columns=ROW_SHAPE.fields, limits=suite.limits)
        require_shape(path, ((f"{noun} {number}", row) for number, row in rows), ROW_SHAPE)
    audit = begin_audit(suite, source, RULES, FIELD_RULES)
    for item in audit.items:
        _check_split(audit, item)
        shown, wanted = len(item.media), frames_of(item.task)
        if shown != wanted:
            message = f"{shown} frame(s); a {item.task} item shows {wanted}"
            audit.add(FRAMES, item, message, field="image")
        if (problem := gold_problem(item)) is not None:
            audit.add(GOLD, item, problem, field="solution")
        for problem in option_problems(item.options):
            audit.add(CHOICES, item, problem, field="choice")
        class_gold = item.labels.get("gold_kind") == "class"
        if item.options and class_gold and item.reference not in item.options.values():
            message = f"the gold {short(item.reference)} is not among the choices"
            audit.add(CHOICES, item, message, field="choice")
    check_repeated_questions(audit)
    return audit.report()


def gold_problem(item: Item) -> str | None:
    """Why the task's scorer cannot read the item's gold, or None."""
    gold = str(item.reference)
    kind = item.labels.get("gold_kind")
    if kind == "distance" and extract_distance(gold) is None:
        return f"the gold {short(gold)} holds no '<number> meters'"
    if kind == "angle" and extract_angle(gold) is None:
        classes = ", ".join(KEYWORD_TABLES["OR"].labels)
        return f"the gold {short(gold)} is neither a class ({classes}) nor '<number> degrees'"
    table = KEYWORD_TABLES.get(item.task)
    if kind == "class" and table is not None and gold not in table.classes:
        classes = ", ".join(table.labels)
        return f"the gold {short(gold)} is not one of {item.task}'s classes ({classes})"
    return None


def _check_split(audit: Audit, item: Item) -> None:
    """The Hugging Face layout names each file after its split, the task's release name
    (`<task>-00000-of-00001.parquet`): a row of another task there is misfiled."""
    origin = audit.loaded.origins.get(item.item_id)
    if origin is None:
        return
    file_task = find_task(Path(origin.file).name.split("-", 1)[0].split(".", 1)[0])
    if file_task is not None and file_task.code != item.task:
        name = Path(origin.file).name
        message = f"a {item.task} row in {name}, the split of {file_task.code}"
        audit.add(CODES, item, message, field="task")
