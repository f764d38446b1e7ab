"""`roadeval campaign`: a dry run plans and estimates and calls nothing; a budget stops the run
before a request could cross it (exit 3), and a larger budget resumes it without paying twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

PRICED = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


def _panel(tmp_path: Path, server: ModelServer, label: str, **extra: object) -> Path:
    source, _ = trip_gold(tmp_path)
    server.rules[label] = lambda body, hit: Reply("A", prompt_tokens=50, completion_tokens=1)
    return write_panel(
        tmp_path / "panel.yaml",
        source,
        [
            {
                "model": f"openai/{label}",
                "name": label,
                "api_base": server.api_base,
                "params": {"max_tokens": 8},
                "max_concurrency": 1,
                **PRICED,
            }
        ],
        scoring={"engine": "local"},
        render={"engine": "local"},
        **extra,
    )


def test_dry_run_estimates_lands_and_calls_no_model(tmp_path: Path, server: ModelServer) -> None:
    panel = _panel(tmp_path, server, "dry")
    store = str(tmp_path / "store")
    result = invoke("campaign", "--panel", str(panel), "--store", store, "--dry-run")
    assert result.exit_code == 0, result.output
    assert server.hits == []
    assert "no model was called" in result.output
    assert "dry" in result.output and "trip" in result.output
    assert query_csv(store, "select status, n_calls from runs") == ["status,n_calls", "planned,0"]
    estimate = query_csv(store, "select suite, model, role, requests, worst_usd > 0 from estimates")
    assert estimate[1:] == ["trip,dry,answer,43,True"]
    # The plan landed as a run's does.
    assert query_csv(store, "select count(*) from plan")[1:] == ["43"]


def test_budget_stops_the_run_then_a_larger_one_resumes_it(
    tmp_path: Path, server: ModelServer
) -> None:
    panel = _panel(tmp_path, server, "capped")
    store = str(tmp_path / "store")
    budget = 0.0012
    result = invoke(
        "campaign", "--panel", str(panel), "--store", store, "--budget-usd", str(budget)
    )
    assert result.exit_code == 3, result.output
    first = len(server.hits_for("capped"))
    assert 0 < first < 43
    assert "out of budget" in result.output
    assert "of the $0.0012 budget" in result.output
    assert "trip x capped:" in result.output and "items not run" in result.output
    assert "--budget-usd" in result.output and "at most $" in result.output
    [row] = query_csv(store, "select status, n_not_run + n_interrupted, cost_usd from runs")[1:]
    status, left, cost = row.split(",")
    assert status == "out_of_budget"
    assert int(left) == 43 - first
    # The ledger of the run stays within its budget.
    [spent] = query_csv(store, "select sum(cost_usd) from costs")[1:]
    assert 0 < float(spent) <= budget
    assert abs(float(cost) - float(spent)) < 1e-12

    result = invoke("campaign", "--panel", str(panel), "--store", store, "--budget-usd", "1")
    assert result.exit_code == 0, result.output
    # Only what was not answered is asked again; the answers paid for are reused.
    assert len(server.hits_for("capped")) == 43
    runs = query_csv(store, "select status, n_cached, n_calls from runs order by started_at")
    assert runs[1:] == ["out_of_budget,0," + str(first), f"finished,{first},{43 - first}"]


def test_budget_flag_wins_over_the_panel_key(tmp_path: Path, server: ModelServer) -> None:
    # The panel's budget would stop the run at once; the flag's lets it finish.
    panel = _panel(tmp_path, server, "flagged", budget_usd=1e-9)
    store = str(tmp_path / "store")
    result = invoke("campaign", "--panel", str(panel), "--store", store, "--budget-usd", "5")
    assert result.exit_code == 0, result.output
    assert len(server.hits_for("flagged")) == 43
    result = invoke("campaign", "--panel", str(panel), "--store", str(tmp_path / "s2"))
    assert result.exit_code == 3, result.output


def test_budget_must_be_positive(tmp_path: Path, server: ModelServer) -> None:
    panel = _panel(tmp_path, server, "zero")
    result = invoke("campaign", "--panel", str(panel), "--budget-usd", "0")
    assert result.exit_code == 2
    assert "--budget-usd: 0 is not more than 0: a cap in USD" in " ".join(result.output.split())
    assert server.hits == []
