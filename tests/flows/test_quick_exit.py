"""The console script's quick exit: what must run at exit still runs (stdio flushed, atexit
handlers, the exit code), and it steps aside whenever the ordinary exit is needed."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from roadeval.flows.run import quick_exit

from support.model_server import ModelServer, Reply
from support.trip_panel import answering_panel, query_csv

_LEAVES = """
import atexit, sys
from roadeval.flows.run import quick_exit
quick_exit.arm()
atexit.register(lambda: print("atexit ran", flush=True))
sys.stdout.write("buffered, no newline")
quick_exit.leave(3)
"""


@pytest.fixture
def armed() -> Iterator[None]:
    quick_exit.arm()
    yield
    quick_exit.disarm()


def test_leave_flushes_runs_atexit_and_keeps_the_code() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LEAVES], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newlineatexit ran\n"


def test_unarmed_leave_is_the_ordinary_exit() -> None:
    with pytest.raises(SystemExit) as raised:
        quick_exit.leave(4)
    assert raised.value.code == 4


def test_a_running_thread_gets_the_ordinary_exit(armed: None) -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        assert not quick_exit.can_leave_quickly()
        with pytest.raises(SystemExit) as raised:
            quick_exit.leave(0)
        assert raised.value.code == 0
    finally:
        release.set()
        worker.join()


def test_a_library_with_its_own_shutdown_gets_the_ordinary_exit(
    armed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", sys)
    assert not quick_exit.can_leave_quickly()
    with pytest.raises(SystemExit):
        quick_exit.leave(0)


def test_kept_only_when_armed() -> None:
    kept = object()
    quick_exit.keep_until_exit(kept)
    assert kept not in quick_exit._Kept.objects
    quick_exit.arm()
    try:
        quick_exit.keep_until_exit(kept)
        assert kept in quick_exit._Kept.objects
    finally:
        quick_exit.disarm()
    assert quick_exit._Kept.objects == []


def test_console_script_run_reports_and_lands_everything(
    tmp_path: Path, server: ModelServer
) -> None:
    panel = answering_panel(tmp_path, server, "quick", Reply("A"))
    store = str(tmp_path / "store")
    command = ["run", "--panel", str(panel), "--store", store]
    done = subprocess.run(
        [sys.executable, "-m", "roadeval.flows.cli.main", *command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    # The last lines, printed just before the quick exit, are all there.
    last = done.stdout.rstrip().splitlines()[-2:]
    assert last[0].startswith("manifest: ") and last[1].startswith("report: ")
    assert query_csv(store, "select status from runs")[1:] == ["finished"]
