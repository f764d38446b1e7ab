"""Fuzzing the panel file: a small valid panel, mutated by a seeded generator (values replaced by
wrong types, huge, negative and non-finite numbers, names with control characters, odd store URIs,
nesting past any bound; the YAML text itself cut, flipped, nested, aliased and tagged), must be
read or refused with a PanelError naming the file, in well under 10 s: never another exception,
never a hang. What is read holds only what a run can use (finite numbers, names without control
characters), and a dry run of it prints its estimate or one error line; through the real command
a refused panel exits 2 with one line, no traceback, and no run in the store."""

from __future__ import annotations

import copy
import math
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from roadeval.flows.cli.main import app
from roadeval.flows.panel.file import Panel, PanelError, load_panel
from roadeval.names import refused_character

from support.cli_process import start_cli
from support.fuzzing import Fuzzer

pytestmark = pytest.mark.usefixtures("inline")

CASES = 300
# A load, or a dry run, that takes longer is a hang.
HANG_S = 10.0

BASE: dict[str, Any] = {
    "name": "fuzz",
    "chunk_size": 20,
    "budget_usd": 5.0,
    "suites": [{"name": "trip", "demo": True, "options": {"max_depth": 32}}],
    "models": [
        {
            "model": "roadeval/random",
            "name": "random",
            "params": {"seed": 1, "max_tokens": 8},
            "samples": 2,
            "max_concurrency": 4,
            "rpm": 600,
            "tpm": 100_000,
            "timeout_s": 30,
            "num_retries": 2,
            "retry_backoff_s": 0.5,
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
        }
    ],
    "scoring": {"engine": "local", "batch_size": 16, "num_cpus": 1},
    "render": {"engine": "local", "n_workers": 1, "local_below": 16},
    "intervals": {"resamples": 200, "seed": 3},
}

# What a careless or hostile panel puts where the fuzzer replaces a value.
PANEL_VALUES: tuple[Any, ...] = (
    10**9,
    10**30,
    2**63,
    -(10**12),
    1e-300,
    1e300,
    float("inf"),
    float("-inf"),
    float("nan"),
    "9" * 400,
    "0 0 3 * * 1",
    "",
    "   ",
    "a\x1b[2Jb",
    "line\nbreak",
    "cr\rhere",
    "nul\x00",
    "rtl\u202eevil",
    "\x85next",
    "模型-随机-\U0001f600",
    "s3://bkt/a/../b",
    "s3://bkt/./a",
    "s3://bkt/a//c",
    "s3://bkt/a?versionId=1",
    "s3://bkt/a#frag",
    "s3://Bad_Bucket/x",
    "s3://192.168.0.1/x",
    "s3://",
    "gs://bkt/x",
    "file://",
    "roadeval/random",
    "openai/x",
    [],
    {},
    [{"name": "trip", "demo": True}],
    {"engine": "ray", "address": "ray://"},
)


class PanelFuzzer(Fuzzer):
    """The suites' fuzzer, with a panel's own hostile values half the time."""

    def value(self, depth: int = 0) -> Any:
        if self.rng.random() < 0.5:
            return copy.deepcopy(self.rng.choice(PANEL_VALUES))
        return super().value(depth)

    def panel_text(self) -> bytes:
        """A mutated panel's YAML: most mutated as data, some broken as text."""
        panel = self.row(copy.deepcopy(BASE))
        try:
            text = yaml.safe_dump(panel, allow_unicode=self.rng.random() < 0.5).encode()
        except (yaml.YAMLError, RecursionError, UnicodeEncodeError):
            text = yaml.safe_dump(BASE).encode()
        roll = self.rng.random()
        if roll < 0.7:
            return text
        if roll < 0.75:
            return text[: self.rng.randrange(len(text) + 1)]
        if roll < 0.8:
            at = self.rng.randrange(len(text))
            junk = self.rng.choice((b"\xff", b"\x00", b"\t", b"{", b": ", b"&a ", b"*a ", b"- "))
            return text[:at] + junk + text[at:]
        if roll < 0.84:
            return b"name: " + b"[" * self.rng.choice((65, 1000, 100_000)) + b"\n" + text
        if roll < 0.88:
            return text + b"chunk_size: " + b"9" * self.rng.choice((20, 5000)) + b"\n"
        if roll < 0.92:
            return _alias_bomb(self.rng.choice(("params", "options", "tasks"))) + text
        if roll < 0.95:
            tag = self.rng.choice(("!!python/object/apply:os.system ['true']", "!!binary ~~", "!x"))
            return text.replace(b"name: fuzz", f"name: {tag}".encode(), 1)
        if roll < 0.98:
            return b"a: &a [*a]\n" + text
        return b"x" * (2**20 + 1)


