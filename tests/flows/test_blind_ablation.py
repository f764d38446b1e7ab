"""The vision ablation (`ablations: [blind]`): every image-bearing item asked again with each
image replaced by a black image of its size, a request of its own (cached, priced and budgeted
as any), its rows and metrics under variant 'blind', copied whole by a rerun."""

from __future__ import annotations

import base64
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from roadeval.benchmarks.registry import get_suite

from support.model_server import ModelServer, Reply, prompt_text
from support.trip_panel import invoke, query_csv, trip_gold

pytestmark = pytest.mark.usefixtures("inline")

ENGINES = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}
# An image as the server decoded it: its format, size, and whether every pixel is black.
Seen = tuple[str, tuple[int, int], bool]


class Eyes:
    """A server rule that decodes every image a request sends, and answers 'A'."""

    def __init__(self, reply: Reply | None = None) -> None:
        self.reply = reply or Reply("A")
        self.seen: list[tuple[str, tuple[Seen, ...]]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], hit: int) -> Reply:
        images = []
        for message in body["messages"]:
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "image_url":
                    url = part["image_url"]["url"]
                    images.append(_decoded(base64.b64decode(url.split(",", 1)[1])))
        with self._lock:
            self.seen.append((prompt_text(body), tuple(images)))
        return self.reply

    def shown(self, black: bool) -> set[tuple[str, tuple[tuple[str, tuple[int, int]], ...]]]:
        """The requests with images, all black (`black`) or none black: text and images."""
        return {
            (text, tuple((fmt, size) for fmt, size, _ in images))
            for text, images in self.seen
            if images and all(dark == black for _, _, dark in images)
        }


def _decoded(data: bytes) -> Seen:
    with Image.open(io.BytesIO(data)) as image:
        extrema = image.convert("RGB").getextrema()
        return image.format or "", image.size, all(high == 0 for _, high in extrema)


def _image_items(name: str, source: Path) -> tuple[set[str], set[str]]:
    """Item ids of a suite that show at least one image (a scan's views included), and all."""
    suite = get_suite(name)
    items = suite.load(source).items
    shown = {i.item_id for i in items if suite.draw_job(i) is not None or suite.render(i)}
    return shown, {i.item_id for i in items}


def _panel(
    tmp_path: Path, suites: list[dict[str, Any]], model: dict[str, Any], **extra: Any
) -> Path:
    panel = {"name": "ablation", "suites": suites, "models": [model], **ENGINES, **extra}
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(panel))
    return path


def _manifests(store: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in (store / "runs").glob("*/manifest.json")]
    return sorted(found, key=lambda m: m["started_at"])


def _ids(store: Path, table: str, suite: str, variant: str) -> set[str]:
    lines = query_csv(
        str(store),
        f"select distinct item_id from {table} where suite = '{suite}' "
        f"and coalesce(variant, '') = '{variant}'",
    )
    return set(lines[1:])


