"""Keys stay secret: sent only to the endpoint their panel entry names, redacted from every echo
before it is stored, logged or printed, and checked before any call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.cli_process import run_cli
from support.model_server import ModelServer, Reply
from support.prefect_server import PrefectServer
from support.trip_panel import gold_rule, invoke, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("under_prefect")

SECRET = "sk-test-4f9c2e7a1b8d6e3f0a5c"
ENV_SECRET = "sk-env-never-to-leave-this-host-81a2"


def test_no_environment_key_goes_to_an_api_base_that_asked_for_none(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    source, gold = trip_gold(tmp_path)
    server.rules["local"] = gold_rule(gold)
    panel = write_panel(
        tmp_path / "p.yaml", source, [{"model": "openai/local", "api_base": server.api_base}]
    )
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"))
    assert result.exit_code == 0, result.output
    sent = {hit["_headers"].get("authorization") for hit in server.hits_for("local")}
    assert sent == {"Bearer no-key"}


def test_an_unset_api_key_env_is_an_error_before_any_call(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROADEVAL_TEST_UNSET_KEY", raising=False)
    source, gold = trip_gold(tmp_path)
    server.rules["keyed"] = gold_rule(gold)
    model = {
        "model": "openai/keyed",
        "name": "keyed",
        "api_base": server.api_base,
        "api_key_env": "ROADEVAL_TEST_UNSET_KEY",
    }
    store = tmp_path / "store"
    panel = write_panel(tmp_path / "p.yaml", source, [model])
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "model keyed" in message and "ROADEVAL_TEST_UNSET_KEY" in message
    assert "Traceback" not in result.output
    assert server.hits_for("keyed") == [] and not store.exists()


def _echo_rules(server: ModelServer, gold: dict[Any, str]) -> None:
    answer = gold_rule(gold)

    def auth_echo(body: dict[str, Any], hit: int) -> Reply:
        return Reply(
            status=401, text=f"Incorrect API key provided: {body['_headers']['authorization']}"
        )

    def error_echo(body: dict[str, Any], hit: int) -> Reply:
        key = body["_headers"]["authorization"].removeprefix("Bearer ")
        return Reply(status=500, text=f"upstream failed for key={key}; retry later")

    def answer_echo(body: dict[str, Any], hit: int) -> Reply:
        key = body["_headers"]["authorization"].removeprefix("Bearer ")
        return Reply(f"{answer(body, hit).text} (served to {key})")

    server.rules.update(auth=auth_echo, errors=error_echo, chatty=answer_echo)


def test_a_key_echoed_by_the_provider_is_nowhere_afterwards(
    tmp_path: Path, server: ModelServer, prefect_server: PrefectServer
) -> None:
    source, gold = trip_gold(tmp_path)
    _echo_rules(server, gold)
    models = [
        {
            "model": f"openai/{name}",
            "api_base": server.api_base,
            "api_key_env": "ROADEVAL_TEST_KEY",
            "num_retries": 1,
            "retry_backoff_s": 0.01,
        }
        for name in ("auth", "errors", "chatty")
    ]
    panel = write_panel(tmp_path / "p.yaml", source, models)
    store, home = tmp_path / "store", tmp_path / "prefect-home"
    env = {"ROADEVAL_TEST_KEY": SECRET, "PREFECT_HOME": str(home), "PREFECT_LOGGING_LEVEL": "DEBUG"}
    cli = run_cli(["run", "--panel", str(panel), "--store", str(store)], tmp_path / "cli", env)
    assert cli.process.returncode == 1, cli.stderr  # the auth and error models failed
    # The key did reach the servers (so the echoes are real), and the echoes were recorded...
    assert all(SECRET in h["_headers"]["authorization"] for h in server.hits_for("auth"))
    [manifest] = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    first_errors = " ".join(c["first_error"] or "" for c in manifest["counts"])
    assert "[redacted:ROADEVAL_TEST_KEY]" in first_errors
    # ...but not the key: not in the store, not in Prefect's home or database, not printed.
    places = [store, home, prefect_server.home, tmp_path / "cli"]
    leaks = [
        str(path)
        for place in places
        for path in place.rglob("*")
        if path.is_file() and SECRET.encode() in path.read_bytes()
    ]
    assert leaks == []
    assert SECRET not in cli.stdout + cli.stderr
