"""The pieces a run under Prefect shows in the UI, without a server: each suite's leaderboard
table, artifact keys, and the CLI's console filter that keeps Prefect's run lines off the
terminal while the API handler still gets them. (A served run's logs and artifacts, through the
Prefect API: tests/flows/test_deployed_run.py.)"""

from __future__ import annotations

import logging
import subprocess
import sys

from roadeval.flows.prefect.artifacts import artifact_key, leaderboard
from roadeval.flows.prefect.flow import _NotFromRuns, quiet_prefect_run_logs_on_console
from roadeval.flows.run.log import LOGGER, run_logger
from roadeval.storage.records import MetricRow
from roadeval.tasks.results.leaderboard import ItemHealth


def _row(
    suite: str, task: str, model: str, metric: str, value: float, slice_: str = ""
) -> MetricRow:
    return MetricRow("r", suite, task, model, slice_, "x" if slice_ else "", metric, value, 10)


def test_a_leaderboard_is_a_row_per_model_of_the_headline_metrics_best_first() -> None:
    metrics = [
        _row("trip", "*", "b", "accuracy", 0.5),
        _row("trip", "*", "a", "accuracy", 0.25),
        _row("trip", "*", "a", "modality_penalty", 0.123456),
        _row("trip", "*", "a", "abnormal_rate", 0.1),  # not a headline: left out
        _row("trip", "1", "a", "accuracy", 0.9),  # a task's row: TRIP's headlines are suite-wide
        _row("trip", "*", "a", "accuracy", 0.0, slice_="difficulty"),  # a slice: left out
        _row("v2xqa", "*", "a", "accuracy", 0.7),
    ]
    health = {("trip", "a", ""): ItemHealth(unparsed=2, abnormal=0, errors=1)}
    # Headed as the report heads them: the suite's label and which way is better; the items
    # beside them named for what they count.
    assert leaderboard(metrics, "trip", health, baselines={"b"}) == [
        {"model": "b", "accuracy ↑": 0.5, "modality penalty ↓": None, "baseline": True},
        {
            "model": "a",
            "accuracy ↑": 0.25,
            "modality penalty ↓": 0.1235,
            "baseline": False,
            "unread answers": 2,
            "abnormal answers": 0,
            "items in error": 1,
        },
    ]


def test_a_suite_with_per_task_headlines_shows_each_task() -> None:
    metrics = [_row("roadbench", "1", "m", "accuracy", 0.5), _row("roadbench", "3", "m", "f1", 1)]
    assert leaderboard(metrics, "roadbench") == [{"model": "m", "1 accuracy ↑": 0.5, "3 F1 ↑": 1.0}]


def test_a_placeholder_judges_scores_are_marked() -> None:
    metrics = [
        _row("stride", "*", "m", "judge_score", 5.0),
        _row("stride", "*", "m", "traj_ade", 9),
    ]
    why = "judged by an offline placeholder judge"
    assert leaderboard(metrics, "stride", placeholder=why) == [
        {"model": "m", "judge score ↑ (placeholder judge)": 5.0, "trajectory ADE ↓": 9}
    ]
    assert leaderboard(metrics, "stride")[0]["judge score ↑"] == 5.0


def test_a_suite_not_installed_shows_its_suite_wide_metrics() -> None:
    metrics = [_row("elsewhere", "*", "m", "score", 0.5), _row("elsewhere", "t", "m", "x", 1)]
    assert leaderboard(metrics, "elsewhere") == [{"model": "m", "score": 0.5}]


def test_artifact_keys_are_what_prefect_accepts() -> None:
    assert (
        artifact_key("leaderboard", "Nightly Panel_2", "trip") == "leaderboard-nightly-panel-2-trip"
    )
    assert artifact_key("run-health", "--x--") == "run-health-x"


def test_outside_a_flow_run_the_lines_go_to_roadeval_run() -> None:
    assert run_logger() is logging.getLogger(LOGGER)


def test_outside_a_flow_run_a_warning_is_not_printed_unless_logging_is_configured() -> None:
    """The CLI prints a run's warnings itself: Python's last-resort handler would print them
    a second time (in a process of its own: pytest configures logging)."""
    code = "from roadeval.flows.run.log import run_logger; run_logger().warning('not built')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr == ""


def test_the_console_filter_keeps_prefect_run_lines_off_the_terminal_only() -> None:
    from prefect.logging.handlers import APILogHandler

    quiet_prefect_run_logs_on_console()
    quiet_prefect_run_logs_on_console()  # once per handler, however often it is called
    handlers = logging.getLogger().handlers
    assert handlers
    for handler in handlers:
        assert sum(isinstance(f, _NotFromRuns) for f in handler.filters) == 1
    api = [
        h for h in logging.getLogger("prefect.flow_runs").handlers if isinstance(h, APILogHandler)
    ]
    assert api and not any(isinstance(f, _NotFromRuns) for f in api[0].filters)
    record = logging.LogRecord("prefect.flow_runs", logging.INFO, "", 0, "x", None, None)
    other = logging.LogRecord("roadeval.tasks", logging.WARNING, "", 0, "x", None, None)
    assert not _NotFromRuns().filter(record) and _NotFromRuns().filter(other)


def test_a_table_in_markdown_keeps_names_and_cells_as_written() -> None:
    from roadeval.tasks.results.board_markdown import markdown_table
    from roadeval.tasks.results.fitting import FitColumn

    columns = [
        FitColumn("model", ("a|b <i>x</i>", "plain"), whole=True),
        FitColumn("accuracy ↑", ("0.50 #1\n[0.40, 0.60]", "—"), numeric=True),
    ]
    assert markdown_table(columns) == [
        "| model | accuracy ↑ |",
        "|---|---:|",
        # A pipe would split the cell and a tag would be read as HTML; an interval's line
        # joins its value's.
        "| a\\|b \\<i\\>x\\</i\\> | 0.50 \\#1 \\[0.40, 0.60\\] |",
        "| plain | — |",
    ]


def test_a_served_deployment_is_served_while_its_polls_are_fresh() -> None:
    from datetime import UTC, datetime, timedelta

    from roadeval.flows.prefect.deployments import SERVED_STALE_S, served_now

    now = datetime(2026, 12, 7, 21, 0, tzinfo=UTC)
    assert served_now(now - timedelta(seconds=SERVED_STALE_S), now)
    assert not served_now(now - timedelta(seconds=SERVED_STALE_S + 1), now)
    assert not served_now(None, now)
