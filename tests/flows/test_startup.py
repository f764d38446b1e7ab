"""A lean start: with no Prefect API configured a run is inline (Prefect never imported, nor the
heavy libraries a TRIP run does not need); a configured API or `--prefect` runs the flow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import pytest

from roadeval.flows.stages.orchestration import OrchestratorKind, choose

from support.cli_process import wait_until
from support.model_server import ModelServer, Reply
from support.prefect_server import PrefectServer
from support.trip_panel import answering_panel, invoke, query_csv, trip_gold, write_panel

HEAVY = ("prefect", "scipy", "shapely", "ray", "dask", "distributed", "matplotlib")

# Runs the CLI in a fresh interpreter, then reports what it imported: this test process has
# imported much more by now, so its own sys.modules would prove nothing.
_PROBE = """
import json, sys
from roadeval.flows.cli.main import app
try:
    app(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"code": code, "heavy": heavy, "litellm": "litellm" in sys.modules}}))
"""


def _probe(args: list[str], env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    # No profile with an API either: the run must choose inline by itself.
    env["PREFECT_HOME"] = str(tmp_path / "no-prefect-home")
    return env


def test_help_imports_nothing_heavy(tmp_path: Path) -> None:
    report = _probe(["--help"], _clean_env(tmp_path))
    assert report["heavy"] == []
    assert report["litellm"] is False


def test_inline_run_imports_no_prefect_and_no_unneeded_library(
    tmp_path: Path, server: ModelServer
) -> None:
    panel = answering_panel(tmp_path, server, "lean", Reply("A"))
    store = str(tmp_path / "store")
    run = ["run", "--panel", str(panel), "--store", store]
    report = _probe([*run, "--no-report"], _clean_env(tmp_path))
    assert report["code"] == 0
    assert report["heavy"] == []
    assert report["litellm"] is True
    assert len(server.hits_for("lean")) > 0
    # The run's HTML report draws its figures with matplotlib, and needs nothing else heavy
    # (no other suite's libraries: it loads the run's suites alone).
    reported = _probe(run, _clean_env(tmp_path))
    assert reported["code"] == 0 and reported["heavy"] == ["matplotlib"]
    # Recorded as inline, in the `runs` row and in the manifest.
    rows = query_csv(store, "select orchestrator, status from runs")
    assert rows[1:] == ["inline,finished", "inline,finished"]
    for manifest in (Path(store) / "runs").glob("*/manifest.json"):
        assert json.loads(manifest.read_text())["orchestrator"] == "inline"


def _task_runs_named(api_url: str, name: str) -> list[dict[str, object]]:
    body = json.dumps({"task_runs": {"name": {"any_": [name]}}}).encode()
    request = urllib.request.Request(
        f"{api_url}/task_runs/filter", body, {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_prefect_flag_runs_the_flow(
    tmp_path: Path, server: ModelServer, under_prefect: None, prefect_server: PrefectServer
) -> None:
    source, _ = trip_gold(tmp_path)
    label = f"flow-{uuid.uuid4().hex[:8]}"
    server.rules[label] = lambda body, hit: Reply("A")
    panel = write_panel(
        tmp_path / "panel.yaml",
        source,
        [{"model": f"openai/{label}", "name": label, "api_base": server.api_base}],
        scoring={"engine": "local"},
        render={"engine": "local"},
    )
    store = str(tmp_path / "store")
    result = invoke("run", "--panel", str(panel), "--store", store, "--prefect")
    assert result.exit_code == 0, result.output
    assert query_csv(store, "select orchestrator, status from runs")[1:] == ["prefect,finished"]
    # The stages ran as Prefect task runs of the flow, under their usual names.
    [planned] = _task_runs_named(prefect_server.api_url, f"plan/trip/{label}/chunk 0")
    assert planned["state_type"] == "COMPLETED"
    assert _task_runs_named(prefect_server.api_url, f"answer/trip/{label}/chunk 0")


def test_prefect_is_chosen_when_configured_or_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("PREFECT_PROFILE", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    assert choose() is OrchestratorKind.INLINE
    assert choose(prefect=True) is OrchestratorKind.PREFECT
    # An API in the active profile counts as configured, as it does for Prefect itself.
    (tmp_path / "profiles.toml").write_text(
        'active = "work"\n[profiles.work]\nPREFECT_API_URL = "http://127.0.0.1:4200/api"\n'
    )
    assert choose() is OrchestratorKind.PREFECT
    (tmp_path / "profiles.toml").write_text('active = "work"\n[profiles.work]\n')
    assert choose() is OrchestratorKind.INLINE
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    assert choose() is OrchestratorKind.PREFECT


# The console script's own process (`cli.main` arms the quick exit): its calls go to an answer
# worker whose server imported LiteLLM on the other core while this process loaded and planned.
_PROBE_ARMED = """
import json, sys
from roadeval.flows.cli import main as cli
from roadeval.flows.run import quick_exit
quick_exit.arm()
try:
    cli.app(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "litellm": "litellm" in sys.modules}))
