"""Every number a panel sets (and every flag that overrides one) is held to a range a run can
really use, at load: past it the command exits 2 with one line naming the file, the field and
why, before anything is planned or landed. And a dry run of the largest values a panel may hold
prints its estimate in seconds, in bounded memory."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from roadeval.flows.cli.main import app

from support.cli_process import start_cli

pytestmark = pytest.mark.usefixtures("inline")

runner = CliRunner()
LOCAL = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}
RANDOM = {"model": "roadeval/random", "name": "random"}


def write_panel(path: Path, model: dict[str, Any] | None = None, **extra: Any) -> Path:
    body = {
        "name": "bounds",
        "suites": [{"name": "trip", "demo": True}],
        "models": [{**RANDOM, **(model or {})}],
        **LOCAL,
        **extra,
    }
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    return path


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    # Rich wraps long lines; the message is compared with its line breaks undone.
    return result.exit_code, " ".join(result.output.split())


def test_a_billion_samples_is_refused_at_once_naming_file_field_and_why(tmp_path: Path) -> None:
    """As the issue found it, through the real command: `samples: 1000000000` made even a dry
    run grow by ~80 MB/s, printing nothing, until killed."""
    panel = write_panel(tmp_path / "panel.yaml", {"samples": 1_000_000_000})
    store = tmp_path / "store"
    started = time.monotonic()
    cli = start_cli(
        ["campaign", "--panel", str(panel), "--dry-run", "--store", str(store)], tmp_path / "cli"
    )
    try:
        # Refused in seconds; before, it grew by ~80 MB/s until killed: not waited for long.
        code = cli.wait(timeout=20)
    except Exception:
        cli.kill()
        raise
    message = " ".join(cli.stderr.split())
    assert code == 2, cli.stderr
    assert message == (
        f"error: {panel}: models[0] (random).samples: 1,000,000,000 is more than 100, the most "
        "it may be: independent answers per item, each one every item's request again: 100 "
        "already put an item's accuracy within +-0.1"
    )
    assert time.monotonic() - started < 20
    assert not store.exists()


@pytest.mark.parametrize(
    ("model", "extra", "field", "why"),
    [
        ({}, {"chunk_size": 0}, "chunk_size: 0 is less than 1", "items per shard"),
        ({}, {"chunk_size": 10**9}, "chunk_size: 1,000,000,000 is more than 1,000,000", "shard"),
        ({}, {"processes": 100_000}, "processes: 100,000 is more than 256", "outnumber its cores"),
        ({}, {"budget_usd": float("inf")}, "budget_usd: inf is not a number in range", "a cap"),
        (
            {},
            {"budget_usd": 1e12},
            "budget_usd: 1,000,000,000,000 is more than 1,000,000",
            "caps nothing",
        ),
        (
            {"max_concurrency": 10**9},
            {},
            "(random).max_concurrency: 1,000,000,000 is more",
            "socket",
        ),
        ({"rpm": 1e-300}, {}, "(random).rpm: 1e-300 is less than 0.001", "16 hours apart"),
        ({"rpm": 10**7}, {}, "(random).rpm: 10,000,000 is more than 100,000", "limiter keeps"),
        (
            {"tpm": 1e15},
            {},
            "(random).tpm: 1,000,000,000,000,000 is more than 1,000,000,000",
            "any provider's tier",
        ),
        ({"timeout_s": 1e9}, {}, "(random).timeout_s: 1,000,000,000 is more than 86,400", "a hang"),
        ({"timeout_s": 0}, {}, "(random).timeout_s: 0 is not more than 0", "seconds one request"),
        ({"num_retries": 10**6}, {}, "(random).num_retries: 1,000,000 is more than 100", "billed"),
        ({"auth_failed_after": 10**6}, {}, "(random).auth_failed_after: 1,000,000 is more", "key"),
        (
            {"retry_backoff_s": 1e6},
            {},
            "(random).retry_backoff_s: 1,000,000 is more than 60",
            "60 s",
        ),
        ({"unreachable_after_s": float("nan")}, {}, "unreachable_after_s: nan is not", "a day"),
        (
            {"input_cost_per_token": 2.5, "output_cost_per_token": 10.0},
            {},
            "(random).input_cost_per_token: 2.5 is more than 0.01",
            "a price per million tokens given per token?",
        ),
        ({"batch_size": 10**6}, {}, "(random).batch_size: 1,000,000 is more than 50,000", "batch"),
        ({"batch_poll_s": 1e-9}, {}, "(random).batch_poll_s: 1e-09 is less than 0.01", "polls"),
        (
            {"params": {"max_tokens": 10**12}},
            {},
            "(random): params.max_tokens: 1,000,000,000,000",
            "reply",
        ),
        (
            {"params": {"max_tokens": "many"}},
            {},
            "(random): params.max_tokens: a whole number",
            "'many'",
        ),
        (
            {},
            {"intervals": {"resamples": 10**9}},
            "intervals.resamples: 1,000,000,000 is more",
            "draws",
        ),
        (
            {},
            {"intervals": {"seed": 2**70}},
            "intervals.seed: 1,180,591,620,717,411,303,424 is more than 9,223,372,036,854,775,807",
            "64-bit",
        ),
        (
            {},
            {"scoring": {"engine": "local", "batch_size": 0}},
            "scoring.batch_size: 0 is less",
            "Ray task",
        ),
        (
            {},
            {"scoring": {"engine": "local", "num_cpus": 10**5}},
            "scoring.num_cpus: 100,000 is",
            "cores",
        ),
        (
            {},
            {"render": {"engine": "local", "n_workers": 10**5}},
            "render.n_workers: 100,000 is",
            "cores",
        ),
        (
            {"reuse_for": "0s"},
            {},
            "(random).reuse_for: 0s (0 is less than 1, the least it may be",
            "for none, write 'never'",
        ),
        (
            {},
            {"reuse_for": "4000d"},
            "reuse_for: 4000d (345,600,000 is more than 315,360,000, the most it may be",
            "longer is 'forever'",
        ),
        (
            {"reuse_for": "7 days"},
            {},
            "(random).reuse_for: '7 days' is not a duration",
            "a whole number and a unit (s, m, h, d or w: 12h, 7d, 30d), 'forever' or 'never'",
        ),
        ({}, {"reuse_for": 7}, "reuse_for: 7 is not a duration", "'forever' or 'never'"),
        (
            {},
            {"suites": [{"name": "trip", "demo": True, "options": {"max_row_bytes": 2**40}}]},
            "suites[0] (trip).options: max_row_bytes: must be a positive integer up to",
            "1099511627776",
        ),
    ],
)
def test_a_number_out_of_its_range_is_exit_2_naming_file_and_field(
    tmp_path: Path, model: dict[str, Any], extra: dict[str, Any], field: str, why: str
) -> None:
    panel = write_panel(tmp_path / "panel.yaml", model, **extra)
    store = tmp_path / "store"
    code, message = run("campaign", "--panel", str(panel), "--dry-run", "--store", str(store))
    assert code == 2, message
    assert message.startswith(f"error: {panel}: "), message
    assert field in message and why in message, message
    assert "Traceback" not in message
    assert not store.exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--processes", "100000"], "--processes: 100,000 is more than 256, the most it may be"),
        (["--processes", "-1"], "--processes: -1 is less than 0, the least it may be"),
        (["--budget-usd", "inf"], "--budget-usd: inf is not a number in range (over 0 to"),
        (["--budget-usd", "nan"], "--budget-usd: nan is not a number in range"),
        (["--budget-usd", "1e12"], "--budget-usd: 1,000,000,000,000 is more than 1,000,000"),
    ],
)
def test_a_flag_is_held_to_the_range_of_the_key_it_overrides(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    panel = write_panel(tmp_path / "panel.yaml")
    store = tmp_path / "store"
    # A dry run: before, `--processes 100000` on a run forked answer workers by the thousand.
    code, message = run(
        "campaign", "--panel", str(panel), "--dry-run", "--store", str(store), *args
    )
    assert code == 2, message
    assert message.startswith(f"error: {expected}"), message
    assert not store.exists()


def test_deploy_holds_its_budget_to_the_same_range_before_asking_the_server(
    tmp_path: Path,
) -> None:
    panel = write_panel(tmp_path / "panel.yaml")
    code, message = run("deploy", "--panel", str(panel), "--budget-usd", "inf")
    assert code == 2, message
    assert message.startswith("error: --budget-usd: inf is not a number in range"), message


def test_a_dry_run_of_the_largest_values_prints_its_estimate_in_seconds(tmp_path: Path) -> None:
    """The most samples, the smallest chunks: 43 items x 100 samples = 4,300 requests in 43
    shards (each counting its item's samples), planned, estimated and landed in seconds and in
    a few hundred MB, as the user's command runs it."""
    panel = write_panel(tmp_path / "panel.yaml", {"samples": 100}, chunk_size=1)
    store = tmp_path / "store"
    started = time.monotonic()
    cli = start_cli(
        ["campaign", "--panel", str(panel), "--dry-run", "--store", str(store)], tmp_path / "cli"
    )
    _, status, usage = os.wait4(cli.process.pid, 0)
    cli.process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - started
    assert cli.process.returncode == 0, cli.stderr
    output = " ".join(cli.stdout.split())
    assert "total │ │ │ 4,300 / 4,300" in output, output
    assert "no model was called" in output
    assert elapsed < 60, elapsed
    # ru_maxrss is in KiB on Linux: the command's own peak.
    assert usage.ru_maxrss < 1024 * 1024, usage.ru_maxrss
