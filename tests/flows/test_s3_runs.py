"""The whole pipeline on S3 through the real command, each run a process of its own in its own
working directory, sharing nothing but the bucket: the demo lands everything there and `roadeval
query` reads it back; a run killed with SIGKILL in the middle of a batch of claimed requests
loses only what was in flight, and two runs resuming it at once pay for nothing twice; two runs
of one batch-mode model started together submit each request once."""

from __future__ import annotations

import json
import re
import signal
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml

from roadeval.benchmarks.registry import get_suite
from roadeval.storage.store import open_store
from roadeval.tasks.cache.responses import stored_request_keys

from support.batch_server import BatchServer
from support.cli_process import CliProcess, run_cli, start_cli, wait_until
from support.model_server import ModelServer, Reply, prompt_text
from support.trip_panel import gold_rule, trip_gold, write_panel

pytestmark = [pytest.mark.s3, pytest.mark.usefixtures("inline")]

POOL_FULL = "Connection pool is full"


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    name = f"runs-{uuid.uuid4().hex[:8]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture
def started() -> Iterator[list[CliProcess]]:
    """The commands a test started; any still running when it ends (a failure) are killed."""
    processes: list[CliProcess] = []
    yield processes
    for cli in processes:
        if cli.process.poll() is None:
            cli.kill()


def bucket_keys(endpoint: str, bucket: str, prefix: str) -> list[str]:
    client = boto3.client("s3", endpoint_url=endpoint)
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(obj["Key"][len(prefix) :] for obj in page.get("Contents", []))
    return keys


def query(store: str, sql: str, workdir: Path) -> list[list[str]]:
    """`roadeval query --format csv` as a process of its own: rows, header first."""
    cli = run_cli(["query", "--store", store, "--format", "csv", sql], workdir)
    assert cli.process.returncode == 0, cli.stderr
    return [line.split(",") for line in cli.stdout.splitlines()]


def test_the_demo_lands_everything_in_s3_and_query_reads_it_from_elsewhere(
    tmp_path: Path, s3_endpoint: str, bucket: str
) -> None:
    store = f"s3://{bucket}/nightly"
    demo = run_cli(["demo", "--store", store], tmp_path / "demo")
    assert demo.process.returncode == 0, demo.stdout + demo.stderr
    assert POOL_FULL not in demo.stdout + demo.stderr
    keys = bucket_keys(s3_endpoint, bucket, "nightly/")
    tops = Counter(key.split("/")[0] for key in keys)
    for folder in ("tables", "landings", "runs", "renders", "cache", "reports"):
        assert tops[folder] > 0, (folder, tops)
    [run_id] = {key.split("/")[1] for key in keys if key.startswith("runs/")}
    assert {f"runs/{run_id}/manifest.json", f"runs/{run_id}/heartbeat.json"} <= set(keys)
    # Answers are kept in packs, and every journal that wrote them was closed with its index.
    assert any(key.startswith("cache/packs/") for key in keys)
    journals = [key for key in keys if key.startswith("cache/journals/")]
    opened = {key.removesuffix(".open") for key in journals if key.endswith(".open")}
    assert opened and opened == {
        key.removesuffix(".json") for key in journals if key.endswith(".json")
    }
    tables = {key.split("/")[1] for key in keys if key.startswith("tables/")}
    assert {"items", "plan", "responses", "parses", "scores", "metrics", "run_events"} <= tables

    # Read from another working directory, with nothing but the bucket in common.
    elsewhere = tmp_path / "elsewhere"
    [header, *runs] = query(store, "select run_id, status, n_scored from runs", elsewhere)
    assert header == ["run_id", "status", "n_scored"]
    assert [row[:2] for row in runs] == [[run_id, "finished"]] and int(runs[0][2]) > 0
    counts = query(
        store,
        "select (select count(distinct suite) from items), (select count(*) from responses), "
        "(select count(*) from scores), (select count(*) from costs)",
        elsewhere,
    )[1]
    assert int(counts[0]) == 5 and all(int(n) > 0 for n in counts[1:]), counts


# --- a run killed in the middle of a batch ------------------------------------------------

N_ITEMS = 40
CONCURRENCY = 8
KILL_AT = 14  # the request whose arrival kills the first run
KEY_ENV = "ROADEVAL_S3_RUNS_TEST_KEY"
_INDEX = re.compile(r"Question: \[q(\d{4})\] ")