"""


def test_the_commands_process_leaves_litellm_to_its_answer_worker(
    tmp_path: Path, server: ModelServer
) -> None:
    panel = answering_panel(tmp_path, server, "worker", Reply("A"))
    store = str(tmp_path / "store")
    args = ["run", "--panel", str(panel), "--store", store]
    reports = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", _PROBE_ARMED, *args],
            capture_output=True,
            text=True,
            env=_clean_env(tmp_path),
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        reports.append(json.loads(done.stdout.strip().splitlines()[-1]))
    # The first run asked every item (in the worker), the second copied them all (no call).
    asked = len(server.hits_for("worker"))
    assert asked > 0
    assert reports == [{"code": 0, "litellm": False}] * 2
    rows = query_csv(store, "select status, n_calls from runs order by started_at")
    assert rows[1:] == [f"finished,{asked}", "finished,0"]


def _session_members(session: int) -> list[int]:
    """The live processes of a session (a zombie holds nothing; its reaping is init's)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                if os.getsid(int(entry.name)) == session and stat[stat.rindex(")") + 2] != "Z":
                    members.append(int(entry.name))
            except (ProcessLookupError, FileNotFoundError):
                continue
    return members


def _command_line(pid: int) -> bytes:
    """A process's command line; empty once it is exiting (its memory already given back, as
    a process killed with the command is a moment after it) or gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def _run_command(tmp_path: Path, panel: Path) -> tuple[int, list[bytes]]:
    """`roadeval run` by the console script in a session of its own: its exit code, and the
    command lines of its session's processes still alive when it has exited.

    multiprocessing's resource tracker is not counted: it ends by itself once its last holder
    is gone, a moment after the command (it is checked to be gone soon after)."""
    script = Path(sys.executable).parent / "roadeval"
    # Its output to a file, not a pipe: a pipe's reader would wait for the server to exit too.
    with (tmp_path / "err.txt").open("wb") as err:
        command = subprocess.Popen(
            [str(script), "run", "--panel", str(panel), "--store", str(tmp_path / "store")],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=_clean_env(tmp_path),
            start_new_session=True,
        )
        code = command.wait(timeout=180)

    def alive() -> list[bytes]:
        return [cmd for pid in _session_members(command.pid) if (cmd := _command_line(pid))]

    left = [cmd for cmd in alive() if b"resource_tracker" not in cmd]
    if not left:
        wait_until(lambda: alive() == [], timeout=10, what="the resource tracker to end")
    return code, left


def test_a_bad_panel_leaves_no_process_behind(tmp_path: Path) -> None:
    # The console script starts the answer workers' server before it reads the panel: a bad
    # panel stops it with the command, rather than leave it importing LiteLLM (and holding
    # the command's output open) for seconds after the command has exited.
    panel = tmp_path / "panel.yaml"
    panel.write_text("name: bad\nsuites: [{name: trip}]\nmodels: 7\n", encoding="utf-8")
    code, left = _run_command(tmp_path, panel)
    assert code == 2, (tmp_path / "err.txt").read_text()
    assert left == []


def test_a_finished_run_leaves_no_process_behind(tmp_path: Path, server: ModelServer) -> None:
    # The answer workers' server imported LiteLLM for the run's calls: once the command is
    # done it is killed with it, not left to tear LiteLLM down while it holds the output open
    # (a `roadeval run | tee` would wait for it).
    code, left = _run_command(tmp_path, answering_panel(tmp_path, server, "done", Reply("A")))
    assert code == 0, (tmp_path / "err.txt").read_text()
    assert len(server.hits_for("done")) > 0
    assert left == []
