"""A run's life through the real command in its own process: recorded from its first moment,
stopped cleanly by SIGTERM and Ctrl-C, visible as died after kill -9, resumed without paying
twice, and halted at once by a store that can no longer keep its answers."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

from support.cli_process import CliProcess, start_cli, wait_until
from support.model_server import ModelServer, Reply
from support.small_disk import needs_mount, tmpfs_wrap
from support.trip_panel import gold_rule, invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")

# Short heartbeats and grace, so that a died run shows and a stop completes within seconds.
FAST = {"ROADEVAL_HEARTBEAT_S": "0.5", "ROADEVAL_STOP_GRACE_S": "1"}


def _slow_panel(
    tmp_path: Path, server: ModelServer, delay_s: float, concurrency: int = 2
) -> tuple[Path, int]:
    source, gold = trip_gold(tmp_path)
    answer = gold_rule(gold)
    server.rules["slow"] = lambda body, hit: Reply(answer(body, hit).text, delay_s=delay_s)
    model = {
        "model": "openai/slow",
        "name": "slow",
        "api_base": server.api_base,
        "max_concurrency": concurrency,
    }
    return write_panel(tmp_path / "panel.yaml", source, [model], chunk_size=5), len(gold)


def _start(tmp_path: Path, panel: Path, store: Path, name: str, **env: str) -> CliProcess:
    args = ["run", "--panel", str(panel), "--store", str(store)]
    return start_cli(args, tmp_path / name, {**FAST, **env})


def _runs(store: Path) -> list[list[str]]:
    lines = query_csv(
        str(store),
        "select run_id, status, n_scored, n_calls, n_cached, n_interrupted, n_not_run "
        "from runs order by started_at",
    )
    return [line.split(",") for line in lines[1:]]


def _no_traceback(cli: CliProcess) -> None:
    assert "Traceback" not in cli.stdout + cli.stderr, cli.stderr


def test_sigterm_stops_spending_lands_what_was_answered_and_resumes(
    tmp_path: Path, server: ModelServer
) -> None:
    panel, n = _slow_panel(tmp_path, server, delay_s=0.3)
    store = tmp_path / "store"
    cli = _start(tmp_path, panel, store, "first")
    # The run is recorded as running from its first moment.
    wait_until(lambda: len(server.hits_for("slow")) >= 6, what="six requests")
    assert [row[1] for row in _runs(store)] == ["running"]
    cli.signal(signal.SIGTERM)
    at_signal = len(server.hits_for("slow"))
    assert cli.wait(timeout=60) == 143
    _no_traceback(cli)
    message = cli.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert "stopped by SIGTERM" in message and "Run the same command again to resume" in message
    # No request started after the signal; the two in flight finished within the grace.
    paid = len(server.hits_for("slow"))
    assert paid <= at_signal + 2
    [(run_id, status, scored, calls, _, interrupted, not_run)] = _runs(store)
    assert status == "interrupted"
    assert int(scored) == int(calls) == paid and int(not_run) == n - paid
    assert int(interrupted) == 0
    # What was answered is landed, whole: every scored item has its response and parse.
    landed = query_csv(
        str(store),
        f"select count(distinct s.item_id), count(distinct r.item_id), count(distinct p.item_id) "
        f"from scores s join responses r using (run_id, item_id) join parses p "
        f"using (run_id, item_id) where s.run_id = '{run_id}'",
    )
    assert landed[1] == f"{paid},{paid},{paid}"

    resumed = invoke("run", "--panel", str(panel), "--store", str(store))
    assert resumed.exit_code == 0, resumed.output
    assert len(server.hits_for("slow")) == n, "an answer paid for before the stop was paid again"
    _, second = _runs(store)
    assert second[1] == "finished" and int(second[4]) == paid and int(second[3]) == n - paid


def test_ctrl_c_cancels_requests_in_flight_after_the_grace_and_exits_130(
    tmp_path: Path, server: ModelServer
) -> None:
    panel, n = _slow_panel(tmp_path, server, delay_s=30.0)
    store = tmp_path / "store"
    cli = _start(tmp_path, panel, store, "ctrl-c")
    wait_until(lambda: len(server.hits_for("slow")) >= 2, what="two requests in flight")
    started = time.monotonic()
    cli.signal_group(signal.SIGINT)  # what a terminal's Ctrl-C does
    assert cli.wait(timeout=60) == 130
    assert time.monotonic() - started < 20, "the stop waited for the 30 s replies"
    _no_traceback(cli)
    assert "stopped by SIGINT" in cli.stderr
    assert len(server.hits_for("slow")) == 2
    [row] = _runs(store)
    assert row[1] == "interrupted" and int(row[5]) == 2 and int(row[6]) == n - 2
    lines = query_csv(
        str(store), "select error_kind, may_be_billed, count(*) from responses group by all"
    )
    assert lines[1:] == ["interrupted,True,2"]


def test_a_killed_run_reads_died_lands_no_half_shard_and_resumes(
    tmp_path: Path, server: ModelServer
) -> None:
    panel, n = _slow_panel(tmp_path, server, delay_s=0.2)
    store = tmp_path / "store"
    cli = _start(tmp_path, panel, store, "killed")
    wait_until(lambda: len(server.hits_for("slow")) >= 12, what="twelve requests")
    cli.kill()
    paid = len(server.hits_for("slow"))
    wait_until(lambda: [r[1] for r in _runs(store)] == ["died"], timeout=10, what="died")
    listed = invoke("runs", "--store", str(store), "--format", "csv")
    assert listed.exit_code == 0 and ",died," in listed.output
    # Only whole shards are visible: no landed response lacks its score.
    orphans = query_csv(
        str(store),
        "select count(*) from responses r anti join scores s using (run_id, item_id, model)",
    )
    assert orphans[1] == "0"

    resumed = invoke("run", "--panel", str(panel), "--store", str(store))
    assert resumed.exit_code == 0, resumed.output
    # Answers kept before the kill are reused; at most the two in flight are asked again.
    assert len(server.hits_for("slow")) <= n + 2
    died, finished = _runs(store)
    assert died[1] == "died" and finished[1] == "finished"
    assert int(finished[4]) >= paid - 2
    scores = query_csv(
        str(store),
        f"select count(*) from scores where metric = 'correct' and run_id = '{finished[0]}'",
    )
    assert scores[1] == str(n)


@needs_mount
def test_a_full_disk_stops_the_run_at_once_with_a_clear_message(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    _without_scans(source)  # their renders would fill the store before any answer
    server.rules["fast"] = gold_rule(gold)
    model: dict[str, Any] = {"model": "openai/fast", "api_base": server.api_base}
    panel = write_panel(tmp_path / "panel.yaml", source, [{**model, "max_concurrency": 2}])
    store = tmp_path / "store"
    args = ["run", "--panel", str(panel), "--store", str(store)]
    cli = start_cli(args, tmp_path / "full", FAST, wrap=tmpfs_wrap(store, "size=128k"))
    assert cli.wait(timeout=120) == 1
    _no_traceback(cli)
    message = " ".join(cli.stderr.split())
    assert "No space left on device" in message and str(store) in message
    assert "no model request started after that" in message
    # It stopped at the first answer it could not keep (give or take those in flight).
    assert len(server.hits_for("fast")) < len(gold)


@needs_mount
def test_a_store_too_full_for_the_renders_stops_the_run_before_any_call(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["fast"] = gold_rule(gold)
    model = {"model": "openai/fast", "api_base": server.api_base}
    panel = write_panel(tmp_path / "panel.yaml", source, [model], render={"engine": "local"})
    store = tmp_path / "store"
    args = ["run", "--panel", str(panel), "--store", str(store)]
    cli = start_cli(args, tmp_path / "full", FAST, wrap=tmpfs_wrap(store, "size=64k"))
    assert cli.wait(timeout=120) == 1
    _no_traceback(cli)
    message = " ".join(cli.stderr.split())
    assert message.startswith(f"error: store {store}: No space left on device"), message
    assert server.hits_for("fast") == []


def _without_scans(source: Path) -> None:
    items = source / "items.jsonl"
    rows = [line for line in items.read_text().splitlines() if '"point_cloud"' not in line]
    items.write_text("\n".join(rows) + "\n")


@needs_mount
def test_an_unwritable_store_fails_before_any_call(tmp_path: Path, server: ModelServer) -> None:
    source, gold = trip_gold(tmp_path)
    server.rules["fast"] = gold_rule(gold)
    model = {"model": "openai/fast", "api_base": server.api_base}
    panel = write_panel(tmp_path / "panel.yaml", source, [model])
    store = tmp_path / "store"
    args = ["run", "--panel", str(panel), "--store", str(store)]
    cli = start_cli(args, tmp_path / "ro", FAST, wrap=tmpfs_wrap(store, "ro,size=64k"))
    assert cli.wait(timeout=120) == 2
    _no_traceback(cli)
    assert "cannot write there: Read-only file system" in cli.stderr
    assert server.hits_for("fast") == []
