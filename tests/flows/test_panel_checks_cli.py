"""What `roadeval run` refuses before any call (exit 2, the file and the field named, no
traceback, no request at the model server, nothing in the store): an endpoint that is not an
http(s) URL with a host and a port, a price without its pair (any model kind), an empty store
(`--store ''`, `ROADEVAL_STORE=''`, a panel's `store: ''`); and rows beyond the load limits. And a
dry run counts the same input tokens whatever the output bound."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from roadeval.benchmarks.registry import get_suite
from roadeval.flows.cli.main import app

from support.model_server import ModelServer, Reply
from support.trip_panel import query_csv

pytestmark = pytest.mark.usefixtures("inline")

runner = CliRunner()

LOCAL = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}
PRICES = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


def write(path: Path, body: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    return path


def trip_panel(path: Path, models: list[dict[str, Any]], **extra: Any) -> Path:
    body = {"name": "checks", "suites": [{"name": "trip", "demo": True}], "models": models}
    return write(path, {**body, **LOCAL, **extra})


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    # Rich wraps long lines; the message is compared with its line breaks undone.
    return result.exit_code, " ".join(result.output.split())


def assert_refused(code: int, message: str, *expected: str) -> None:
    assert code == 2, message
    assert "Traceback" not in message
    assert message.startswith("error: "), message
    for text in expected:
        assert text in message, message


# --- endpoints -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_base", "why"),
    [
        ("", "is empty: give the endpoint's http:// or https:// URL"),
        ("ftp://127.0.0.1/v1", "is not an http:// or https:// URL (its scheme is 'ftp')"),
        ("not a url", "holds spaces or control characters"),
        ("127.0.0.1:8000/v1", "is not an http:// or https:// URL"),
        ("http://127.0.0.1:99999/v1", "the port is not a number from 1 to 65535"),
        ("http://127.0.0.1:0/v1", "the port is not a number from 1 to 65535"),
        ("http://127.0.0.1:port/v1", "the port is not a number from 1 to 65535"),
        ("http:///v1", "names no host"),
    ],
)
def test_a_bad_api_base_is_refused_at_load(
    tmp_path: Path, server: ModelServer, api_base: str, why: str
) -> None:
    server.rules["m"] = lambda body, hit: Reply("A")
    panel = trip_panel(
        tmp_path / "panel.yaml", [{"model": "openai/m", "name": "m", "api_base": api_base}]
    )
    store = tmp_path / "store"
    code, message = run("run", "--panel", str(panel), "--store", str(store))
    assert_refused(code, message, f"{panel}: models[0] (m).api_base: ", why)
    assert server.hits == []
    assert not store.exists()


def test_the_judges_api_base_is_checked_too(tmp_path: Path, server: ModelServer) -> None:
    panel = write(
        tmp_path / "panel.yaml",
        {
            "suites": [{"name": "stride", "demo": True}],
            "models": [{"model": "openai/m", "api_base": server.api_base, **PRICES}],
            "judge": {"api_base": "ftp://127.0.0.1/v1"},
            **LOCAL,
        },
    )
    code, message = run("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert_refused(code, message, f"{panel}: judge.api_base: 'ftp://127.0.0.1/v1' is not an")
    assert server.hits == []


# --- prices come in pairs --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "prices", "given", "missing"),
    [
        ("openai/m", {"input_cost_per_token": 1e-6}, "input", "output"),
        ("openai/m", {"output_cost_per_token": 1e-6}, "output", "input"),
        ("roadeval/random", {"input_cost_per_token": 1e-6}, "input", "output"),
        (
            "openai/m",
            {**PRICES, "mode": "batch", "batch_input_cost_per_token": 1e-7},
            "batch_input",
            "batch_output",
        ),
    ],
)
def test_half_a_price_pair_is_refused_at_load_for_every_model_kind(
    tmp_path: Path,
    server: ModelServer,
    model: str,
    prices: dict[str, Any],
    given: str,
    missing: str,
) -> None:
    server.rules["m"] = lambda body, hit: Reply("A")
    spec = {"model": model, "name": "priced", "api_base": server.api_base, **prices}
    panel = trip_panel(tmp_path / "panel.yaml", [spec])
    store = tmp_path / "store"
    code, message = run("run", "--panel", str(panel), "--store", str(store))
    assert_refused(
        code,
        message,
        f"{panel}: models[0] (priced): {given}_cost_per_token is given but "
        f"{missing}_cost_per_token is not: prices come in pairs, give both or neither",
    )
    assert server.hits == []
    assert not store.exists()


def test_the_judges_prices_come_in_pairs_too(tmp_path: Path, server: ModelServer) -> None:
    panel = write(
        tmp_path / "panel.yaml",
        {
            "suites": [{"name": "stride", "demo": True}],
            "models": [{"model": "roadeval/random"}],
            "judge": {"api_base": server.api_base, "output_cost_per_token": 1e-6},
            **LOCAL,
        },
    )
    code, message = run("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert_refused(
        code, message, f"{panel}: judge: output_cost_per_token is given but input_cost_per_token"
    )
    assert server.hits == []


# --- empty stores ----------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The command's working directory, where the default store would be written."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def baseline_panel(tmp_path: Path, **extra: Any) -> Path:
    return trip_panel(tmp_path / "panel.yaml", [{"model": "roadeval/random"}], **extra)


@pytest.mark.parametrize("store", ["", "   ", "file://"])
def test_an_empty_store_flag_is_refused(tmp_path: Path, workdir: Path, store: str) -> None:
    code, message = run("run", "--panel", str(baseline_panel(tmp_path)), "--store", store)
    assert_refused(code, message, "store")
    assert "is empty" in message or "names no folder" in message, message
    assert list(workdir.iterdir()) == []


def test_an_empty_roadeval_store_is_refused(
    tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROADEVAL_STORE", "")
    code, message = run("run", "--panel", str(baseline_panel(tmp_path)))
    assert_refused(code, message, "ROADEVAL_STORE: the store is empty")
    assert list(workdir.iterdir()) == []


def test_an_empty_panel_store_is_refused(tmp_path: Path, workdir: Path) -> None:
    panel = baseline_panel(tmp_path, store="")
    code, message = run("run", "--panel", str(panel))
    assert_refused(code, message, f"{panel}: store: the store is empty")
    assert list(workdir.iterdir()) == []


def test_an_empty_source_is_refused(tmp_path: Path, workdir: Path) -> None:
    panel = write(
        tmp_path / "panel.yaml",
        {"suites": [{"name": "trip", "source": ""}], "models": [{"model": "roadeval/random"}]},
    )
    code, message = run("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert_refused(code, message, f"{panel}: suites[0] (trip).source: is empty")


def test_query_refuses_an_empty_store(workdir: Path) -> None:
    code, message = run("query", "--store", "", "select 1")
    assert_refused(code, message, "the store is empty")


# --- rows beyond the load limits, through the command ----------------------------------------


@pytest.fixture(scope="module")
def trip_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return get_suite("trip").generate_demo(tmp_path_factory.mktemp("trip") / "trip")


def limited_trip(tmp_path: Path, trip_source: Path, line: int, text: str) -> tuple[Path, Path]:
    source = Path(shutil.copytree(trip_source, tmp_path / "trip"))
    items = source / "items.jsonl"
    lines = items.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = text
    items.write_text("\n".join(lines) + "\n", encoding="utf-8")
    panel = write(
        tmp_path / "panel.yaml",
        {
            "suites": [{"name": "trip", "source": str(source)}],
            "models": [{"model": "roadeval/random"}],
            **LOCAL,
        },
    )
    return panel, items


def test_a_line_of_nested_brackets_is_exit_2_naming_file_and_line(
    tmp_path: Path, trip_source: Path
) -> None:
    panel, items = limited_trip(tmp_path, trip_source, 5, "[" * 100_000)
    store = tmp_path / "store"
    code, message = run("run", "--panel", str(panel), "--store", str(store))
    assert_refused(code, message, f"{items}, line 5: nested deeper than 64 levels")
    assert not (store / "tables").exists()


def test_a_20mb_question_is_exit_2_naming_the_field(tmp_path: Path, trip_source: Path) -> None:
    first = json.loads((trip_source / "items.jsonl").read_text(encoding="utf-8").splitlines()[0])
    row = {**first, "question": "q" * 20_000_000}
    panel, items = limited_trip(tmp_path, trip_source, 1, json.dumps(row))
    code, message = run("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert_refused(
        code,
        message,
        f"{items}, line 1, item {first['id']!r}, field 'question': text of 20,000,000 "
        "characters, over the limit of 1,000,000 (suite option max_text_chars)",
    )


# --- the dry run's input tokens --------------------------------------------------------------


def test_a_dry_run_counts_input_tokens_whatever_the_output_bound(
    tmp_path: Path, server: ModelServer
) -> None:
    """The same prompts are the same input tokens with `max_tokens: 16` and with no bound; only
    what depends on the bound (output tokens, the priced cost) reads unbounded."""
    rows = {}
    for label, params in (("bounded", {"max_tokens": 16}), ("unbounded", {})):
        # A model LiteLLM's map does not know: no max_output_tokens to fall back on.
        spec = {
            "model": "openai/roadeval-test-model",
            "api_base": server.api_base,
            "params": params,
            **PRICES,
        }
        panel = trip_panel(tmp_path / f"{label}.yaml", [spec])
        store = str(tmp_path / label)
        code, message = run("campaign", "--panel", str(panel), "--store", store, "--dry-run")
        assert code == 0, message
        lines = query_csv(
            store,
            "select tokens_in, tokens_in_worst, tokens_out_max, expected_usd is null "
            "from estimates",
        )
        rows[label] = lines[1].split(",")
    assert server.hits == []
    bounded, unbounded = rows["bounded"], rows["unbounded"]
    assert int(bounded[0]) > 0
    assert unbounded[:2] == bounded[:2]
    assert (bounded[2], bounded[3]) == (str(43 * 16), "False")
    assert (unbounded[2], unbounded[3]) == ("", "True")
