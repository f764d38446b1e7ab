"""The `roadeval` command started as a user starts it: its own process, signals and all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from support.orchestrators import check_cli_run

ROADEVAL = Path(sys.executable).parent / "roadeval"


@dataclass
class CliProcess:
    process: subprocess.Popen[bytes]
    out_path: Path
    err_path: Path

    @property
    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def signal_group(self, signum: int) -> None:
        """As a terminal's Ctrl-C does: the whole process group gets the signal."""
        os.killpg(self.process.pid, signum)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def wait(self, timeout: float = 120.0) -> int:
        return self.process.wait(timeout=timeout)


def start_cli(
    args: Sequence[str],
    workdir: Path,
    env: dict[str, str] | None = None,
    wrap: Sequence[str] = (),
) -> CliProcess:
    """Start `roadeval ARGS` (optionally under `wrap`, e.g. unshare) in a new process group; a
    run on the orchestrator its test named (support.orchestrators)."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    check_cli_run(args, full_env)
    workdir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    process = subprocess.Popen(
        [*wrap, str(ROADEVAL), *args],
        stdout=out_path.open("wb"),
        stderr=err_path.open("wb"),
        env=full_env,
        start_new_session=True,
    )
    return CliProcess(process, out_path, err_path)


def run_cli(args: Sequence[str], workdir: Path, env: dict[str, str] | None = None) -> CliProcess:
    cli = start_cli(args, workdir, env)
    cli.wait()
    return cli


def wait_until(condition: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or condition}")
