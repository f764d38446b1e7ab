"""S3 requests in proportion to the work, counted at the server (moto's access log, one line
per HTTP request) through the real command: a run whose every outcome is copied from its
baseline makes fewer requests than the run that made them (it read its baseline through the
part index, not by listing every suite x model's folders, and lands each copied shard's plan
with its rows)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from support.cli_process import run_cli
from support.clusters import free_port
from support.trip_panel import query_csv

pytestmark = [pytest.mark.s3, pytest.mark.usefixtures("inline")]

ACCESS = re.compile(r'"([A-Z]+) \S+ HTTP/[\d.]+" (\d{3})')
BUCKET = "requests"


class LoggedMoto:
    """moto_server on 127.0.0.1 whose access log (its stderr) is kept in a file."""

    def __init__(self, log: Path) -> None:
        executable = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
        if not Path(executable).exists():
            pytest.skip("moto_server is not installed (pip install -e '.[dev]')")
        port = free_port()
        self.log = log
        self.process = subprocess.Popen(
            [executable, "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=log.open("wb"),
        )
        self.endpoint = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self.process.kill()
        pytest.fail("moto_server did not start")

    def requests(self) -> list[str]:
        """Requests served so far, each as its method and status ('PUT 412')."""
        return [" ".join(m) for m in ACCESS.findall(self.log.read_text(errors="replace"))]


@pytest.fixture
def moto(tmp_path: Path) -> Iterator[LoggedMoto]:
    server = LoggedMoto(tmp_path / "moto.log")
    env = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
    boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1", **env).create_bucket(
        Bucket=BUCKET
    )
    yield server
    server.process.terminate()
    server.process.wait(timeout=10)


# The demo, as the issue measures it: its five suites are the smallest panel whose work outweighs
# a run's fixed requests (probes, reports, the run's records); on one suite and one model the two
# runs differed by 0-2 requests, as the first run's cache packs happened to fall. Fewer for the
# all-reused run since: the sweep lists `tables/` once, not per table; the threads of one process
# take index numbers in turn (no 412s); a process lists the index once per load after its first,
# and lands after a load without listing it again (demo: 243 -> 178, first run 231 -> 210). On
# failure the message has each run's requests by method and status.
@pytest.mark.xfail(
    strict=False,
    reason="issue 42 item 7, open: the all-reused demo makes ~177 requests every time, the first "
    "run 177-210 (its PUTs vary with how its cache packs and heartbeats fall), so fewer is not yet "
    "guaranteed",
)
def test_a_run_whose_every_answer_is_reused_makes_fewer_s3_requests_than_the_first(
    tmp_path: Path, moto: LoggedMoto
) -> None:
    store = f"s3://{BUCKET}/store"
    env = {
        "AWS_ENDPOINT_URL": moto.endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    made: list[int] = []
    kinds: list[Counter[str]] = []
    for n in (1, 2):
        before = len(moto.requests())
        cli = run_cli(["demo", "--store", store], tmp_path / f"run{n}", env)
        assert cli.process.returncode == 0, cli.stdout + cli.stderr
        time.sleep(0.3)  # the access log's last lines
        kinds.append(Counter(moto.requests()[before:]))
        made.append(kinds[-1].total())
    assert "0 model calls" in cli.stdout or "no model call" in cli.stdout, cli.stdout
    first, second = made
    assert second < first, kinds
    # The copied shards' plans landed with their rows: the second run's plan has every item.
    counts = query_csv_s3(store, env, "select run_id, count(*) from plan group by 1 order by 1")
    assert len(counts) == 3 and counts[1].split(",")[1] == counts[2].split(",")[1], counts


def query_csv_s3(store: str, env: dict[str, str], sql: str) -> list[str]:
    """`roadeval query --format csv` against the test's own S3 endpoint."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        return query_csv(store, sql)