def _text_suite(root: Path) -> Path:
    """A text-only TRIP source of N_ITEMS rows, each question naming its index."""
    demo = get_suite("trip").generate_demo(root / "demo")
    rows = [json.loads(line) for line in (demo / "items.jsonl").read_text().splitlines()]
    text_rows = [row for row in rows if row["modality"] == "text"]
    source = root / "trip-text"
    source.mkdir(parents=True)
    lines = []
    for index in range(N_ITEMS):
        row = dict(text_rows[index % len(text_rows)])
        row["id"] = f"S_t_{index + 1}"
        row["question"] = f"[q{index:04d}] {row['question']}"
        lines.append(json.dumps(row, ensure_ascii=False))
    (source / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (source / "VERSION").write_text("trip-text-1\n")
    return source


class Recorder:
    """Every request the model server receives, by run (told by its API key) and item; kills
    the first run's process group when its KILL_AT-th request arrives."""

    def __init__(self) -> None:
        self.hits: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        self.pid: int | None = None
        self.killed = threading.Event()

    def rule(self, body: dict[str, Any], hit: int) -> Reply:
        found = _INDEX.search(prompt_text(body))
        assert found is not None
        run = body["_headers"]["authorization"].removeprefix("Bearer sk-")
        with self.lock:
            self.hits.append((run, int(found.group(1))))
            if run == "first" and len(self.hits) == KILL_AT and self.pid is not None:
                import os

                os.killpg(self.pid, signal.SIGKILL)
                self.killed.set()
        return Reply("A", delay_s=0.4)


def test_a_run_killed_mid_batch_loses_only_what_was_in_flight_and_two_resumers_pay_once(
    tmp_path: Path,
    s3_endpoint: str,
    bucket: str,
    server: ModelServer,
    started: list[CliProcess],
) -> None:
    recorder = Recorder()
    server.rules["slowkill"] = recorder.rule
    source = _text_suite(tmp_path)
    panel = {
        "name": "killed-mid-batch",
        "chunk_size": 10,
        "processes": 1,
        "suites": [{"name": "trip", "source": str(source)}],
        "models": [
            {
                "model": "openai/slowkill",
                "name": "slowkill",
                "api_base": server.api_base,
                "api_key_env": KEY_ENV,
                "max_concurrency": CONCURRENCY,
            }
        ],
        "render": {"engine": "local"},
        "scoring": {"engine": "local"},
    }
    panel_path = tmp_path / "panel.yaml"
    panel_path.write_text(yaml.safe_dump(panel))
    store = f"s3://{bucket}/shared"
    args = ["run", "--panel", str(panel_path), "--store", store]

    beat = {"ROADEVAL_HEARTBEAT_S": "0.5"}
    first = start_cli(args, tmp_path / "first", {KEY_ENV: "sk-first", **beat})
    started.append(first)
    recorder.pid = first.process.pid
    wait_until(
        lambda: recorder.killed.is_set() or first.process.poll() is not None,
        timeout=120,
        what=f"the first run's request {KILL_AT}",
    )
    assert recorder.killed.is_set(), first.stderr
    assert first.wait(timeout=30) == -signal.SIGKILL
    kept = stored_request_keys(open_store(store))
    assert bucket_keys(s3_endpoint, bucket, "shared/cache/claims/"), "no claim record"

    # Two runs resume it at once, each in its own working directory.
    resumers = [
        start_cli(args, tmp_path / name, {KEY_ENV: f"sk-{name}", **beat})
        for name in ("second", "third")
    ]
    started.extend(resumers)
    for cli in resumers:
        assert cli.wait(timeout=180) == 0, cli.stdout + cli.stderr
        assert POOL_FULL not in cli.stdout + cli.stderr

    plan = query(
        store,
        "select distinct item_id, request_key from plan",
        tmp_path / "query",
    )[1:]
    key_of = {int(item_id.removeprefix("S_t_")) - 1: key for item_id, key in plan}
    assert len(key_of) == N_ITEMS
    sent: dict[str, Counter[int]] = {}
    for run, index in recorder.hits:
        sent.setdefault(run, Counter())[index] += 1
    assert all(max(c.values()) == 1 for c in sent.values()), "one run sent a request twice"
    first_sent = set(sent["first"])
    answered_before = {i for i in first_sent if key_of[i] in kept}
    in_flight = first_sent - answered_before
    assert answered_before and in_flight, (answered_before, in_flight)
    assert len(in_flight) <= CONCURRENCY
    resumed = [set(sent.get(name, Counter())) for name in ("second", "third")]
    # The resumers split the rest between them: never both one request, never one the killed
    # run kept, every one it did not.
    assert not resumed[0] & resumed[1], "two resuming runs paid for one request"
    assert not (resumed[0] | resumed[1]) & answered_before, "a kept answer was paid for again"
    assert resumed[0] | resumed[1] == set(range(N_ITEMS)) - answered_before
    totals = Counter(index for _, index in recorder.hits)
    assert {i for i, n in totals.items() if n > 1} <= in_flight
    status = query(store, "select status, n_scored from runs order by started_at", tmp_path / "q")
    assert [row[0] for row in status[1:]] == ["died", "finished", "finished"]
    assert [int(row[1]) for row in status[2:]] == [N_ITEMS, N_ITEMS]


# --- two batch runs at once -----------------------------------------------------------------


@pytest.fixture
def batch_server() -> Iterator[BatchServer]:
    server = BatchServer().start()
    yield server
    server.stop()


def test_two_runs_of_a_batch_model_started_together_submit_each_request_once(
    tmp_path: Path, bucket: str, batch_server: BatchServer
) -> None:
    source, gold = trip_gold(tmp_path)
    batch_server.rules["batchy"] = gold_rule(gold)
    batch_server.polls_until_done = 2
    # The first upload waits for a second: both runs are surely submitting at the same time
    # (without claims on what is being submitted, both would send every request).
    batch_server.pair_uploads_s = 8.0
    model = {
        "model": "openai/batchy",
        "name": "batchy",
        "api_base": batch_server.api_base,
        "mode": "batch",
        "batch_poll_s": 0.2,
        "input_cost_per_token": 2e-6,
        "output_cost_per_token": 4e-6,
        "batch_input_cost_per_token": 1e-6,
        "batch_output_cost_per_token": 2e-6,
    }
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [model],
        chunk_size=10,
        render={"engine": "local"},
        scoring={"engine": "local"},
    )
    store = f"s3://{bucket}/batches"
    args = ["run", "--panel", str(panel), "--store", store]
    runs = [start_cli(args, tmp_path / name) for name in ("one", "two")]
    for cli in runs:
        assert cli.wait(timeout=180) == 0, cli.stdout + cli.stderr
        assert POOL_FULL not in cli.stdout + cli.stderr
    submitted = batch_server.submitted_keys()
    assert len(submitted) == len(gold), Counter(Counter(submitted).values())
    assert batch_server.batches_created == 1
    rows = query(store, "select n_scored, status from runs", tmp_path / "query")[1:]
    assert rows == [[str(len(gold)), "finished"]] * 2