def _alias_bomb(key: str) -> bytes:
    """Nine levels of nine aliases each (9^9 values once expanded) under a panel key."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 10):
        refs = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{refs}]")
    body = "\n".join(lines)
    return f"{body}\nmodels: [{{model: roadeval/random, {key}: *l9}}]\n".encode()


def _numbers(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [n for child in value.values() for n in _numbers(child)]
    if isinstance(value, list):
        return [n for child in value for n in _numbers(child)]
    if isinstance(value, float):
        return [value]
    return []


def _names(panel: Panel) -> list[str]:
    models = [*panel.models, *([panel.judge] if panel.judge is not None else [])]
    return [
        panel.name,
        *(entry.name for entry in panel.suites),
        *(m.model for m in models),
        *(m.name for m in models if m.name is not None),
    ]


def load_or_refuse(path: Path, pool: ThreadPoolExecutor) -> Panel | None:
    """The panel read from `path`, or None when refused with a PanelError naming the file;
    anything else, or a load past HANG_S, fails the test."""
    started = time.monotonic()
    future = pool.submit(load_panel, path)
    try:
        panel = future.result(timeout=HANG_S)
    except PanelError as exc:
        assert str(exc).startswith(f"{path}: "), str(exc)
        assert refused_character(str(exc)) is None, repr(str(exc))
        return None
    except TimeoutError:
        pytest.fail(f"reading {path} took more than {HANG_S} s", pytrace=False)
    except Exception:
        pytest.fail(f"{path} raised outside PanelError:\n{traceback.format_exc()}", pytrace=False)
    assert time.monotonic() - started < HANG_S
    return panel


def check_accepted(panel: Panel) -> None:
    """A panel that was read holds only what a run can use."""
    dumped = panel.model_dump(mode="json")
    assert all(math.isfinite(n) for n in _numbers(dumped)), dumped
    for name in _names(panel):
        assert name.strip() and refused_character(name) is None, repr(name)
    for spec in panel.models:
        assert 1 <= spec.samples <= 100 and 1 <= spec.max_concurrency <= 10_000
    assert 1 <= panel.chunk_size <= 1_000_000


def test_mutated_panels_are_read_or_refused_with_the_file_named(tmp_path: Path) -> None:
    outcomes: dict[str, int] = {"read": 0, "refused": 0}
    # A load that hangs is left behind (its thread cannot be stopped), not waited for.
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        for case in range(CASES):
            path = tmp_path / f"panel-{case}.yaml"
            path.write_bytes(PanelFuzzer(seed=case).panel_text())
            panel = load_or_refuse(path, pool)
            if panel is None:
                outcomes["refused"] += 1
                continue
            outcomes["read"] += 1
            check_accepted(panel)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    # The mutations reach both ends: most panels refused, some still read.
    assert outcomes["refused"] > CASES / 2 and outcomes["read"] > 10, outcomes


def _cases(tmp_path: Path, wanted: int, read: bool) -> list[Path]:
    """The first `wanted` mutated panels that are read (or refused), in seed order."""
    found = []
    for case in range(CASES):
        path = tmp_path / f"pick-{case}.yaml"
        path.write_bytes(PanelFuzzer(seed=case).panel_text())
        try:
            load_panel(path)
            accepted = True
        except PanelError:
            accepted = False
        if accepted == read:
            found.append(path)
            if len(found) == wanted:
                return found
    raise AssertionError(f"fewer than {wanted} mutated panels were {'read' if read else 'refused'}")


def test_a_dry_run_of_a_mutated_panel_that_is_read_prints_its_estimate_or_one_error(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    for number, path in enumerate(_cases(tmp_path, 3, read=True)):
        store = tmp_path / f"store-{number}"
        started = time.monotonic()
        result = runner.invoke(
            app, ["campaign", "--panel", str(path), "--dry-run", "--store", str(store)]
        )
        assert time.monotonic() - started < HANG_S, path.read_text()
        assert "Traceback" not in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        if result.exit_code == 0:
            assert "dry run: estimated cost" in result.output
            assert "no model was called" in " ".join(result.output.split())
        else:
            assert result.exit_code == 2, result.output
            assert result.output.startswith("error: "), result.output


def test_refused_mutated_panels_through_the_command(tmp_path: Path) -> None:
    """As a user meets them: each exits 2 with one line naming the file, no traceback, and no
    run recorded in the store; all at once, each within HANG_S of its start."""
    started = []
    for number, path in enumerate(_cases(tmp_path, 5, read=False)):
        store = tmp_path / f"store-{number}"
        args = ["campaign", "--panel", str(path), "--dry-run", "--store", str(store)]
        started.append((path, store, start_cli(args, tmp_path / f"cli-{number}")))
    for path, store, cli in started:
        code = cli.wait(timeout=HANG_S + 20)  # the command's own start (imports) included
        lines = cli.stderr.strip().splitlines()
        assert code == 2, cli.stderr
        assert "Traceback" not in cli.stderr and lines[0].startswith(f"error: {path}"), lines
        assert not store.exists()