def test_blind_requests_send_black_images_of_the_original_sizes_and_land_apart(
    tmp_path: Path, server: ModelServer
) -> None:
    trip, _ = trip_gold(tmp_path)
    v2x = get_suite("v2xqa").generate_demo(tmp_path / "v2x-src")
    eyes = Eyes()
    server.rules["seer"] = eyes
    panel = _panel(
        tmp_path,
        [{"name": "trip", "source": str(trip)}, {"name": "v2xqa", "source": str(v2x)}],
        {"model": "openai/seer", "name": "seer", "api_base": server.api_base},
        ablations=["blind"],
        # Sent from answer worker processes, which read the black images where the run made them.
        processes=2,
    )
    store = tmp_path / "store"
    result = invoke("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert result.exit_code == 0, result.output

    # Every request shows real images or black ones, never a mix; each blind request shows
    # exactly what a released one shows, text and image sizes and formats, in black.
    assert all(len({dark for _, _, dark in images}) <= 1 for _, images in eyes.seen), (
        "a request mixed black and real images"
    )
    blind, released = eyes.shown(black=True), eyes.shown(black=False)
    assert blind and blind == released
    # TRIP's point-cloud items show two drawn views: blacked out too.
    assert any(len(images) == 2 for _, images in blind)

    shown = {"trip": _image_items("trip", trip), "v2xqa": _image_items("v2xqa", v2x)}
    assert len(shown["trip"][0]) < len(shown["trip"][1])  # TRIP has text-only items
    for suite, (with_images, every) in shown.items():
        for table in ("plan", "responses", "parses", "scores"):
            assert _ids(store, table, suite, "blind") == with_images, (suite, table)
            assert _ids(store, table, suite, "") == every, (suite, table)
    # Metrics per variant, never mixed: the released over every item, the blind over those
    # that show an image.
    counts = query_csv(
        str(store),
        "select suite, variant, max(n) from metrics where slice = '' group by all order by all",
    )[1:]
    assert counts == [
        f"trip,,{len(shown['trip'][1])}",
        f"trip,blind,{len(shown['trip'][0])}",
        f"v2xqa,,{len(shown['v2xqa'][1])}",
        f"v2xqa,blind,{len(shown['v2xqa'][0])}",
    ]
    [manifest] = _manifests(store)
    assert manifest["ablations"] == ["blind"] and manifest["answer_processes"] == 2
    entries = {(c["suite"], c["variant"]): c["items"] for c in manifest["counts"]}
    assert entries == {
        ("trip", ""): len(shown["trip"][1]),
        ("trip", "blind"): len(shown["trip"][0]),
        ("v2xqa", ""): len(shown["v2xqa"][1]),
        ("v2xqa", "blind"): len(shown["v2xqa"][0]),
    }
    assert "seer (blind)" in result.output


PRICES = {"input_cost_per_token": 1e-9, "output_cost_per_token": 1e-4}


def _campaign(panel: Path, store: Path, budget_usd: str) -> Any:
    """A campaign under `budget_usd` (its report is not under test here)."""
    args = ["--panel", str(panel), "--store", str(store), "--budget-usd", budget_usd]
    return invoke("campaign", *args, "--no-report")


def test_blind_requests_are_estimated_priced_and_held_to_the_budget(
    tmp_path: Path, server: ModelServer
) -> None:
    source, _ = trip_gold(tmp_path)
    with_images, every = _image_items("trip", source)
    # Each reply uses every output token it may: a request costs what the budget reserves for
    # it, give or take its input (priced at almost nothing).
    eyes = Eyes(Reply("A", prompt_tokens=50, completion_tokens=8))
    server.rules["paid"] = eyes
    model = {
        "model": "openai/paid",
        "name": "paid",
        "api_base": server.api_base,
        "params": {"max_tokens": 8},
        "max_concurrency": 1,
        **PRICES,
    }
    one = 8 * PRICES["output_cost_per_token"]
    # Enough for every released request and a little over: not for the blind ones as well.
    budget = f"{(len(every) + 1.5) * one:.6f}"
    released = _panel(tmp_path, [{"name": "trip", "source": str(source)}], model)
    ablated = tmp_path / "ablated.yaml"
    ablated.write_text(
        yaml.safe_dump({**yaml.safe_load(released.read_text()), "ablations": ["blind"]})
    )

    # The dry run estimates the blind requests, in rows of their own.
    store = tmp_path / "store"
    result = invoke("campaign", "--panel", str(ablated), "--store", str(store), "--dry-run")
    assert result.exit_code == 0, result.output
    assert server.hits == []
    estimates = query_csv(
        str(store),
        "select variant, requests, expected_usd > 0 from estimates order by variant",
    )[1:]
    assert estimates == [f",{len(every)},True", f"blind,{len(with_images)},True"]
    assert "paid (blind)" in result.output

    # The released requests alone finish under the budget...
    alone = tmp_path / "alone"
    result = _campaign(released, alone, budget)
    assert result.exit_code == 0, result.output
    assert len(server.hits_for("paid")) == len(every)
    # ... with the ablation, the same budget runs out before the blind requests are all asked.
    server.hits.clear()
    eyes.seen.clear()
    result = _campaign(ablated, store, budget)
    assert result.exit_code == 3, result.output
    assert "out of budget" in result.output
    asked = len(server.hits_for("paid"))
    assert asked < len(every) + len(with_images)
    [spent] = query_csv(str(store), "select sum(cost_usd) from costs")[1:]
    assert float(spent) <= float(budget)

    # A larger budget finishes it: every blind request priced by the panel's prices, its cost
    # the run's and the ledger's.
    result = _campaign(ablated, store, "1")
    assert result.exit_code == 0, result.output
    blind = query_csv(
        str(store),
        "select count(*), min(cost_usd), sum(cost_usd) from costs "
        "where variant = 'blind' and not cached and try_number > 0",
    )[1:]
    count, cheapest, blind_usd = blind[0].split(",")
    assert int(count) == len(eyes.shown(black=True)) and float(cheapest) >= one
    # The runs' counts keep the blind requests' cost apart, and it is the ledger's.
    counted = sum(
        entry["cost_usd"]
        for manifest in _manifests(store)
        for entry in manifest["counts"]
        if entry["variant"] == "blind"
    )
    assert abs(counted - float(blind_usd)) < 1e-9
    [total] = query_csv(str(store), "select sum(cost_usd) from runs")[1:]
    [ledger] = query_csv(str(store), "select sum(cost_usd) from costs")[1:]
    assert abs(float(total) - float(ledger)) < 1e-9


def _metrics(store: Path, run_id: str) -> list[str]:
    return query_csv(
        str(store),
        "select suite, task, model, slice, slice_value, metric, variant, value, n from metrics "
        f"where run_id = '{run_id}' order by all",
    )[1:]


def test_a_rerun_copies_the_blind_outcomes_and_keeps_a_blind_answer_for_a_same_size_image(
    tmp_path: Path, server: ModelServer
) -> None:
    source, _ = trip_gold(tmp_path)
    with_images, every = _image_items("trip", source)
    eyes = Eyes()
    server.rules["again"] = eyes
    panel = _panel(
        tmp_path,
        [{"name": "trip", "source": str(source)}],
        {"model": "openai/again", "name": "again", "api_base": server.api_base},
        ablations=["blind"],
    )
    store = tmp_path / "store"
    assert invoke("run", "--panel", str(panel), "--store", str(store), "--no-report").exit_code == 0
    first = _manifests(store)[0]

    # Nothing changed: nothing asked, every outcome copied, the blind ones under 'blind'.
    server.hits.clear()
    assert invoke("run", "--panel", str(panel), "--store", str(store), "--no-report").exit_code == 0
    assert server.hits == []
    second = _manifests(store)[1]
    assert second["totals"]["calls"] == 0
    assert second["totals"]["scores_reused"] == len(every) + len(with_images)
    blind = next(c for c in second["counts"] if c["variant"] == "blind")
    assert blind["scores_reused"] == len(with_images)
    assert _metrics(store, first["run_id"]) == [
        line.replace(second["run_id"], first["run_id"])
        for line in _metrics(store, second["run_id"])
    ]
    assert any(",blind," in line for line in _metrics(store, second["run_id"]))
    copied = query_csv(
        str(store),
        f"select count(distinct item_id) from scores where run_id = '{second['run_id']}' "
        "and variant = 'blind'",
    )[1:]
    assert copied == [str(len(with_images))]

    # An image redrawn at its size: the released request changes, the blind one does not (the
    # same black image), so only the released one is asked.
    rows = [json.loads(line) for line in (source / "items.jsonl").read_text().splitlines()]
    path = source / next(r["image"] for r in rows if r.get("image"))
    with Image.open(path) as image:
        redrawn = image.copy()
    pixel = redrawn.getpixel((0, 0))
    redrawn.putpixel(
        (0, 0),
        tuple((v + 128) % 256 for v in pixel) if isinstance(pixel, tuple) else (pixel + 1) % 256,
    )
    redrawn.save(path)
    server.hits.clear()
    eyes.seen.clear()
    assert invoke("run", "--panel", str(panel), "--store", str(store), "--no-report").exit_code == 0
    assert len(server.hits) == 1
    assert eyes.shown(black=True) == set()
    third = _manifests(store)[2]
    blind = next(c for c in third["counts"] if c["variant"] == "blind")
    # Its blind answer is the stored one, scored again (its item changed); the others copied.
    n = len(with_images)
    assert (blind["calls"], blind["cached"], blind["scores_reused"]) == (0, n, n - 1)


def test_an_unknown_ablation_names_the_panel_and_the_field(tmp_path: Path) -> None:
    source, _ = trip_gold(tmp_path)
    panel = _panel(
        tmp_path,
        [{"name": "trip", "source": str(source)}],
        {"model": "roadeval/random", "name": "random"},
        ablations=["deaf"],
    )
    result = invoke("run", "--panel", str(panel), "--store", str(tmp_path / "store"), "--no-report")
    assert result.exit_code == 2
    assert str(panel) in result.output
    assert "ablations" in result.output and "'deaf'" in result.output
    assert "Traceback" not in result.output
