"""A deployed run of the demo panel against the same panel run inline (issue 19): the wall time
of each, and what Prefect adds on a warm server (target: under 10 s).

    .venv/bin/python bench/deployed_overhead.py [--repeat 3] [--poll SECONDS] [--api-url URL]

Starts `prefect server start --no-ui` on a free 127.0.0.1 port in a PREFECT_HOME of its own (or
uses `--api-url`), then `roadeval deploy --panel bundled:demo --name bench-overhead` serving the
demo's deployments from a process of its own (its runner polls the server every `--poll` seconds,
PREFECT_RUNNER_POLL_FREQUENCY; unset: Prefect's default, 10 s). One inline and one deployed run
warm everything first (the demo's generated suites and media cache, which both kinds share, the
server's tables, the OS caches) and are not counted. Then `--repeat` pairs, alternating which
goes first:
  inline    `roadeval demo --store FRESH`, its own process with no Prefect API (no PREFECT_API_URL,
            no Prefect profile): wall from launch to exit
  deployed  `run_deployment("evaluate-panel/bench-overhead-rerun", store=FRESH)`: wall from the
            trigger to the Completed state (polled every 0.2 s), and the flow run's own times:
            waiting (created -> running: the runner's poll, its subprocess, Prefect's imports)
            and running (running -> completed: roadeval's imports and the run, under Prefect)
Every run has a fresh store, so none reuses another's answers. Prints each run, the medians, and
the overhead (deployed wall - inline wall).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.prefect_server import PrefectServer, start_prefect_server  # noqa: E402

TARGET_S = 10.0
NAME = "bench-overhead"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass(frozen=True)
class Deployed:
    wall_s: float
    waiting_s: float
    running_s: float


def run_inline(env: dict[str, str], store: Path) -> float:
    inline_env = {k: v for k, v in env.items() if k != "PREFECT_API_URL"}
    inline_env["PREFECT_PROFILES_PATH"] = str(store.parent / "no-profiles.toml")
    start = time.monotonic()
    done = subprocess.run(
        [str(BIN / "roadeval"), "demo", "--store", str(store)],
        env=inline_env,
        capture_output=True,
    )
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"inline demo failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return wall


def run_deployed(store: Path) -> Deployed:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import FlowRun
    from prefect.deployments import run_deployment

    start = time.monotonic()
    # Called from synchronous code: Prefect's sync/async dispatch returns the flow run itself.
    flow_run = cast(
        FlowRun,
        run_deployment(
            f"evaluate-panel/{NAME}-rerun",
            parameters={"store": str(store)},
            timeout=900,
            poll_interval=0.2,
        ),
    )
    wall = time.monotonic() - start
    if flow_run.state is None or not flow_run.state.is_completed():
        raise SystemExit(f"deployed run ended {flow_run.state}")
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(flow_run.id)
    assert run.start_time is not None and run.end_time is not None
    waiting = (run.start_time - run.created).total_seconds() if run.created else float("nan")
    return Deployed(wall, waiting, (run.end_time - run.start_time).total_seconds())


def serve(env: dict[str, str], workdir: Path, store: Path) -> subprocess.Popen[bytes]:
    out = (workdir / "serve.log").open("wb")
    command = ["deploy", "--panel", "bundled:demo", "--name", NAME, "--store", str(store)]
    process = subprocess.Popen(
        [str(BIN / "roadeval"), *command],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"roadeval deploy exited; see {workdir / 'serve.log'}")
        try:
            with get_client(sync_client=True) as client:
                found = client.read_deployment_by_name(f"evaluate-panel/{NAME}-rerun")
            if str(getattr(found.status, "value", found.status)) == "READY":
                return process
        except ObjectNotFound:
            pass
        time.sleep(0.5)
    stop(process)
    raise SystemExit("the served deployments did not become ready")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--poll", type=float, default=None, help="the runner's poll, seconds")
    parser.add_argument("--api-url", default=None, help="a running Prefect server's API")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="bench-deployed-"))
    (root / "prefect-home").mkdir()
    server: PrefectServer | None = None
    api_url = args.api_url
    if api_url is None:
        server = start_prefect_server(root / "prefect-home", _free_port(), timeout_s=240)
        api_url = server.api_url
    env = {
        **os.environ,
        "PREFECT_API_URL": api_url,
        "ROADEVAL_DEMO_DIR": str(root / "demo"),
        "ROADEVAL_MEDIA_CACHE": str(root / "media"),
        "ROADEVAL_PROGRESS": "0",
    }
    env.pop("ROADEVAL_STORE", None)
    if args.poll is not None:
        env["PREFECT_RUNNER_POLL_FREQUENCY"] = str(int(args.poll))
    os.environ.update(PREFECT_API_URL=api_url)
    serving = serve(env, root, root / "store-served")
    try:
        print(f"server {api_url}; runner poll {args.poll or 'default (10)'} s; warming up")
        run_inline(env, root / "warm-inline" / "store")
        run_deployed(root / "warm-deployed" / "store")
        inline: list[float] = []
        deployed: list[Deployed] = []
        for n in range(args.repeat):
            order = ("inline", "deployed") if n % 2 == 0 else ("deployed", "inline")
            for kind in order:
                store = root / f"{kind}-{n}" / "store"
                if kind == "inline":
                    inline.append(run_inline(env, store))
                    print(f"  inline   {inline[-1]:6.1f} s")
                else:
                    d = run_deployed(store)
                    deployed.append(d)
                    print(
                        f"  deployed {d.wall_s:6.1f} s (waiting {d.waiting_s:.1f} s, "
                        f"running {d.running_s:.1f} s)"
                    )
    finally:
        stop(serving)
        if server is not None:
            server.stop()
    wall_inline = statistics.median(inline)
    wall_deployed = statistics.median(d.wall_s for d in deployed)
    waiting = statistics.median(d.waiting_s for d in deployed)
    running = statistics.median(d.running_s for d in deployed)
    overhead = wall_deployed - wall_inline
    print(f"demo panel, medians of {args.repeat}:")
    print(f"  inline   {wall_inline:6.1f} s  (roadeval demo, launch to exit)")
    print(
        f"  deployed {wall_deployed:6.1f} s  (trigger to Completed: waiting {waiting:.1f} s, "
        f"running {running:.1f} s)"
    )
    verdict = "within" if overhead < TARGET_S else "OVER"
    print(f"  overhead {overhead:+6.1f} s  ({verdict} the {TARGET_S:.0f} s target)")


if __name__ == "__main__":
    main()
