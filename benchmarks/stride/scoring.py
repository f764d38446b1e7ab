"""Per-item scores: MCQ correctness, waypoint errors, and the judge's verdict.

Trajectory items always get ADE / FDE / min-FDE (an unreadable prediction is the origin
trajectory, a counted parse failure). Judged items are scored by the judge only when there is an
answer: an empty or `[ERROR]` reply is not judged (the release skips those) and is counted as
unanswered; a verdict that cannot be read, or a failed judge call, is unscored with its reason,
never a 0 or a 10.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import Judge
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.stride.judge import candidate_answer, judge_request, parse_judge_score
from roadeval.benchmarks.stride.mcq import is_correct
from roadeval.benchmarks.stride.tasks import Kind
from roadeval.benchmarks.stride.trajectory_metrics import item_errors
from roadeval.benchmarks.suite import ItemScore, ParsedAnswer, ParseStatus

CORRECT = "correct"
JUDGE_SCORE = "judge_score"
TRAJECTORY_METRICS = ("ade", "fde", "min_fde")


class JudgeStatus(StrEnum):
    SCORED = "scored"
    UNSCORED = "unscored"  # the judge answered nothing readable, or the call failed
    UNANSWERED = "unanswered"  # no answer to judge: never sent to the judge
    NOT_JUDGED = "not-judged"  # an open template the release does not judge


@dataclass(frozen=True)
class ItemState:
    """What the task summary needs again: how the item was scored."""

    kind: Kind
    parse_ok: bool
    judge: JudgeStatus | None = None


def item_kind(item: Item) -> Kind:
    return Kind(item.extra["kind"])


def score_plain(item: Item, parsed: ParsedAnswer) -> ItemScore:
    """Everything the judge is not needed for."""
    kind = item_kind(item)
    if kind is Kind.MCQ:
        correct = is_correct(parsed.value, item.reference)
        return ItemScore(
            values={CORRECT: 1.0 if correct else 0.0},
            details={"read": parsed.value},
            state=ItemState(kind, parsed.status is not ParseStatus.UNPARSED),
        )
    if kind is Kind.TRAJECTORY:
        parse_ok = parsed.status is not ParseStatus.UNPARSED
        return ItemScore(
            values=item_errors(parsed.value, item.reference),
            details={"points": parsed.value, "parse_ok": parse_ok},
            state=ItemState(kind, parse_ok),
        )
    status = JudgeStatus.NOT_JUDGED if kind is Kind.OPEN_UNJUDGED else JudgeStatus.UNSCORED
    reason = (
        "the release judges no answers of this template"
        if kind is Kind.OPEN_UNJUDGED
        else "scoring this item needs the judge"
    )
    return ItemScore(values={}, unscored={JUDGE_SCORE: reason}, state=ItemState(kind, True, status))


async def score_judged(
    item: Item, raw: str, images: tuple[ImageRef, ...], judge: Judge | None
) -> ItemScore:
    """Ask the judge about one answer (never about a missing one) and read its verdict."""
    kind = Kind.JUDGED
    answer = candidate_answer(raw)
    if answer is None:
        return ItemScore(
            values={},
            unscored={JUDGE_SCORE: "no answer to judge (empty or [ERROR] reply): unanswered"},
            state=ItemState(kind, False, JudgeStatus.UNANSWERED),
        )
    if judge is None:
        return ItemScore(
            values={},
            unscored={JUDGE_SCORE: "no judge configured for this run"},
            state=ItemState(kind, True, JudgeStatus.UNSCORED),
        )
    reply = await judge(judge_request(images, item.question, str(item.reference), answer))
    if reply.text is None:
        reason = f"judge call failed: {reply.error or 'no reply'}"
        return ItemScore(
            values={},
            unscored={JUDGE_SCORE: reason},
            judged=reply,
            state=ItemState(kind, True, JudgeStatus.UNSCORED),
        )
    score, rule = parse_judge_score(reply.text)
    if score is None:
        reason = f"unreadable judge reply ({rule}): {reply.text[:200]!r}"
        return ItemScore(
            values={},
            unscored={JUDGE_SCORE: reason},
            judged=reply,
            state=ItemState(kind, True, JudgeStatus.UNSCORED),
        )
    return ItemScore(
        values={JUDGE_SCORE: score},
        details={"judge_rule": rule},
        judged=reply,
        state=ItemState(kind, True, JudgeStatus.SCORED),
    )
