"""A disk that fills mid-run stops new model requests at the first answer it cannot keep, in
the run's own process and over answer worker processes: the requests in flight then may end,
no request starts after it, and a resume pays again only for the answers that were not kept."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.cli_process import start_cli, wait_until
from support.model_server import ModelServer, Reply, Rule
from support.small_disk import HeldDisk, needs_mount
from support.trip_panel import gold_rule, trip_gold, write_panel

pytestmark = [pytest.mark.usefixtures("inline"), needs_mount]

# Requests sent at once (the model's max_concurrency, over every process of the run).
AT_ONCE = 4
# Answers kept before the disk fills.
KEPT = 8
# Short heartbeats and grace: the held requests are cancelled a second after the stop.
FAST = {"ROADEVAL_HEARTBEAT_S": "0.5", "ROADEVAL_STOP_GRACE_S": "1"}


class HeldReplies:
    """Answers by `answer`; from the `from_hit`-th request on, each reply waits until it is let
    go (`let_one_go`, `let_all_go`)."""

    def __init__(self, answer: Rule, from_hit: int) -> None:
        self.answer = answer
        self.from_hit = from_hit
        self._lock = threading.Lock()
        self._turns = threading.Semaphore(0)
        self._all = threading.Event()
        self.waiting = 0

    def __call__(self, body: dict[str, Any], hit: int) -> Reply:
        if hit >= self.from_hit and not self._all.is_set():
            with self._lock:
                self.waiting += 1
            self._turns.acquire()
            with self._lock:
                self.waiting -= 1
        return self.answer(body, hit)

    def let_one_go(self) -> None:
        self._turns.release()

    def let_all_go(self) -> None:
        self._all.set()
        self._turns.release(self.waiting + 1)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[HeldDisk]:
    held = HeldDisk(tmp_path / "store")
    yield held
    held.close()


def _text_only(source: Path) -> int:
    """Drop the suite's point-cloud items (no renders); the number of items left."""
    items = source / "items.jsonl"
    rows = [line for line in items.read_text().splitlines() if '"point_cloud"' not in line]
    items.write_text("\n".join(rows) + "\n")
    return len(rows)


@pytest.mark.parametrize("processes", [0, 2], ids=["in-process", "answer-workers"])
def test_a_disk_full_mid_run_starts_no_request_after_the_first_answer_it_cannot_keep(
    tmp_path: Path, server: ModelServer, disk: HeldDisk, processes: int
) -> None:
    source, gold = trip_gold(tmp_path)
    n = _text_only(source)
    held = HeldReplies(gold_rule(gold), from_hit=KEPT + 1)
    server.rules["full"] = held
    model = {"model": "openai/full", "api_base": server.api_base, "max_concurrency": AT_ONCE}
    panel = write_panel(tmp_path / "panel.yaml", source, [model], chunk_size=5)
    args = ["run", "--panel", str(panel), "--store", str(disk.path)]
    args += ["--processes", str(processes)]
    cli = start_cli(args, tmp_path / "first", FAST, wrap=disk.wrap)
    try:
        # Every slot is held by a request the server has not answered: none can start now.
        wait_until(lambda: held.waiting == AT_ONCE, what="the requests in flight")
        sent = len(server.hits_for("full"))
        assert sent == KEPT + AT_ONCE
        disk.fill()
        # One answer comes back and cannot be kept: from then on no request may start, in any
        # process, whichever freed slot it would take. The others stay in flight until the
        # stop's grace cancels them.
        held.let_one_go()
        assert cli.wait(timeout=120) == 1
    finally:
        held.let_all_go()
        if cli.process.poll() is None:  # the test failed before the run ended
            cli.kill()
    assert "Traceback" not in cli.stderr, cli.stderr
    message = " ".join(cli.stderr.split())
    assert f"error: store {disk.path}: No space left on device" in message, message
    assert len(server.hits_for("full")) == sent, "a request started after the store failed"
    # Besides the one whose answer could not be kept.
    others = AT_ONCE - 1
    after = f"no model request started after that ({others} requests in flight had up to 1 s"
    assert after in message, message

    disk.free()
    resumed = start_cli(args, tmp_path / "resumed", FAST, wrap=disk.wrap)
    assert resumed.wait(timeout=120) == 0, resumed.stderr
    # Paid again: only the answers that were in flight when the store failed.
    assert len(server.hits_for("full")) == n + AT_ONCE
