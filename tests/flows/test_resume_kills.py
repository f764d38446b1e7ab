"""Resume at scale: a run of a few hundred items x three models against the test model server,
killed with SIGKILL at three seeded random points and started again each time on the same store,
pays for every request once (only those in flight at a kill are sent twice, and exactly those),
and ends with the scores of an uninterrupted run of the same panel on a fresh store."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from roadeval.benchmarks.registry import get_suite
from roadeval.storage.catalog import connect
from roadeval.storage.store import open_store

from support.cli_process import CliProcess, start_cli, wait_until
from support.model_server import ModelServer, Reply, prompt_text

pytestmark = pytest.mark.usefixtures("inline")

N_ITEMS = 300
MODELS = ("kill-a", "kill-b", "kill-c")
CONCURRENCY = 8
CHUNK_SIZE = 10  # 30 shards per model
# Shards are answered in the run's own process (fewer than 5,000 requests; pinned anyway).
PROCESSES = 1
TOTAL = N_ITEMS * len(MODELS)
KILLS = 3
SEED = 18
# Every request the client may have in flight when a kill lands.
IN_FLIGHT_BOUND = CONCURRENCY * len(MODELS) * PROCESSES
LETTERS = "ABCD"
_INDEX = re.compile(r"Question: \[q(\d{4})\] ")
FRESH = -1  # the uninterrupted run on a fresh store
KEY_ENV = "ROADEVAL_RESUME_TEST_KEY"


def _api_key(run: int) -> str:
    return f"sk-resume-test-run-{run}"


# SQL over a store's views: (store, statement) -> rows.
Rows = Callable[[Path, str], list[tuple[Any, ...]]]

_RUN_OF_KEY = {f"Bearer {_api_key(run)}": run for run in (*range(KILLS + 1), FRESH)}


def _write_suite(root: Path) -> tuple[Path, dict[int, str]]:
    """A text-only TRIP source of N_ITEMS rows: the demo's text rows over and over, each question
    made unique by its index (so a request body names its item); returns the gold letters."""
    demo = get_suite("trip").generate_demo(root / "demo")
    rows = [json.loads(line) for line in (demo / "items.jsonl").read_text().splitlines()]
    text_rows = [row for row in rows if row["modality"] == "text"]
    source = root / "trip-many"
    source.mkdir(parents=True)
    lines, gold = [], {}
    for index in range(N_ITEMS):
        row = dict(text_rows[index % len(text_rows)])
        row["id"] = f"K_t_{index + 1}"
        row["question"] = f"[q{index:04d}] {row['question']}"
        gold[index] = row["answer"]
        lines.append(json.dumps(row, ensure_ascii=False))
    (source / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (source / "VERSION").write_text("trip-many-1\n")
    return source, gold


def _answer(model: str, index: int, gold: str) -> str:
    """Each model's reply to an item, fixed: right, right two times in three, or a mix of wrong
    letters and replies TRIP reads as abnormal."""
    if model == "kill-a":
        return gold
    if model == "kill-b":
        return gold if index % 3 else LETTERS[(LETTERS.index(gold) + 1) % 4]
    if index % 7 == 0:
        return "Probably A or B"
    return LETTERS[(index * 5 + 3) % 4]


@dataclass
class Hit:
    run: int  # which run sent it: 0..KILLS for the store's runs, FRESH for the uninterrupted one
    model: str
    index: int


@dataclass
class Killer:
    """Records every request the server receives, with the run that sent it (told by the API key
    each run's process is given: keys are not part of a request key), and SIGKILLs the running
    command's process group when the store's runs have sent their `target`-th request."""

    gold: dict[int, str]
    hits: list[Hit] = field(default_factory=list)
    store_hits: int = 0
    target: int | None = None
    pid: int | None = None
    killed: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def rule(self, model: str):
        def answer(body: dict[str, Any], hit: int) -> Reply:
            found = _INDEX.search(prompt_text(body))
            assert found is not None, prompt_text(body)
            index = int(found.group(1))
            run = _RUN_OF_KEY[body["_headers"]["authorization"]]
            with self.lock:
                self.hits.append(Hit(run, model, index))
                if run != FRESH:
                    self.store_hits += 1
                    if self.store_hits == self.target:
                        assert self.pid is not None
                        os.killpg(self.pid, signal.SIGKILL)
                        self.killed.set()
            return Reply(_answer(model, index, self.gold[index]), delay_s=0.01)

        return answer

    def arm(self, pid: int, target: int | None) -> None:
        with self.lock:
            self.pid, self.target, self.killed = pid, target, threading.Event()


def _panel(path: Path, source: Path, server: ModelServer) -> Path:
    models = [
        {
            "model": f"openai/{name}",
            "name": name,
            "api_base": server.api_base,
            "api_key_env": KEY_ENV,
            "max_concurrency": CONCURRENCY,
            "input_cost_per_token": 0.000001,
            "output_cost_per_token": 0.000002,
        }
        for name in MODELS
    ]
    panel = {
        "name": "resume-kills",
        "chunk_size": CHUNK_SIZE,
        "processes": PROCESSES,
        "suites": [{"name": "trip", "source": str(source)}],
        "models": models,
        "render": {"engine": "local"},
        "scoring": {"engine": "local"},
    }
    path.write_text(yaml.safe_dump(panel))
    return path


def _kill_points(rng: random.Random) -> list[int]:
    """Three request counts between 10 % and 90 % of the total, at least 5 % apart."""
    low, high, gap = TOTAL // 10, TOTAL * 9 // 10, TOTAL // 20
    while True:
        points = sorted(rng.sample(range(low, high + 1), KILLS))
        if all(b - a >= gap for a, b in itertools.pairwise(points)):
            return points


def _cached_keys(store: Path) -> set[str]:
    return {p.stem for p in (store / "cache" / "responses").glob("*/*.json")}


@pytest.fixture
def sql() -> Iterator[Rows]:
    """SQL over a store's views (as `roadeval query`), one catalogue per store: only once every
    run has ended, since a catalogue sees the store as it was when it was opened."""
    catalogues: dict[Path, duckdb.DuckDBPyConnection] = {}

    def rows(store: Path, statement: str) -> list[tuple[Any, ...]]:
        if store not in catalogues:
            catalogues[store] = connect(open_store(str(store)))
        return catalogues[store].execute(statement).fetchall()

    yield rows
    for catalogue in catalogues.values():
        catalogue.close()


@pytest.fixture
def started() -> Iterator[list[CliProcess]]:
    """The commands a test started; any still running when it ends (a failure) are killed."""
    processes: list[CliProcess] = []
    yield processes
    for cli in processes:
        if cli.process.poll() is None:
            cli.kill()


def _start(
    started: list[CliProcess], tmp_path: Path, panel: Path, store: Path, run: int
) -> CliProcess:
    args = ["run", "--panel", str(panel), "--store", str(store), "--no-report"]
    env = {"ROADEVAL_HEARTBEAT_S": "0.5", KEY_ENV: _api_key(run)}
    cli = start_cli(args, tmp_path / f"run-{run}", env)
    started.append(cli)
    return cli


def _finish(cli: CliProcess) -> None:
    code = cli.wait(timeout=120)
    assert code == 0, cli.stdout + cli.stderr
    assert "Traceback" not in cli.stdout + cli.stderr, cli.stderr


def _scores(rows: Rows, store: Path, run_id: str) -> tuple[list[Any], list[Any]]:
    metrics = rows(
        store,
        "select suite, task, model, slice, slice_value, metric, value, n from metrics "
        f"where run_id = '{run_id}' order by all",
    )
    scores = rows(
        store,
        "select suite, task, item_id, content_hash, model, request_key, metric, value, status, "
        f"unscored_reason from scores where run_id = '{run_id}' order by all",
    )
    return metrics, scores


def test_three_kills_and_resumes_pay_once_and_score_as_an_uninterrupted_run(
    tmp_path: Path, server: ModelServer, started: list[CliProcess], sql: Rows
) -> None:
    source, gold = _write_suite(tmp_path)
    killer = Killer(gold)
    for name in MODELS:
        server.rules[name] = killer.rule(name)
    panel = _panel(tmp_path / "panel.yaml", source, server)
    store, fresh = tmp_path / "store", tmp_path / "fresh-store"
    points = _kill_points(random.Random(SEED))

    # Beside them all, the same panel runs uninterrupted on a fresh store.
    uninterrupted = _start(started, tmp_path, panel, fresh, FRESH)
    # Three runs, each killed with SIGKILL when the store's runs have sent k requests in all.
    cached_after: list[set[str]] = []
    for run, point in enumerate(points):
        cli = _start(started, tmp_path, panel, store, run)
        killer.arm(cli.process.pid, point)
        wait_until(
            lambda cli=cli: killer.killed.is_set() or cli.process.poll() is not None,
            timeout=90,
            what=f"request {point}",
        )
        assert killer.killed.is_set(), f"run {run} ended before request {point}: {cli.stderr}"
        assert cli.wait(timeout=30) == -signal.SIGKILL
        cached_after.append(_cached_keys(store))
    # The same command again, on the same store: it finishes.
    resumed = _start(started, tmp_path, panel, store, KILLS)
    killer.arm(resumed.process.pid, None)
    _finish(resumed)
    _finish(uninterrupted)

    columns = "run_id, status, n_calls, n_cached"
    runs = sql(store, f"select {columns} from runs order by started_at")
    assert [r[1] for r in runs] == ["died"] * KILLS + ["finished"], runs
    final_run = runs[-1][0]
    [(fresh_run, fresh_status, fresh_calls, fresh_cached)] = sql(
        fresh, f"select {columns} from runs"
    )
    assert (fresh_status, fresh_calls, fresh_cached) == ("finished", TOTAL, 0)

    # Request keys, from the finished run's plan: one per item and model, attempt 1 (TRIP never
    # re-asks), so a request body names its key by the model and the item its question shows.
    plan = sql(
        store,
        f"select model, item_id, attempt, request_key from plan where run_id = '{final_run}'",
    )
    assert len(plan) == TOTAL and {row[2] for row in plan} == {1}
    key_of = {(model, item_id): key for model, item_id, _, key in plan}
    every_key = set(key_of.values())
    assert len(every_key) == TOTAL
    fresh_plan = sql(fresh, "select model, item_id, request_key from plan")
    assert {(m, i): k for m, i, k in fresh_plan} == key_of, "the fresh run planned other keys"

    def key(hit: Hit) -> str:
        return key_of[(hit.model, f"K_t_{hit.index + 1}")]

    by_run: dict[int, Counter[str]] = {run: Counter() for run in _RUN_OF_KEY.values()}
    for hit in killer.hits:
        by_run[hit.run][key(hit)] += 1
    # No run sent one request twice (the server never failed: nothing was retried).
    assert all(max(c.values(), default=1) == 1 for c in by_run.values()), "a key sent twice"
    assert set(by_run[FRESH]) == every_key
    sent = [set(by_run[run]) for run in range(KILLS + 1)]

    # What each kill left: the answers received before it are in the response cache; those it
    # lacks were in flight, at most max_concurrency per model (one answer process).
    in_flight: list[set[str]] = []
    before: set[str] = set()
    for run in range(KILLS):
        after = cached_after[run]
        assert before <= after, "a kept answer vanished from the cache"
        assert after - before <= sent[run], "an answer in the cache that was never asked"
        assert not sent[run] & before, f"run {run} asked again for an answer it had"
        lost = sent[run] - after
        assert 0 < len(lost) <= IN_FLIGHT_BOUND, (run, len(lost))
        in_flight.append(lost)
        before = after

    # At the server, every key was sent once by the killed runs and the resumed one together,
    # save those in flight at a kill: once more for each kill that caught it in flight, and
    # nothing else twice; and once by the uninterrupted run.
    expected = Counter(every_key)
    for lost in in_flight:
        expected.update(lost)
    duplicates = sum(len(lost) for lost in in_flight)
    assert duplicates <= KILLS * IN_FLIGHT_BOUND
    expected.update(every_key)  # the uninterrupted run's
    assert Counter(key(hit) for hit in killer.hits) == expected
    assert len(killer.hits) == 2 * TOTAL + duplicates
    assert (len(sent[KILLS]), len(by_run[FRESH])) == (runs[-1][2], fresh_calls)

    # What the store records. A kill -9 leaves no row for the requests it caught in flight (no
    # `interrupted`, no `may_be_billed`: the process had no moment to write one); the resumed run
    # reused exactly the answers the cache kept and sent exactly the others, the lost included.
    assert sql(store, "select count(*) from responses where error_kind is not null") == [(0,)]
    assert sql(store, "select count(*) from responses where may_be_billed") == [(0,)]
    final_sent = sql(
        store,
        f"select request_key from responses where run_id = '{final_run}' and not cached",
    )
    final_reused = sql(
        store,
        f"select request_key, origin_run_id from responses where run_id = '{final_run}' and cached",
    )
    assert sorted(k for (k,) in final_sent) == sorted(every_key - before)
    assert sorted(k for k, _ in final_reused) == sorted(before)
    assert runs[-1][2:] == (TOTAL - len(before), len(before))
    for run, lost in enumerate(in_flight):
        assert lost <= set().union(*sent[run + 1 :]), "an answer lost at a kill was not asked again"
    # A reused answer names the killed run that paid for it.
    killed_runs = [r[0] for r in runs[:KILLS]]
    for request_key, origin in final_reused:
        paid_in = killed_runs.index(origin)
        assert request_key in sent[paid_in] and request_key in cached_after[paid_in]
    # Over the whole store, each answer's purchase is recorded once: as a sent row in the run
    # that bought it when its shard landed, else only as the resumed run's reuse of it (its
    # `origin_run_id` names the killed run). The requests lost at the kills are in no row: the
    # store's runs sent TOTAL + duplicates requests, and the store holds TOTAL purchases.
    bought = sql(
        store,
        "select request_key, count(*) from responses where not cached group by request_key",
    )
    assert all(n == 1 for _, n in bought), "an answer recorded as bought twice"
    bought_keys = {k for k, _ in bought}
    reused_only = {k for k, _ in final_reused} - bought_keys
    assert bought_keys | reused_only == every_key
    # The killed runs' landed shards hold only answers those runs were given.
    for run, run_id in enumerate(killed_runs):
        landed = sql(
            store, f"select request_key from responses where run_id = '{run_id}' and not cached"
        )
        assert {k for (k,) in landed} <= cached_after[run] & sent[run]

    # The resumed run's metrics and item scores are the uninterrupted run's.
    resumed_metrics, resumed_scores = _scores(sql, store, final_run)
    fresh_metrics, fresh_scores = _scores(sql, fresh, fresh_run)
    assert resumed_metrics and len(resumed_scores) >= TOTAL
    assert resumed_metrics == fresh_metrics
    assert resumed_scores == fresh_scores
