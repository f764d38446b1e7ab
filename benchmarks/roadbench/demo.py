"""The demo suite: a few drawn items per task in the release's layout (labels.jsonl beside
<id>.png in task_1_2, task_3, task_4_5, task_6), the same bytes on every run."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw
from shapely import LineString, Point

from roadeval.benchmarks.roadbench.demo_drawing import bev_network, bev_segment, fpv_road, fpv_view
from roadeval.benchmarks.roadbench.metrics_lanes import rule_designations

DEMO_FOLDER = "roadbench-demo"
ITEMS_PER_FOLDER = 10
SEED = 20250901
BEV_SIZE = 400
NETWORK_SIZES = ((480, 420), (420, 480), (520, 460))
FPV_SIZE = (480, 270)
# Lane layouts beyond the rule baseline's, so that the baseline is not always right.
VARIANTS = {1: ["C", "CD", "BCD"], 2: ["BC", "CD", "C", "AB"], 3: ["AB", "C", "CD", "BC"]}
CONDITIONS = ("光照不佳", "地面标识遮盖")
# The roadside tree that sets each FPV view apart.
TRUNK = (96, 70, 48)
CROWN = (52, 96, 52)


def demo_id(kind: str, index: int) -> str:
    """32 hex characters like the release's ids, fixed per (kind, index)."""
    return hashlib.md5(f"roadbench-demo:{kind}:{index}".encode()).hexdigest()


def designations(lanes: int, rng: random.Random, variable: bool) -> list[str]:
    layout = rule_designations(lanes)
    for lane in range(lanes):
        if rng.random() < 0.4:
            layout[lane] = rng.choice(VARIANTS[min(lane + 1, 3)])
    if variable and lanes >= 3 and rng.random() < 0.5:
        layout[1] = "G"
    return layout


def save(image: Image.Image, path: Path) -> None:
    # PNG with fixed settings and no metadata, so that every run writes the same bytes.
    image.save(path, format="PNG", compress_level=6)


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")


def lane_segments(folder: Path, rng: random.Random) -> None:
    rows = []
    for index in range(ITEMS_PER_FOLDER):
        item_id = demo_id("bev", index)
        lanes = rng.randint(1, 5)
        layout = designations(lanes, rng, variable=False)
        image = bev_segment(BEV_SIZE, (rng.randint(1, 4), lanes), layout)
        mid = BEV_SIZE // 2
        y = mid + 3 + lanes * 22 // 2
        start, end = rng.randint(0, 60), rng.randint(BEV_SIZE - 140, BEV_SIZE - 90)
        save(image, folder / f"{item_id}.png")
        line = LineString([(start, y), ((start + end) // 2, y + rng.randint(-2, 2)), (end, y)])
        rows.append({"id": item_id, "num_lane": lanes, "laneinfo": layout, "pixel_line": line.wkt})
    write_rows(folder / "labels.jsonl", rows)


def road_networks(folder: Path, rng: random.Random) -> None:
    rows = []
    for index in range(ITEMS_PER_FOLDER):
        item_id = demo_id("network", index)
        width, height = NETWORK_SIZES[index % len(NETWORK_SIZES)]
        y0, y1 = rng.randint(80, height - 80), rng.randint(80, height - 80)
        path = [(0, y0), (width // 2, (y0 + y1) // 2 + rng.randint(-30, 30)), (width, y1)]
        crossings = [
            (x, round(_height_on(path, x)))
            for x in sorted(rng.sample(range(60, width - 60, 20), 2))
        ]
        save(bev_network((width, height), path, crossings, rng), folder / f"{item_id}.png")
        junctions = [Point(crossing).wkt for crossing in crossings]
        cuts = [path[0], *crossings, path[-1]]
        lines = [LineString(_between(path, a, b)).wkt for a, b in itertools.pairwise(cuts)]
        offset = rng.randint(-6, 6)
        reference = LineString([(x, y + offset) for x, y in path])
        rows.append(
            {
                "id": item_id,
                "pixel_line": reference.wkt,
                "ground_truth": {"lines": lines, "junctions": junctions},
            }
        )
    write_rows(folder / "labels.jsonl", rows)


def _height_on(path: list[tuple[int, int]], x: float) -> float:
    for (x1, y1), (x2, y2) in itertools.pairwise(path):
        if x1 <= x <= x2:
            return y1 + (y2 - y1) * (x - x1) / (x2 - x1)
    return float(path[-1][1])


def _between(
    path: list[tuple[int, int]], a: tuple[int, int], b: tuple[int, int]
) -> list[tuple[int, int]]:
    inner = [vertex for vertex in path if a[0] < vertex[0] < b[0]]
    return [a, *inner, b]


def roadside_tree(image: Image.Image, kind: str, index: int, dark: bool = False) -> Image.Image:
    """A tree on the horizon, off the road, at a place of the item's own (its index), so that no
    two drawn views of a folder are the same picture (two items that showed one picture would
    send one request). Its size comes from a generator of the item's own, not the folder's, so
    the folder's labels are drawn as they were."""
    rng = random.Random(f"{SEED}:{kind}:{index}")
    width, height = image.size
    horizon = round(height * 0.45)
    x = 24 + index * (width - 48) // max(ITEMS_PER_FOLDER - 1, 1)
    trunk, crown = rng.randint(6, 14), rng.randint(7, 12)
    shade = 3 if dark else 1
    draw = ImageDraw.Draw(image)
    draw.rectangle([x - 1, horizon - trunk, x + 1, horizon], fill=tuple(v // shade for v in TRUNK))
    top = horizon - trunk
    draw.ellipse(
        [x - crown, top - 2 * crown, x + crown, top + 2], fill=tuple(v // shade for v in CROWN)
    )
    return image


def fpv_lanes(folder: Path, rng: random.Random) -> None:
    rows, extra = [], []
    for index in range(ITEMS_PER_FOLDER):
        item_id = demo_id("fpv", index)
        lanes = rng.randint(1, 5)
        layout = designations(lanes, rng, variable=True)
        conditions = [CONDITIONS[(index // 3) % 2]] if index % 3 == 1 else []
        dark = CONDITIONS[0] in conditions
        view = fpv_view(*FPV_SIZE, lanes, layout, dark)
        save(roadside_tree(view, "fpv", index, dark), folder / f"{item_id}.png")
        rows.append({"id": item_id, "laneinfo": layout, "num_lane": lanes})
        if conditions:
            extra.append({"id": item_id, "extra_labels": conditions})
    write_rows(folder / "labels.jsonl", rows)
    write_rows(folder / "extra_labels.jsonl", extra)


def road_types(folder: Path, rng: random.Random) -> None:
    rows = []
    for index in range(ITEMS_PER_FOLDER):
        item_id = demo_id("road-type", index)
        main = rng.random() < 0.6
        road = fpv_road(*FPV_SIZE, main, rng)
        save(roadside_tree(road, "road-type", index), folder / f"{item_id}.png")
        rows.append(
            {"id": item_id, "road_type": "main" if main else "service", "img": f"{item_id}.png"}
        )
    write_rows(folder / "labels.jsonl", rows)


def write_demo(root: Path) -> Path:
    """Write the demo suite under `root` and return the folder to pass to `load`."""
    source = root / DEMO_FOLDER
    writers = {
        "task_1_2": lane_segments,
        "task_3": road_networks,
        "task_4_5": fpv_lanes,
        "task_6": road_types,
    }
    for offset, (folder, writer) in enumerate(writers.items()):
        target = source / folder
        target.mkdir(parents=True, exist_ok=True)
        writer(target, random.Random(SEED + offset))
    return source
