"""`roadeval runs` as a person reads it in a terminal of 80 or 120 columns (COLUMNS, which rich
reads as a terminal's width): every run id whole (the id `show`, `changes`, `diff` and `report`
take), the columns that do not fit left out and named, costs rounded ($0.0052) and a cost nobody
knows shown as unknown; csv and json keep the exact values."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from roadeval.flows.cli.main import app

from support.model_server import ModelServer, Reply
from support.trip_panel import query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

runner = CliRunner()
ENGINES = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}


def _cli(*args: str, columns: int | None = None) -> Any:
    env = {"COLUMNS": str(columns)} if columns is not None else None
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def _run(tmp_path: Path, server: ModelServer, name: str, **prices: float) -> None:
    """A run of TRIP's demo (43 items) against `name` on the test server, in `tmp_path/store`."""
    source, _ = trip_gold(tmp_path)
    server.rules[name] = lambda body, hit: Reply("A", prompt_tokens=100, completion_tokens=2)
    model = {"model": f"openai/{name}", "name": name, "api_base": server.api_base, **prices}
    panel = write_panel(tmp_path / f"{name}.yaml", source, [model], **ENGINES)
    result = _cli("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert result.exit_code == 0, result.output


@pytest.fixture
def store(tmp_path: Path, server: ModelServer) -> Path:
    """Two runs: one of a priced model (43 x (100 x 1e-6 + 2 x 1e-5) = $0.00516), one of a
    model nobody has a price for."""
    _run(tmp_path, server, "priced", input_cost_per_token=1e-6, output_cost_per_token=1e-5)
    _run(tmp_path, server, "unpriced-xyz")
    return tmp_path / "store"


def _listed(store: Path, format: str) -> list[dict[str, Any]]:
    result = _cli("runs", "--store", str(store), "--format", format)
    assert result.exit_code == 0, result.output
    if format == "json":
        rows: list[dict[str, Any]] = json.loads(result.stdout)
        return rows
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_runs_shows_whole_ids_rounded_costs_and_unknown_costs(store: Path) -> None:
    priced, unpriced = _listed(store, "csv")
    for columns in (80, 120):
        result = _cli("runs", "--store", str(store), columns=columns)
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= columns, result.stdout
        rows = {}
        for run in (priced, unpriced):
            # The id whole, at the start of its row (the first column never gives way).
            [rows[run["run_id"]]] = [line for line in lines if line.split()[:1] == [run["run_id"]]]
        cost_cells = {run_id: _cell(line, "cost", lines) for run_id, line in rows.items()}
        assert cost_cells == {priced["run_id"]: "$0.0052", unpriced["run_id"]: "unknown"}
        assert "0.00516" not in result.stdout and "0.0 " not in result.stdout
        # The columns that did not fit are named under the table, with where to see them.
        note = " ".join(result.stdout.split("not shown at", 1)[1].split())
        assert note.startswith(f"{columns} columns:") and "ended (UTC)" in note
        assert "--format csv or json" in note
    # csv and json keep the exact cost, and count the requests whose cost nobody knows.
    paid = {
        run_id: float(usd)
        for run_id, usd in (
            line.split(",")
            for line in query_csv(
                str(store), "select run_id, coalesce(sum(cost_usd), 0) from costs group by all"
            )[1:]
        )
    }
    for format in ("csv", "json"):
        priced, unpriced = _listed(store, format)
        assert float(priced["cost_usd"]) == paid[priced["run_id"]] == pytest.approx(43 * 1.2e-4)
        assert str(priced["cost_usd"]) != "0.0052"  # not rounded
        assert int(priced["n_unknown_cost"]) == 0
        # Every request of the unpriced model has no known cost: counted, its USD a floor of 0.
        assert int(unpriced["n_unknown_cost"]) == 43 and float(unpriced["cost_usd"]) == 0


def _cell(line: str, heading: str, lines: list[str]) -> str:
    """The text of `line` under the column headed `heading` (its heading's last line)."""
    header = next(h for h in lines if h.split("┃")[0].strip() == "run")
    names = [cell.strip() for cell in header.split("┃")]
    return line.split("│")[names.index(heading)].strip()
