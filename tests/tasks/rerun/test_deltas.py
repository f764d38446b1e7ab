"""Score changes per item (a flipped verdict) and metric deltas against a baseline run."""

from __future__ import annotations

from dataclasses import replace

from roadeval.storage.records import MetricRow, ScoreRow
from roadeval.tasks.rerun.deltas import metric_deltas, score_changes


def _score(run: str, metric: str, value: float | None, status: str = "scored") -> ScoreRow:
    return ScoreRow(
        run_id=run,
        suite="s",
        task="t",
        item_id="i",
        content_hash="h",
        model="m",
        request_key="k",
        metric=metric,
        value=value,
        status=status,
        unscored_reason=None if value is not None else "why",
        judge_model=None,
        judge_request_key=None,
        judge_prompt_hash=None,
        judge_params_json=None,
        judge_reply=None,
        details_json=None,
    )


def test_only_metrics_that_moved_are_rows_and_a_verdict_that_turned_is_a_flip() -> None:
    old = [_score("a", "correct", 1.0), _score("a", "ade", 2.0), _score("a", "same", 0.5)]
    new = [
        _score("b", "correct", 0.0),
        _score("b", "ade", None, "unscored"),
        _score("b", "same", 0.5),
    ]
    rows = {row.metric: row for row in score_changes("b", "a", old, new)}
    assert set(rows) == {"correct", "ade"}
    assert rows["correct"].flipped and (rows["correct"].old_value, rows["correct"].new_value) == (
        1.0,
        0.0,
    )
    assert not rows["ade"].flipped and rows["ade"].new_status == "unscored"


def _metric(run: str, model: str, task: str, value: float) -> MetricRow:
    return MetricRow(run, "s", task, model, "", "", "accuracy", value, 10)


def test_metric_deltas_match_metrics_and_leave_models_out_of_the_rerun_alone() -> None:
    old = [_metric("a", "m", "*", 0.5), _metric("a", "m", "old", 0.2), _metric("a", "x", "*", 0.9)]
    new = [_metric("b", "m", "*", 0.75), _metric("b", "m", "new", 0.3)]
    rows = {row.task: row for row in metric_deltas("b", "a", old, new, [("s", "m")])}
    assert rows["*"].delta == 0.25
    assert (rows["old"].baseline_value, rows["old"].new_value, rows["old"].delta) == (
        0.2,
        None,
        None,
    )
    assert (rows["new"].baseline_value, rows["new"].delta) == (None, None)
    assert all(row.model == "m" for row in rows.values())


def test_a_blind_metric_moves_against_the_baseline_blind_one_only() -> None:
    old = [_metric("a", "m", "*", 0.5), replace(_metric("a", "m", "*", 0.25), variant="blind")]
    new = [_metric("b", "m", "*", 0.5), replace(_metric("b", "m", "*", 0.5), variant="blind")]
    rows = {row.variant: row for row in metric_deltas("b", "a", old, new, [("s", "m")])}
    assert set(rows) == {"", "blind"}
    assert rows[""].delta == 0.0 and rows["blind"].delta == 0.25
    # Rows landed before variants were kept (null) are the released ones.
    legacy = [replace(_metric("a", "m", "*", 0.5), variant=None)]  # type: ignore[arg-type]
    [row] = metric_deltas("b", "a", legacy, new[:1], [("s", "m")])
    assert (row.variant, row.delta) == ("", 0.0)


def test_a_score_change_says_its_variant() -> None:
    old = [replace(_score("a", "correct", 1.0), variant="blind")]
    new = [replace(_score("b", "correct", 0.0), variant="blind")]
    [row] = score_changes("b", "a", old, new)
    assert row.variant == "blind" and row.flipped
