"""A real Prefect server on 127.0.0.1 for the test session, in a PREFECT_HOME of its own.

In-process flows reach it through Prefect's settings; subprocesses (the CLI started as a user
would start it) through PREFECT_API_URL. Its home holds the database where Prefect keeps every
state message and log line, which the secrets test scans.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

# Background services the tests never need, each a loop that queries the database every few
# seconds for the whole session (together about 40% of the idle server's CPU). Kept: the
# scheduler (deployments' next runs), the task-run recorder (task runs) and the event persister
# (events, which the secrets test scans).
_IDLE_SERVICES = (
    "LATE_RUNS",
    "PAUSE_EXPIRATIONS",
    "REPOSSESSOR",
    "FOREMAN",
    "CANCELLATION_CLEANUP",
    "CLEANUP_RECONCILER",
    "TRIGGERS",
)


@dataclass(frozen=True)
class PrefectServer:
    api_url: str
    home: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_prefect_server(home: Path, port: int, timeout_s: float = 180.0) -> PrefectServer:
    executable = Path(sys.executable).parent / "prefect"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_UI_ENABLED": "false",
        **{f"PREFECT_SERVER_SERVICES_{name}_ENABLED": "false" for name in _IDLE_SERVICES},
    }
    env.pop("PREFECT_API_URL", None)
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [str(executable), "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-ui"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    api_url = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"prefect server exited; see {home / 'server.log'}")
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as reply:
                if reply.status == 200:
                    return PrefectServer(api_url, home, process)
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"prefect server did not become healthy in {timeout_s:.0f} s")
