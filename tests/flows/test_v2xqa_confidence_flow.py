"""V2X-QA's confidence through the real path: every request asks the top 20 log-probabilities
(the panel's `top_logprobs` option lowers it, and a lowered request is a new request), the
server returns as many as asked, and the confidence, the letters seen and the position read
land per item in the scores, with the items whose confidence rests on fewer than four letters
counted per model in the metrics."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from roadeval.benchmarks.registry import get_suite

from support.model_server import ModelServer, Reply
from support.trip_panel import invoke, query_csv, seen_by_model

pytestmark = pytest.mark.usefixtures("inline")

LETTERS = "ABCD"
FILLERS = [(f" word{i}", -9.0 - i) for i in range(13)]


def _gold(tmp_path: Path) -> tuple[Path, dict[Any, str]]:
    suite = get_suite("v2xqa")
    source = suite.generate_demo(tmp_path / "v2x-src")
    items = suite.load(source).items
    return source, {seen_by_model(suite.messages(item)): str(item.reference) for item in items}


def _spellings(letter: str) -> list[tuple[str, float]]:
    """The first position's 20 alternatives: four spellings first (" X" and "x" spell X; "X."
    does not), the other letters below them, then words."""
    others = [x for x in LETTERS if x != letter]
    return [
        (letter, math.log(0.90)),
        (f" {letter}", math.log(0.04)),
        (letter.lower(), math.log(0.02)),
        (f"{letter}.", math.log(0.01)),
        *zip(others, (math.log(p) for p in (0.008, 0.006, 0.004)), strict=True),
        *FILLERS,
    ]


def _panel(tmp_path: Path, source: Path, server: ModelServer, **options: Any) -> Path:
    suite: dict[str, Any] = {"name": "v2xqa", "source": str(source)}
    if options:
        suite["options"] = options
    path = tmp_path / "panel.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "v2x-confidence",
                "suites": [suite],
                "models": [
                    {"model": f"openai/{name}", "name": name, "api_base": server.api_base}
                    for name in ("spell", "paren")
                ],
                "scoring": {"engine": "local"},
                "render": {"engine": "local"},
            }
        )
    )
    return path


def _latest_manifest(store: Path) -> dict[str, Any]:
    manifests = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    return max(manifests, key=lambda m: m["started_at"])


def _overall(store: str, run_id: str) -> dict[tuple[str, str], tuple[str, str]]:
    rows = query_csv(
        store,
        "select model, metric, round(value, 6), n from metrics where task = '*' and slice = '' "
        f"and run_id = '{run_id}' and metric in ('confidence_items', 'letters_seen_lt4', 'ece')",
    )
    return {(m, metric): (value, n) for m, metric, value, n in (r.split(",") for r in rows[1:])}


def _details(store: str, run_id: str) -> list[str]:
    return query_csv(
        store,
        "select model, json_extract(details_json, '$.letters_seen')::int, "
        "json_extract(details_json, '$.position')::int, "
        "round(json_extract(details_json, '$.confidence')::double, 4), count(*) from scores "
        f"where metric = 'correct' and run_id = '{run_id}' group by all order by all",
    )[1:]


def test_top_20_by_default_and_lowered_by_the_panel_with_letters_seen_counted(
    tmp_path: Path, server: ModelServer
) -> None:
    source, gold = _gold(tmp_path)
    n = len(gold)

    def spell(body: dict[str, Any], hit: int) -> Reply:
        # Spellings of the gold letter crowd the top 4: the other letters come after them.
        letter = gold[seen_by_model(body["messages"])]
        return Reply(letter, logprobs=[(letter, math.log(0.90), _spellings(letter))])

    def paren(body: dict[str, Any], hit: int) -> Reply:
        # "(X)": the letter is chosen at the second position, never at the first.
        letter = gold[seen_by_model(body["messages"])]
        opening = [("(", -0.05), ("**", -3.5), ("Answer", -4.0)]
        letters = [(x, math.log(0.7 if x == letter else 0.1)) for x in LETTERS]
        return Reply(
            f"({letter})",
            logprobs=[("(", -0.05, opening), (letter, math.log(0.7), letters), (")", -0.01, [])],
        )

    server.rules["spell"] = spell
    server.rules["paren"] = paren
    store = tmp_path / "store"

    first = invoke("run", "--panel", str(_panel(tmp_path, source, server)), "--store", str(store))
    assert first.exit_code == 0, first.output
    hits = server.hits_for("spell") + server.hits_for("paren")
    assert len(hits) == 2 * n and {h["top_logprobs"] for h in hits} == {20}
    manifest = _latest_manifest(store)
    run_id = manifest["run_id"]
    [suite] = manifest["suites"]
    assert suite["options"]["top_logprobs"] == 20
    assert {g["model"]: g["protocol"]["top_logprobs"] for g in manifest["generation"]} == {
        "spell": 20,
        "paren": 20,
    }
    # All four letters seen by both: read at the first position for one, the second for the
    # other; the spellings of a letter count once, at their likeliest.
    assert _details(str(store), run_id) == [
        f"paren,4,1,0.7,{n}",
        f"spell,4,0,{round(0.90 / 0.918, 4)},{n}",
    ]
    overall = _overall(str(store), run_id)
    assert overall[("spell", "confidence_items")] == (f"{n}.0", str(n))
    assert overall[("spell", "letters_seen_lt4")] == ("0.0", str(n))
    assert overall[("paren", "letters_seen_lt4")] == ("0.0", str(n))

    # Lowered to the release's 4: a new request (its key differs), so asked again, not reused.
    lowered = _panel(tmp_path, source, server, top_logprobs=4)
    second = invoke("run", "--panel", str(lowered), "--store", str(store))
    assert second.exit_code == 0, second.output
    hits = server.hits_for("spell") + server.hits_for("paren")
    assert Counter(h["top_logprobs"] for h in hits) == {20: 2 * n, 4: 2 * n}
    manifest = _latest_manifest(store)
    assert manifest["run_id"] != run_id
    run_id = manifest["run_id"]
    assert manifest["totals"]["cached"] == 0 and manifest["totals"]["calls"] == 2 * n
    assert manifest["suites"][0]["options"]["top_logprobs"] == 4
    assert {g["model"]: g["sent"]["top_logprobs"] for g in manifest["generation"]} == {
        "spell": 4,
        "paren": 4,
    }
    # The spellings fill the top 4: one letter seen, a confidence of 1, counted per model.
    assert _details(str(store), run_id) == [f"paren,4,1,0.7,{n}", f"spell,1,0,1.0,{n}"]
    overall = _overall(str(store), run_id)
    assert overall[("spell", "letters_seen_lt4")] == (f"{n}.0", str(n))
    assert overall[("paren", "letters_seen_lt4")] == ("0.0", str(n))
    views = query_csv(
        str(store),
        "select slice_value, value, n from metrics where model = 'spell' and slice = 'view' "
        f"and metric = 'letters_seen_lt4' and run_id = '{run_id}' order by slice_value",
    )
    assert sum(float(line.split(",")[1]) for line in views[1:]) == n
