"""Corpus figures: per template (`summarize`), and suite-wide, per split and per family
(`group_values`): MCQ accuracy micro-averaged over items with the random baseline (mean of
1/|choices|), trajectory means with parsed and parse-failure counts, the judge mean over scored
items with scored, unscored and unanswered counts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from roadeval.benchmarks.stride.scoring import (
    CORRECT,
    JUDGE_SCORE,
    TRAJECTORY_METRICS,
    ItemState,
    JudgeStatus,
    item_kind,
)
from roadeval.benchmarks.stride.tasks import Kind
from roadeval.benchmarks.suite import GroupValue, ParseStatus, ScoredItem

SUITE_WIDE = "*"
GROUP_LABELS = ("split", "family")


def state_of(row: ScoredItem) -> ItemState:
    """The item's state as scored, or as read from its parse and values when scored elsewhere
    (a test, a notebook): a judged item without a score then counts as unscored."""
    if isinstance(row.state, ItemState):
        return row.state
    kind = item_kind(row.item)
    parse_ok = row.parsed.status is not ParseStatus.UNPARSED
    if kind is Kind.JUDGED:
        judged = JudgeStatus.SCORED if JUDGE_SCORE in row.values else JudgeStatus.UNSCORED
        return ItemState(kind, parse_ok, judged)
    if kind is Kind.OPEN_UNJUDGED:
        return ItemState(kind, parse_ok, JudgeStatus.NOT_JUDGED)
    return ItemState(kind, parse_ok)


def _mean(values: list[float]) -> float:
    return float(np.fromiter(values, dtype=np.float64, count=len(values)).mean())


def mcq_figures(rows: Sequence[ScoredItem]) -> dict[str, float]:
    if not rows:
        return {}
    correct = [row.values[CORRECT] for row in rows if CORRECT in row.values]
    return {
        "accuracy": _mean(correct) if correct else 0.0,
        "correct": float(sum(correct)),
        "random_baseline": _mean([1.0 / max(len(row.item.options), 1) for row in rows]),
        "unparsed": float(sum(row.parsed.status is ParseStatus.UNPARSED for row in rows)),
        "not_an_option": float(sum(row.parsed.status is ParseStatus.ABNORMAL for row in rows)),
    }


def trajectory_figures(rows: Sequence[ScoredItem]) -> dict[str, float]:
    if not rows:
        return {}
    figures = {
        metric: _mean([row.values[metric] for row in rows])
        for metric in TRAJECTORY_METRICS
        if all(metric in row.values for row in rows)
    }
    parsed = sum(state_of(row).parse_ok for row in rows)
    figures.update(parsed=float(parsed), parse_failures=float(len(rows) - parsed))
    return figures


def judge_figures(rows: Sequence[ScoredItem]) -> dict[str, float]:
    if not rows:
        return {}
    statuses = [state_of(row).judge for row in rows]
    scores = [row.values[JUDGE_SCORE] for row in rows if JUDGE_SCORE in row.values]
    figures = {
        "judge_scored": float(len(scores)),
        "judge_unscored": float(statuses.count(JudgeStatus.UNSCORED)),
        "unanswered": float(statuses.count(JudgeStatus.UNANSWERED)),
    }
    if scores:
        figures[JUDGE_SCORE] = _mean(scores)
    return figures


def by_kind(scored: Sequence[ScoredItem]) -> dict[Kind, list[ScoredItem]]:
    groups: dict[Kind, list[ScoredItem]] = {kind: [] for kind in Kind}
    for row in scored:
        groups[item_kind(row.item)].append(row)
    return groups


def summarize_task(scored: Sequence[ScoredItem]) -> dict[str, float]:
    """One template's figures (a template is scored one way)."""
    groups = by_kind(scored)
    figures: dict[str, float] = {}
    figures.update(mcq_figures(groups[Kind.MCQ]))
    figures.update(trajectory_figures(groups[Kind.TRAJECTORY]))
    figures.update(judge_figures(groups[Kind.JUDGED]))
    if groups[Kind.OPEN_UNJUDGED]:
        figures["not_judged"] = float(len(groups[Kind.OPEN_UNJUDGED]))
    return figures


def _group_rows(
    task: str, slice_: str, value: str, scored: Sequence[ScoredItem]
) -> list[GroupValue]:
    groups = by_kind(scored)
    out: list[GroupValue] = []

    def add(prefix: str, figures: dict[str, float], n_of: dict[str, int]) -> None:
        for metric, number in figures.items():
            name = metric if metric.startswith(prefix) else f"{prefix}{metric}"
            out.append(GroupValue(task, slice_, value, name, number, n_of.get(metric, 0)))

    mcq = groups[Kind.MCQ]
    add("mcq_", mcq_figures(mcq), dict.fromkeys(mcq_figures(mcq), len(mcq)))
    trajectories = groups[Kind.TRAJECTORY]
    add(
        "traj_",
        trajectory_figures(trajectories),
        dict.fromkeys(trajectory_figures(trajectories), len(trajectories)),
    )
    judged = groups[Kind.JUDGED]
    figures = judge_figures(judged)
    scored_n = int(figures.get("judge_scored", 0))
    add("judge_", figures, {**dict.fromkeys(figures, len(judged)), JUDGE_SCORE: scored_n})
    return out


def group_values(scored: Sequence[ScoredItem]) -> list[GroupValue]:
    """Suite-wide rows (slice ''), then one set per split and per family (task '*')."""
    rows = _group_rows(SUITE_WIDE, "", "", scored)
    for label in GROUP_LABELS:
        members: dict[str, list[ScoredItem]] = {}
        for row in scored:
            if label in row.item.labels:
                members.setdefault(row.item.labels[label], []).append(row)
        for value in sorted(members):
            rows.extend(_group_rows(SUITE_WIDE, label, value, members[value]))
    return rows
