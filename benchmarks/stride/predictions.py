"""Scoring a released prediction file against a questions file, as the release's scripts do.

Predictions are `{"meta", "tasks": [...]}` (or a bare list); each task row carries its ids and
`model_response` (or `response`). Rows are matched to questions as `stride/aggregate.py` matches
them: by (id, scene_id, group_id, object_id, question_id, question), the last row of a repeated
key winning, else by `question_id` alone when the question has one (the first such row). Every
question is scored (the release CLI's `--no-score-answered-only`): a missing answer is wrong, or
the origin trajectory. Judge verdicts, where the file has them, are read from `llm_judge_raw`
with the release's reader (a bare `llm_judge_score` number is taken when there is no raw reply).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from roadeval.benchmarks.error_rows import ERROR_ROWS, ErrorRows
from roadeval.benchmarks.loading import READ_LIMITS, parse_json
from roadeval.benchmarks.stride.judge import candidate_answer, parse_judge_score
from roadeval.benchmarks.stride.mcq import extract_answer_key, is_correct
from roadeval.benchmarks.stride.rows import RowReader, TaskRow, match_key, read_questions
from roadeval.benchmarks.stride.tasks import SUITE_NAME, Kind, expected_points
from roadeval.benchmarks.stride.trajectory_metrics import errors_of
from roadeval.benchmarks.stride.waypoints import origin, parse_points

# The id fields that name a prediction row in messages.
ROW_IDS = ("id", "scene_id", "group_id", "object_id", "question_id")
LISTED_AT_MOST = 50
# Why a question was scored by the bad-answer rule, or left out of its means (`ERROR_ROWS`).
NO_PREDICTION = "no prediction for the question"
NO_LETTER = "no choice read from the answer"
NO_POINTS = "no trajectory read from the answer (scored as the origin)"
NO_TRUTH = "a ground-truth trajectory the release cannot read (left out of the means)"
NO_VERDICT = "a judge reply with no score read"
NO_CANDIDATE = "no answer left once the reasoning is removed (the judge is not asked)"
NOT_JUDGED = "an answer the file carries no judge score for (left out of the judge mean)"
# Each judge verdict that is not a score: its count's name, and why it is an error row.
_UNJUDGED = {
    "none": ("unanswered", NO_CANDIDATE),
    "unread": ("unscored", NO_VERDICT),
    "absent": ("not_judged", NOT_JUDGED),
}


def read_predictions(path: Path) -> list[dict[str, Any]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON predictions file: {exc}") from None
    # The shared reader: a file nested too deeply or holding a huge integer is an error, not a
    # traceback.
    payload, problem = parse_json(text, READ_LIMITS)
    if problem is not None:
        raise ValueError(f"{path}: not a readable JSON predictions file: {problem}")
    rows = payload.get("tasks") if isinstance(payload, dict) else payload
    if not isinstance(rows, list):
        raise ValueError(f"{path}: expected a top-level 'tasks' list (or a JSON list)")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(f"{path}: tasks[{index}] is not a JSON object")
    return rows


def response_of(prediction: dict[str, Any] | None) -> str | None:
    """The answer text; None when there is no prediction or it holds no answer."""
    if prediction is None:
        return None
    value = (
        prediction["model_response"]
        if "model_response" in prediction
        else prediction.get("response")
    )
    return value if isinstance(value, str) else None


def match(
    questions: list[TaskRow], predictions: list[dict[str, Any]]
) -> tuple[list[dict[str, Any] | None], list[int], int]:
    """(the prediction of each question or None, indexes of rows matching no question, rows
    shadowed by a later row with the same key)."""
    by_key: dict[tuple[Any, ...], int] = {}
    for position, row in enumerate(predictions):
        by_key[match_key(row)] = position
    used: set[int] = set()
    found: list[dict[str, Any] | None] = []
    for question in questions:
        index: int | None = by_key.get(question.key)
        qid = question.raw.get("question_id")
        if index is None and qid:
            index = next(
                (i for i, p in enumerate(predictions) if p.get("question_id") == qid), None
            )
        if index is not None:
            used.add(index)
        found.append(predictions[index] if index is not None else None)
    keys = set(by_key.values())
    shadowed = len(predictions) - len(keys)
    unmatched = [i for i in range(len(predictions)) if i not in used and i in keys]
    return found, unmatched, shadowed


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def score_prediction_file(
    labels: Path, predictions: Path, task: str | None = None
) -> dict[str, Any]:
    questions_file = read_questions(labels)
    reader = RowReader(questions_file)
    questions = [reader.read(index) for index in range(len(questions_file.tasks))]
    if task is not None:
        known = sorted({q.template for q in questions})
        if task not in known:
            raise ValueError(f"{labels}: no template {task!r} (known: {', '.join(known)})")
        questions = [q for q in questions if q.template == task]
    rows = read_predictions(predictions)
    found, unmatched, shadowed = match(questions, rows)
    if not any(p is not None for p in found):
        raise ValueError(
            f"{predictions}: none of its {len(rows)} rows matches a question of {labels} "
            "(by id, scene_id, group_id, object_id, question_id and question, or question_id)"
        )
    mcq: dict[str, list[float]] = defaultdict(list)
    baselines: list[float] = []
    mcq_counts: Counter[str] = Counter()
    traj_pred: dict[str, list[list[list[float]]]] = defaultdict(list)
    traj_gt: dict[str, list[list[list[float]]]] = defaultdict(list)
    traj_counts: Counter[str] = Counter()
    gt_unreadable: list[str] = []
    judge: dict[str, list[float]] = defaultdict(list)
    judge_counts: Counter[str] = Counter()
    missing = 0
    why: Counter[str] = Counter()
    for question, prediction in zip(questions, found, strict=True):
        text = response_of(prediction)
        missing += text is None
        # One reason per question: a missing prediction first, unless the truth is unreadable.
        reason = NO_PREDICTION if text is None else None
        if question.kind is Kind.MCQ:
            letter, _ = extract_answer_key(text or "", question.choices)
            mcq[question.template].append(
                1.0 if is_correct(letter, str(question.reference)) else 0.0
            )
            baselines.append(1.0 / max(len(question.choices), 1))
            mcq_counts["unparsed"] += letter is None
            mcq_counts["missing"] += text is None
            reason = reason or (NO_LETTER if letter is None else None)
        elif question.kind is Kind.TRAJECTORY:
            gt = question.reference
            if not isinstance(gt, list):
                gt_unreadable.append(question.item_id)
                why[NO_TRUTH] += 1
                continue
            points = parse_points(text, expected_points(question.template)) if text else None
            traj_counts["parsed" if points is not None else "parse_failures"] += 1
            traj_counts["missing"] += text is None
            reason = reason or (NO_POINTS if points is None else None)
            traj_pred[question.template].append(points if points is not None else origin(len(gt)))
            traj_gt[question.template].append(gt)
        elif question.kind is Kind.JUDGED:
            verdict = _verdict(prediction) if candidate_answer(text or "") is not None else "none"
            if isinstance(verdict, float):
                judge[question.template].append(verdict)
                judge_counts["scored"] += 1
            else:
                counted, why_not = _UNJUDGED[verdict]
                judge_counts[counted] += 1
                reason = reason or why_not
        if reason is not None:
            why[reason] += 1
    return {
        "suite": SUITE_NAME,
        "split": questions_file.split.value,
        "labels": str(labels),
        "predictions": str(predictions),
        "template_filter": task,
        ERROR_ROWS: ErrorRows.counted(len(questions), why).as_dict(),
        "counts": {
            "questions": len(questions),
            "answered": len(questions) - missing,
            "missing_predictions": missing,
            "prediction_rows": len(rows),
            "shadowed_prediction_rows": shadowed,
            "unmatched_prediction_rows": len(unmatched),
        },
        "unmatched_predictions": [
            {"index": i, **{name: rows[i].get(name) for name in ROW_IDS}}
            for i in unmatched[:LISTED_AT_MOST]
        ],
        "mcq": _mcq_block(mcq, baselines, mcq_counts),
        "trajectory": _trajectory_block(traj_pred, traj_gt, traj_counts, gt_unreadable),
        "judge": _judge_block(judge, judge_counts),
    }


def _verdict(prediction: dict[str, Any] | None) -> float | str:
    """The file's judge score for an answered item: a number, 'unread', or 'absent'."""
    if prediction is None:
        return "absent"
    raw = prediction.get("llm_judge_raw")
    if isinstance(raw, str):
        score, _ = parse_judge_score(raw)
        return score if score is not None else "unread"
    value = prediction.get("llm_judge_score")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return "absent"


