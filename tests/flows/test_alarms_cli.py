"""A panel's alarms through the CLI: three runs of a panel that re-asks every answer (as the
scheduled deployment does) against the tests' HTTP model server, where `drifter` answers half
of the items wrong from run 3 on under a new `system_fingerprint` (same items, same model
string) and `steady` answers the same every run. Run 3 finds the drift: `history` and
`compare` say so, the panel's webhook (a real HTTP server here) gets one drift alarm, and the
Prefect server's events API holds one `roadeval.run.drift` event; the webhook's token is
nowhere. A run that fails alarms once; a run found dead by the next alarms once."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ParsedAnswer
from roadeval.benchmarks.trip.suite import TripSuite

from support.cli_process import start_cli, wait_until
from support.model_server import ModelServer, Reply
from support.orchestrators import prefect_api
from support.prefect_server import PrefectServer
from support.trip_panel import gold_rule, invoke, query_csv, seen_by_model, trip_gold
from support.webhook_receiver import WebhookReceiver

PANEL = "watched"
TOKEN = "hooktoken-7f3a9c51e2b84d06"
DRIFT_AT = 3


def _wrong(letter: str) -> str:
    return "B" if letter == "A" else "A"


def _half(seen: tuple[str, tuple[str, ...]]) -> bool:
    return sum(map(ord, seen[0])) % 2 == 0


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    found = WebhookReceiver().start()
    yield found
    found.stop()


def _write(path: Path, panel: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(panel), encoding="utf-8")
    return path


def _panel(root: Path, source: Path, server: ModelServer, receiver: WebhookReceiver) -> Path:
    models = [
        {"name": name, "model": f"openai/{name}", "api_base": server.api_base}
        for name in ("steady", "drifter")
    ]
    return _write(
        root / "panel.yaml",
        {
            "name": PANEL,
            "scoring": {"engine": "local"},
            "render": {"engine": "local"},
            # As the scheduled deployment runs it: every answer asked again.
            "reuse_for": "never",
            "suites": [{"name": "trip", "source": str(source)}],
            "models": models,
            "alerts": {"webhook": receiver.url(f"/hooks/{TOKEN}")},
        },
    )


@dataclass(frozen=True)
class Watched:
    store: Path
    panel: Path
    ids: list[str]
    outputs: list[str]
    items: int


def _run_ids(store: Path) -> list[str]:
    return [
        line for line in query_csv(str(store), "select run_id from runs order by started_at")[1:]
    ]


def _events(api_url: str, name: str, panel: str) -> list[dict[str, Any]]:
    """The events named `name` related to `panel` on the Prefect server, waiting up to 30 s
    for Prefect's events worker to have sent one."""
    body = {
        "filter": {
            "event": {"name": [name]},
            "related": {"id": [f"roadeval.panel.{panel}"]},
            "occurred": {"since": (datetime.now(UTC) - timedelta(hours=1)).isoformat()},
        },
        "limit": 50,
    }
    deadline = time.monotonic() + 30
    while True:
        request = urllib.request.Request(
            f"{api_url}/events/filter",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            events = json.loads(reply.read())["events"]
        if events or time.monotonic() > deadline:
            return events
        time.sleep(0.2)


@pytest.fixture
def watched(
    tmp_path: Path,
    server: ModelServer,
    receiver: WebhookReceiver,
    prefect_server: PrefectServer,
) -> Watched:
    source, gold = trip_gold(tmp_path)
    run = {"number": 1}

    def steady(body: dict[str, Any], hit: int) -> Reply:
        seen = seen_by_model(body["messages"])
        answer = gold[seen] if _half(seen) else _wrong(gold[seen])
        return Reply(answer, system_fingerprint="fp_steady")

    def drifter(body: dict[str, Any], hit: int) -> Reply:
        seen = seen_by_model(body["messages"])
        if run["number"] < DRIFT_AT:
            return Reply(gold[seen], system_fingerprint="fp_2026a")
        return Reply(
            _wrong(gold[seen]) if _half(seen) else gold[seen], system_fingerprint="fp_2026b"
        )

    server.rules.update(steady=steady, drifter=drifter)
    panel = _panel(tmp_path, source, server, receiver)
    store = tmp_path / "store"
    outputs = []
    with prefect_api(prefect_server.api_url):
        for number in range(1, DRIFT_AT + 1):
            run["number"] = number
            asked = len(server.hits_for("drifter"))
            result = invoke("run", "--panel", str(panel), "--store", str(store))
            assert result.exit_code == 0, result.output
            outputs.append(result.output)
            # Every answer asked again (reuse_for: never), the third run's too.
            assert len(server.hits_for("drifter")) - asked == len(gold)
    return Watched(store, panel, _run_ids(store), outputs, len(gold))


def test_a_model_changed_behind_its_name_is_flagged_and_announced_once(
    watched: Watched, receiver: WebhookReceiver, prefect_server: PrefectServer, tmp_path: Path
) -> None:
    _, second, third = watched.ids
    # History: the drifter, and only it, with what served it before and after.
    result = invoke("history", "--panel", str(watched.panel), "--store", str(watched.store))
    assert result.exit_code == 0, result.output
    table = re.search(r"drift: (\d+)\s*\n(.*?)(?:\nhistory page|\Z)", result.output, re.S)
    assert table, result.output
    flagged = table.group(2)
    assert re.search(r"│\s*2 → 3\s*│\s*trip\s*│\s*drifter\s*│", flagged), result.output
    assert "steady" not in flagged
    assert "fp_2026a" in flagged and "fp_2026b" in flagged

    # Compare agrees: the drifter worse beyond noise, the steady model within it.
    compared = invoke("compare", second, third, "--store", str(watched.store), "--format", "json")
    assert compared.exit_code == 0, compared.output
    rows = {
        (r["model"], r["metric"]): r
        for r in json.loads(compared.output)["headlines"]
        if r["task"] == "*"
    }
    assert rows[("drifter", "accuracy")]["significant"]
    assert rows[("drifter", "accuracy")]["verdict"] == "worse"
    assert not rows[("steady", "accuracy")]["significant"]

    # The webhook: exactly one alarm over the three runs, run 3's drift of the drifter.
    [(path, alarm)] = receiver.received
    assert path == f"/hooks/{TOKEN}"
    assert (alarm["event"], alarm["kind"], alarm["run_id"]) == (
        "roadeval.run.drift",
        "drift",
        third,
    )
    assert alarm["panel"] == PANEL and alarm["models"] == {"drifter": "openai/drifter"}
    flags = alarm["drift"]
    assert {f["model"] for f in flags} == {"drifter"}
    accuracy = next(f for f in flags if f["metric"] == "accuracy" and f["task"] == "*")
    assert accuracy["baseline_run_id"] == second and accuracy["before"] == 1.0
    assert accuracy["difference"] < 0 and accuracy["p_holm"] <= 0.05
    assert "fp_2026a" in accuracy["served_before"] and "fp_2026b" in accuracy["served_after"]
    assert "trip/accuracy" in alarm["metrics"]
    assert alarm["report"] and alarm["history_page"]
    # What the run printed.
    assert "alarm roadeval.run.drift sent: Prefect event" in watched.outputs[-1]
    assert "alarm roadeval.run.drift sent: webhook http://127.0.0.1:" in watched.outputs[-1]

    # Prefect: one drift event of the panel, about run 3, related to the panel, the model and
    # the metric.
    [event] = _events(prefect_server.api_url, "roadeval.run.drift", PANEL)
    assert event["resource"]["prefect.resource.id"] == f"roadeval.run.{third}"
    related = {(r["prefect.resource.role"], r["prefect.resource.id"]) for r in event["related"]}
    assert ("panel", f"roadeval.panel.{PANEL}") in related
    assert ("model", "roadeval.model.openai/drifter") in related
    assert ("metric", "roadeval.metric.trip/accuracy") in related
    assert ("model", "roadeval.model.openai/steady") not in related
    assert any(role == "flow-run" for role, _ in related), related
    assert event["payload"]["drift"] == flags

    # The webhook's token: in no store file, no Prefect file, no output.
    places = [watched.store, prefect_server.home]
    leaks = [
        str(p)
        for place in places
        for p in place.rglob("*")
        if p.is_file() and TOKEN.encode() in p.read_bytes()
    ]
    assert leaks == []
    assert not any(TOKEN in out for out in [*watched.outputs, result.output])
    record_file = watched.store / "alarms" / third / "drift.json"
    recorded = json.loads(record_file.read_text())
    assert [d["channel"] for d in recorded["deliveries"]] == ["prefect", "webhook"]
    assert all(d["error"] is None for d in recorded["deliveries"])
    assert recorded["deliveries"][1]["target"].endswith("/[redacted]")


def _inline_panel(root: Path, server: ModelServer, receiver: WebhookReceiver, **model: Any) -> Path:
    """A one-model TRIP panel that answers every item right, with the webhook; small shards."""
    source, gold = trip_gold(root)
    answer = gold_rule(gold)
    delay_s = model.pop("delay_s", 0.0)
    server.rules["fa"] = lambda body, hit: Reply(answer(body, hit).text, delay_s=delay_s)
    entry = {"name": "fa", "model": "openai/fa", "api_base": server.api_base, **model}
    return _write(
        root / "panel.yaml",
        {
            "name": PANEL,
            "chunk_size": 5,
            "scoring": {"engine": "local"},
            "render": {"engine": "local"},
            "suites": [{"name": "trip", "source": str(source)}],
            "models": [entry],
            "alerts": {"webhook": receiver.url(f"/hooks/{TOKEN}"), "alarms": ["failed", "crashed"]},
        },
    )


@pytest.mark.usefixtures("inline")
def test_a_failed_run_alarms_once_and_its_resume_does_not(
    tmp_path: Path, server: ModelServer, receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = _inline_panel(tmp_path, server, receiver)
    store = tmp_path / "store"
    parse = TripSuite.parse

    def parse_or_break(self: TripSuite, item: Item, output: ModelOutput) -> ParsedAnswer:
        if item.item_id.endswith("7"):
            raise RuntimeError(f"gold answer of {item.item_id} will not read")
        return parse(self, item, output)

    with monkeypatch.context() as patch:
        patch.setattr(TripSuite, "parse", parse_or_break)
        failed = invoke("run", "--panel", str(panel), "--store", str(store))
    assert failed.exit_code == 1
    [run_id] = _run_ids(store)
    [(_, alarm)] = receiver.received
    assert (alarm["event"], alarm["run_id"], alarm["status"]) == (
        "roadeval.run.failed",
        run_id,
        "failed",
    )
    assert alarm["message"].startswith("a shard failed: gold answer of")
    assert alarm["models"] == {"fa": "openai/fa"} and alarm["drift"] == []
    # Inline: no Prefect API, so no event and no error; the webhook took it.
    assert "alarm roadeval.run.failed sent: webhook http://127.0.0.1:" in failed.output
    assert "Prefect" not in failed.output and TOKEN not in failed.output

    resumed = invoke("run", "--panel", str(panel), "--store", str(store))
    assert resumed.exit_code == 0, resumed.output
    assert len(receiver.received) == 1
    assert "alarm roadeval" not in resumed.output


@pytest.mark.usefixtures("inline")
def test_a_webhook_that_fails_is_a_warning_and_the_run_still_finishes(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    down = WebhookReceiver(status=503).start()
    try:
        panel = _inline_panel(tmp_path, server, down)
        parse = TripSuite.parse

        def parse_or_break(self: TripSuite, item: Item, output: ModelOutput) -> ParsedAnswer:
            raise RuntimeError("no parse today")

        monkeypatch.setattr(TripSuite, "parse", parse_or_break)
        del parse
        result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    finally:
        down.stop()
    # The run's own exit (1: failed), not the webhook's.
    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert "warning: alarm roadeval.run.failed not taken by webhook http://127.0.0.1:" in message
    assert "HTTP 503" in message and "the run's end is unchanged" in message
    assert len(down.received) == 1 and TOKEN not in result.output
    [run_id] = _run_ids(tmp_path / "store")
    recorded = json.loads((tmp_path / "store" / "alarms" / run_id / "failed.json").read_text())
    assert recorded["deliveries"][0]["error"].startswith("HTTP 503")


@pytest.mark.usefixtures("inline")
def test_a_killed_run_is_announced_crashed_once_by_the_run_that_finds_it(
    tmp_path: Path, server: ModelServer, receiver: WebhookReceiver
) -> None:
    panel = _inline_panel(tmp_path, server, receiver, delay_s=0.2, max_concurrency=2)
    store = tmp_path / "store"
    args = ["run", "--panel", str(panel), "--store", str(store)]
    cli = start_cli(args, tmp_path / "killed", {"ROADEVAL_HEARTBEAT_S": "0.5"})
    wait_until(lambda: len(server.hits_for("fa")) >= 4, what="four requests")
    cli.kill()
    [dead] = _run_ids(store)
    wait_until(
        lambda: query_csv(str(store), "select status from runs")[1:] == ["died"],
        timeout=10,
        what="died",
    )
    assert receiver.received == []  # a killed process sends nothing itself

    resumed = invoke("run", "--panel", str(panel), "--store", str(store))
    assert resumed.exit_code == 0, resumed.output
    _, found_by = _run_ids(store)
    [(_, alarm)] = receiver.received
    assert (alarm["event"], alarm["run_id"], alarm["status"]) == (
        "roadeval.run.crashed",
        dead,
        "died",
    )
    assert alarm["reported_by"] == found_by
    assert "alarm roadeval.run.crashed sent: webhook" in resumed.output
    # The next run continues a finished one: nothing more to announce.
    again = invoke("run", "--panel", str(panel), "--store", str(store))
    assert again.exit_code == 0, again.output
    assert len(receiver.received) == 1


@pytest.mark.usefixtures("inline")
@pytest.mark.parametrize(
    ("alerts", "expected"),
    [
        (
            {"webhook": f"ftp://hooks.example/{TOKEN}"},
            "alerts.webhook: is not an http:// or https:// URL",
        ),
        (
            {"webhook": f"https://hooks.example/{TOKEN}", "alarms": ["drift", "exploded"]},
            "alerts.alarms[1]: Input should be 'drift', 'failed', 'crashed', 'budget_stopped' "
            "or 'errors'",
        ),
        (
            {"webhook": f"https://hooks.example/{TOKEN}", "webhook_env": "HOOK"},
            "alerts: give exactly one of 'webhook' (its URL) or 'webhook_env'",
        ),
        (
            {"webhook": f"https://hooks.example/{TOKEN}", "timeout_s": 600},
            "alerts.timeout_s: 600 is more than 60, the most it may be",
        ),
        (
            {"webhook_env": "ROADEVAL_TEST_UNSET_HOOK"},
            "alerts: its webhook_env, ROADEVAL_TEST_UNSET_HOOK, is not set in the environment",
        ),
    ],
)
def test_a_bad_alerts_block_is_refused_before_the_run_naming_the_field_never_the_url(
    tmp_path: Path, server: ModelServer, alerts: dict[str, Any], expected: str
) -> None:
    source, _ = trip_gold(tmp_path)
    panel = _write(
        tmp_path / "panel.yaml",
        {
            "name": PANEL,
            "suites": [{"name": "trip", "source": str(source)}],
            "models": [{"name": "fa", "model": "openai/fa", "api_base": server.api_base}],
            "alerts": alerts,
        },
    )
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    message = " ".join(result.output.split())
    assert result.exit_code == 2, message
    assert expected in message, message
    if "webhook_env" not in alerts:
        assert message.startswith(f"error: {panel}:"), message
    assert TOKEN not in message and "Traceback" not in message
    assert server.hits_for("fa") == [] and not store.exists()


@pytest.mark.usefixtures("inline")
def test_a_run_stopped_by_its_budget_alarms_budget_stopped(
    tmp_path: Path, server: ModelServer, receiver: WebhookReceiver
) -> None:
    panel = _inline_panel(
        tmp_path,
        server,
        receiver,
        params={"max_tokens": 8},
        max_concurrency=1,
        input_cost_per_token=1e-6,
        output_cost_per_token=2e-6,
    )
    store = tmp_path / "store"
    # The panel's webhook takes failed and crashed only: budget_stopped goes nowhere.
    quiet = invoke(
        "campaign", "--panel", str(panel), "--store", str(store), "--budget-usd", "0.0002"
    )
    assert quiet.exit_code == 3, quiet.output
    assert receiver.received == []
    assert "alarm roadeval.run.budget_stopped raised, recorded in" in " ".join(quiet.output.split())
    body = yaml.safe_load(panel.read_text())
    body["alerts"]["alarms"] = ["budget_stopped"]
    _write(panel, body)
    result = invoke(
        "campaign", "--panel", str(panel), "--store", str(store), "--budget-usd", "0.0004"
    )
    assert result.exit_code == 3, result.output
    [(_, alarm)] = receiver.received
    _, second = _run_ids(store)
    assert (alarm["event"], alarm["run_id"], alarm["status"]) == (
        "roadeval.run.budget_stopped",
        second,
        "out_of_budget",
    )
    assert alarm["budget_usd"] == 0.0004 and 0 <= alarm["cost_usd"] <= 0.0004
    assert alarm["message"].startswith("budget reached: ")
    assert alarm["items_left"] > 0


@pytest.mark.usefixtures("inline")
def test_a_run_whose_endpoint_is_down_finishes_with_errors_and_alarms_errors(
    tmp_path: Path, server: ModelServer, receiver: WebhookReceiver
) -> None:
    from support.clusters import free_port

    # Nobody listens there: every call fails, the run ends `finished` with its items in error.
    down = f"http://127.0.0.1:{free_port()}/v1"
    panel = _inline_panel(tmp_path, server, receiver, api_base=down)
    written = yaml.safe_load(panel.read_text())
    written["alerts"]["alarms"] = ["failed", "errors"]
    panel.write_text(yaml.safe_dump(written))
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 1, result.output
    [run_id] = _run_ids(store)
    [(_, alarm)] = receiver.received
    assert (alarm["event"], alarm["kind"], alarm["run_id"], alarm["status"]) == (
        "roadeval.run.errors",
        "errors",
        run_id,
        "finished",
    )
    [row] = query_csv(str(store), f"select n_errors from runs where run_id = '{run_id}'")[1:]
    assert alarm["errors"] == int(row) > 0
    assert "alarm roadeval.run.errors sent: webhook http://127.0.0.1:" in result.output
    assert TOKEN not in result.output
