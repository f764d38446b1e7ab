"""A model whose key is refused (a revoked key) is declared auth_failed after three refusals:
the rest of the run's calls to it are skipped, not sent; the report names the key's variable,
and the key itself, echoed back by the provider, is nowhere in the store or the output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv, trip_gold, write_panel

pytestmark = pytest.mark.usefixtures("inline")

KEY_ENV = "ROADEVAL_TEST_REVOKED_KEY"
SECRET = "sk-revoked-7e1a9c3b5d2f4e6a8c0b"


def test_a_revoked_key_is_sent_three_times_then_skipped_and_named(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    source, gold = trip_gold(tmp_path)
    assert len(gold) > 3

    def revoked(body: dict[str, Any], hit: int) -> Reply:
        key = body["_headers"]["authorization"]
        return Reply(status=401, text=f"Incorrect API key provided: {key}. Revoked.")

    server.rules["revoked"] = revoked
    model = {
        "model": "openai/revoked",
        "name": "revoked",
        "api_base": server.api_base,
        "api_key_env": KEY_ENV,
        "max_concurrency": 1,
        "num_retries": 3,
        "retry_backoff_s": 0.01,
    }
    panel = write_panel(tmp_path / "p.yaml", source, [model], scoring={"engine": "local"})
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store))
    assert result.exit_code == 1, result.output
    # Three requests reached the server (the key did reach it), none of them retried.
    hits = server.hits_for("revoked")
    assert len(hits) == 3 and all(SECRET in h["_headers"]["authorization"] for h in hits)
    rows = query_csv(
        str(store),
        "select error_kind, try_number, count(*) from responses "
        "where model = 'revoked' group by all order by error_kind",
    )
    assert rows[1:] == ["auth,1,3", f"auth_failed,0,{len(gold) - 3}"]
    # The cost table counts the requests sent, not the calls skipped (its own rows: the
    # answers-reused table above it names the model and role too).
    lines = result.output.splitlines()
    cost = lines[next(at for at, row in enumerate(lines) if row.startswith("cost per model")) :]
    [line] = [row for row in cost if "revoked" in row and "answer" in row]
    assert [cell.strip() for cell in line.split("│") if cell.strip()][:4] == [
        "revoked",
        "trip",
        "answer",
        "3",
    ]
    # The report names the model's key variable, and says what happened to the rest.
    output = " ".join(result.output.split())
    assert f"key from api_key_env {KEY_ENV}" in output
    assert f"auth_failed: {len(gold) - 3}" in output
    # The echoed key is in no record (read back through the store) and in no file of it...
    messages = query_csv(str(store), "select error_message from responses")
    assert any(f"[redacted:{KEY_ENV}]" in m for m in messages)
    assert not any(SECRET in m for m in messages)
    leaks = [
        str(path)
        for path in store.rglob("*")
        if path.is_file() and SECRET.encode() in path.read_bytes()
    ]
    assert leaks == []
    # ...nor in what the run printed.
    assert SECRET not in result.output