def _mcq_block(
    per_template: dict[str, list[float]], baselines: list[float], counts: Counter[str]
) -> dict[str, Any]:
    every = [value for values in per_template.values() for value in values]
    return {
        "accuracy": _mean(every),
        "n_mcq": len(every),
        "n_correct": int(sum(every)),
        "random_baseline": _mean(baselines),
        "unparsed": counts["unparsed"],
        "missing": counts["missing"],
        "per_template": {
            template: {"accuracy": _mean(values), "n": len(values)}
            for template, values in sorted(per_template.items())
        },
    }


def _trajectory_block(
    preds: dict[str, list[list[list[float]]]],
    gts: dict[str, list[list[list[float]]]],
    counts: Counter[str],
    gt_unreadable: list[str],
) -> dict[str, Any]:
    per_template: dict[str, Any] = {}
    every_pred: list[list[list[float]]] = []
    every_gt: list[list[list[float]]] = []
    for template in sorted(preds):
        errors = errors_of(preds[template], gts[template])
        per_template[template] = {**errors.means(), "n": len(preds[template])}
        every_pred.extend(preds[template])
        every_gt.extend(gts[template])
    overall = errors_of(every_pred, every_gt).means() if every_pred else {}
    return {
        "ade": overall.get("ade"),
        "fde": overall.get("fde"),
        "min_fde": overall.get("min_fde"),
        "n": len(every_pred),
        "parsed": counts["parsed"],
        "parse_failures": counts["parse_failures"],
        "missing": counts["missing"],
        # The release counts these in its parse_fail_count and leaves them out of the means.
        "gt_unreadable": gt_unreadable,
        "release_parse_fail_count": counts["parse_failures"] + len(gt_unreadable),
        "per_template": per_template,
    }


def _judge_block(per_template: dict[str, list[float]], counts: Counter[str]) -> dict[str, Any]:
    every = [value for values in per_template.values() for value in values]
    return {
        "mean": _mean(every),
        "scored": counts["scored"],
        "unscored": counts["unscored"],
        "unanswered": counts["unanswered"],
        "not_judged": counts["not_judged"],
        "per_template": {
            template: {"mean": _mean(values), "n": len(values)}
            for template, values in sorted(per_template.items())
        },
    }
