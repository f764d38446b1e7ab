"""The live per-model display (calls done and left, USD against the budget, rate, 429s) and the
final cost table, where a cost nobody knows shows as unknown, never as $0."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from roadeval.flows.record.progress import RunProgress
from roadeval.tasks.calls.budget import Budget
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.model_spec import ModelSpec

from support.model_server import ModelServer, Reply
from support.trip_panel import answering_panel, invoke, trip_gold, write_panel


def _text(progress: RunProgress) -> str:
    console = Console(file=io.StringIO(), width=200)
    console.print(progress.render())
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_one_line_per_model_with_calls_money_rate_and_429s() -> None:
    fast = ModelClient(ModelSpec(model="openai/fast", name="fast"))
    slow = ModelClient(ModelSpec(model="openai/slow", name="slow"))
    fast.stats.plan(10)
    slow.stats.plan(4)
    for _ in range(3):
        fast.stats.record(ok=True, cost_usd=0.41)
    slow.stats.record(ok=True, cost_usd=0.02, rate_limited=2)
    progress = RunProgress([fast, slow], Budget(5.0), enabled=False)
    progress.phase("answering", 6)
    progress.advance()
    text = _text(progress)
    assert "answering: 1/6 shards" in text
    [fast_line] = [line for line in text.splitlines() if "fast" in line]
    assert "3 done" in fast_line and "7 left" in fast_line
    assert "$1.23 / $5.00" in fast_line
    assert "0 x 429" in fast_line
    assert "/min" in fast_line
    [slow_line] = [line for line in text.splitlines() if "slow" in line]
    assert "1 done" in slow_line and "3 left" in slow_line and "2 x 429" in slow_line
    # Without a budget, only what was spent.
    assert "/ $" not in _text(RunProgress([fast], None, enabled=False))


@pytest.mark.usefixtures("inline")
def test_progress_is_drawn_on_stderr_when_forced(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = answering_panel(tmp_path, server, "shown", Reply("A", delay_s=0.02))
    monkeypatch.setenv("ROADEVAL_PROGRESS", "1")
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert result.exit_code == 0, result.output
    assert "answering:" in result.stderr
    assert "shown" in result.stderr and "left" in result.stderr and "x 429" in result.stderr
    # Off unless asked: stderr here is not a terminal.
    monkeypatch.delenv("ROADEVAL_PROGRESS")
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert result.exit_code == 0, result.output
    assert "answering:" not in result.stderr


@pytest.mark.usefixtures("inline")
def test_final_cost_table_per_model_suite_role_with_unknown_costs(
    tmp_path: Path, server: ModelServer
) -> None:
    source, _ = trip_gold(tmp_path)
    server.rules["priced"] = lambda body, hit: Reply("A", prompt_tokens=100, completion_tokens=2)
    server.rules["unpriced-xyz"] = lambda body, hit: Reply("B")
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [
            {
                "model": "openai/priced",
                "name": "priced",
                "api_base": server.api_base,
                "input_cost_per_token": 1e-6,
                "output_cost_per_token": 1e-5,
            },
            {"model": "openai/unpriced-xyz", "name": "unpriced", "api_base": server.api_base},
        ],
        scoring={"engine": "local"},
        render={"engine": "local"},
    )
    store = str(tmp_path / "store")
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output
    assert "cost per model, suite and role" in result.output
    # The cost table's rows (the leaderboard above has a row per model too).
    lines = result.output.split("cost per model, suite and role", 1)[1].splitlines()
    [priced] = [line for line in lines if line.startswith("│ priced ")]
    # 43 requests of 100 tokens in and 2 out: 43 x (1e-4 + 2e-5) USD.
    assert "43" in priced and "4,300" in priced and "86" in priced and "$0.0052" in priced
    [unpriced] = [line for line in lines if line.startswith("│ unpriced ")]
    assert "unknown" in unpriced and "$0.0000" not in unpriced
    [total] = [line for line in lines if line.startswith("│ total ")]
    assert "$0.0052 + 43 unknown" in total
    # A second run reuses every answer: nothing paid, the reuses counted.
    result = invoke("run", "--panel", str(panel), "--store", store)
    assert result.exit_code == 0, result.output
    costs = result.output.split("cost per model, suite and role", 1)[1].splitlines()
    [priced] = [line for line in costs if line.startswith("│ priced ")]
    # Nothing paid is $0, the whole amount (not $0.0000, which reads as rounded away).
    assert " $0 │" in priced and "$0.0" not in priced and " 43 " in priced
