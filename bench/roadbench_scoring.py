"""How long RoadBench scoring takes: synthesise items across the six tasks (task 3 with 5-20
lines of 2-30 vertices per item), then time per-item `score` and per-task `summarize` on one
core. Prints the figures per task and in total. The target (from the V2X-QA/STRIDE issue, which
replaced the first one-core target): task 3 on release-shaped items at most 1.5 ms per item on one
core; heavy-shaped task 3 scales over Ray workers instead (bench/ray_scoring.py).

    taskset -c 0 .venv/bin/python bench/roadbench_scoring.py [--items 100000] [--seed 7]

`--threads N` scores in N threads, as the flow's concurrent shards do (GEOS releases the GIL).
`--lines 1-3 --vertices 2-3` gives task-3 items shaped like the release's (about 2 lines of 2-3
vertices each in ../shared/samples/roadbench/task_3).
"""

from __future__ import annotations

import argparse
import math
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import shapely
from scipy.optimize import linear_sum_assignment

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.roadbench.frechet import frechet_matrix
from roadeval.benchmarks.roadbench.metrics_network import (
    BUFFER_QUAD_SEGS,
    buffer_f1_scores,
    junction_scores,
    line_geometries,
)
from roadeval.benchmarks.roadbench.network_geometry import normalised_lines, normalised_points
from roadeval.benchmarks.roadbench.tasks import THETAS
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem, Suite

TASKS = ("1", "2", "3", "4", "5", "6")
LETTERS = {"2": "ABCD", "5": "ABCDG"}
# Share of replies the release could not read (scored by its bad-answer rule).
UNPARSED_SHARE = 0.03


def make_item(task: str, index: int, reference: Any, extra: dict[str, Any]) -> Item:
    return Item(
        suite="roadbench",
        suite_version="bench",
        item_id=f"{task}:{index}",
        task=task,
        question="",
        answer_kind=AnswerKind.YAML,
        reference=reference,
        extra=extra,
        # A fixed hash: computing 100,000 content hashes is not what is measured here.
        content_hash="bench",
    )


def road_line(rng: random.Random, size: int, vertices: int) -> list[tuple[float, float]]:
    """A gently curving road centreline crossing part of the image."""
    x, y = rng.uniform(0, size), rng.uniform(0, size)
    heading = rng.uniform(0, 2 * math.pi)
    step = rng.uniform(0.2, 0.8) * size / max(vertices - 1, 1)
    points = []
    for _ in range(vertices):
        points.append((round(x, 1), round(y, 1)))
        heading += rng.gauss(0, 0.08)
        x, y = x + step * math.cos(heading), y + step * math.sin(heading)
    return points


def wkt_line(points: list[tuple[float, float]]) -> str:
    return "LINESTRING (" + ", ".join(f"{x:g} {y:g}" for x, y in points) + ")"


@dataclass(frozen=True)
class NetworkShape:
    """How many lines a task-3 ground truth has, and how many vertices each line."""

    lines: tuple[int, int] = (5, 20)
    vertices: tuple[int, int] = (2, 30)


def network_case(
    rng: random.Random, shape: NetworkShape
) -> tuple[dict[str, list[str]], dict[str, list[str]], list[int]]:
    """Ground truth with `shape` lines and a prediction near it (moved vertices, a line or two
    dropped or invented), in an image of 800-1300 pixels a side."""
    width, height = rng.randint(800, 1300), rng.randint(800, 1300)
    truth_lines = [
        road_line(rng, min(width, height), rng.randint(*shape.vertices))
        for _ in range(rng.randint(*shape.lines))
    ]
    starts = rng.randint(min(2, len(truth_lines)), len(truth_lines))
    junctions = [line[0] for line in truth_lines[:starts]]
    noisy = [
        [(x + rng.gauss(0, 6), y + rng.gauss(0, 6)) for x, y in line]
        for line in truth_lines
        if rng.random() > 0.1
    ]
    noisy += [
        road_line(rng, min(width, height), rng.randint(*shape.vertices))
        for _ in range(rng.randint(0, 2))
    ]
    predicted_junctions = [(x + rng.gauss(0, 15), y + rng.gauss(0, 15)) for x, y in junctions]
    truth = {
        "junctions": [f"POINT ({x:g} {y:g})" for x, y in junctions],
        "lines": [wkt_line(line) for line in truth_lines],
    }
    predicted = {
        "junctions": [f"POINT ({x:.1f} {y:.1f})" for x, y in predicted_junctions],
        "lines": [wkt_line([(round(x, 1), round(y, 1)) for x, y in line]) for line in noisy],
    }
    return truth, predicted, [width, height]


def synthesise(
    task: str, count: int, rng: random.Random, shape: NetworkShape
) -> list[tuple[Item, ParsedAnswer]]:
    cases = []
    for index in range(count):
        extra: dict[str, Any] = {}
        if task in ("1", "4"):
            truth = rng.randint(1, 6)
            answer: Any = max(1, truth + rng.choice((-1, 0, 0, 1)))
        elif task in ("2", "5"):
            lanes = rng.randint(1, 6)
            truth = [
                "".join(sorted(rng.sample(LETTERS[task], rng.randint(1, 2)))) for _ in range(lanes)
            ]
            answer = [lane if rng.random() < 0.7 else rng.choice(LETTERS[task]) for lane in truth]
            if rng.random() < 0.1:
                answer = answer[:-1]
        elif task == "3":
            truth, answer, size = network_case(rng, shape)
            extra["image_size"] = size
        else:
            truth = rng.choice(("main", "main", "service"))
            answer = truth if rng.random() < 0.75 else rng.choice(("main", "service"))
        if rng.random() < UNPARSED_SHARE:
            parsed = ParsedAnswer(ParseStatus.UNPARSED, None, "yaml_error")
        else:
            parsed = ParsedAnswer(ParseStatus.OK, answer, "yaml_fenced")
        cases.append((make_item(task, index, truth, extra), parsed))
    return cases


def score_all(suite: Suite, cases: list[tuple[Item, ParsedAnswer]]) -> list[ScoredItem]:
    """Score as the flow's scoring stage does (keeping what the summary reuses); code from
    before that stage existed scores with `score` alone, so both can be timed side by side."""
    details = getattr(suite, "score_details", None)
    if details is None:
        return [ScoredItem(item, parsed, suite.score(item, parsed)) for item, parsed in cases]
    scored = []
    for item, parsed in cases:
        score = details(item, parsed)
        scored.append(ScoredItem(item, parsed, score.values, score.state))
    return scored


def time_task(
    suite: Suite, task: str, cases: list[tuple[Item, ParsedAnswer]], threads: int
) -> tuple[float, float, dict[str, float]]:
    """Score in `threads` threads, as the flow's shards do (GEOS releases the GIL), then
    summarise in one."""
    start = time.perf_counter()
    if threads == 1:
        scored = score_all(suite, cases)
    else:
        chunks = [cases[k : k + 500] for k in range(0, len(cases), 500)]
        with ThreadPoolExecutor(threads) as pool:
            scored = [row for part in pool.map(partial(score_all, suite), chunks) for row in part]
    scoring = time.perf_counter() - start
    start = time.perf_counter()
    summary = suite.summarize(task, scored)
    return scoring, time.perf_counter() - start, summary


def network_breakdown(cases: list[tuple[Item, ParsedAnswer]], sample: int) -> None:
    """Where task-3 time goes, on the first `sample` answered items: junction matching,
    Fréchet + Hungarian matching, buffer F1 (all three thetas each), and within buffer F1 the
    release's GEOS buffer polygons alone, which no exact buffer F1 can skip."""
    prepared = []
    for item, parsed in cases:
        if parsed.value is None:
            continue
        width, height = item.extra["image_size"]
        prepared.append(
            (
                normalised_points(parsed.value["junctions"], width, height, skip_other=True),
                normalised_points(item.reference["junctions"], width, height, skip_other=False),
                normalised_lines(parsed.value["lines"], width, height, skip_other=True),
                normalised_lines(item.reference["lines"], width, height, skip_other=False),
            )
        )
        if len(prepared) == sample:
            break
    parts = {
        "junctions": lambda p: junction_scores(p[0], p[1]),
        "frechet+hungarian": lambda p: linear_sum_assignment(frechet_matrix(p[2], p[3])),
        "buffer_f1": lambda p: buffer_f1_scores(p[2], p[3]),
        "  buffers alone": lambda p: shapely.buffer(
            line_geometries([*p[2], *p[3]])[None, :],
            np.asarray(THETAS)[:, None],
            quad_segs=BUFFER_QUAD_SEGS,
        ),
    }
    print(f"task 3 breakdown on {len(prepared)} items (ms per item):")
    for name, run in parts.items():
        start = time.perf_counter()
        for case in prepared:
            run(case)
        print(f"     {name:<18} {1e3 * (time.perf_counter() - start) / len(prepared):8.2f}")


def span(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="items in all, split evenly")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--breakdown", type=int, default=300, help="task-3 items to break down")
    parser.add_argument("--lines", type=span, default=(5, 20), help="task-3 lines, MIN-MAX")
    parser.add_argument("--vertices", type=span, default=(2, 30), help="vertices a line, MIN-MAX")
    parser.add_argument("--threads", type=int, default=1, help="scoring threads (cores)")
    args = parser.parse_args()
    shape = NetworkShape(args.lines, args.vertices)
    suite = get_suite("roadbench")
    rng = random.Random(args.seed)
    per_task = [args.items // len(TASKS) + (i < args.items % len(TASKS)) for i in range(len(TASKS))]
    print(f"synthesising {args.items} items ...", flush=True)
    cases = {
        task: synthesise(task, count, rng, shape)
        for task, count in zip(TASKS, per_task, strict=True)
    }
    total_score = total_summary = totals_of_task3 = 0.0
    print(f"{'task':>4} {'items':>7} {'score s':>9} {'summary s':>10} {'us/item':>9}")
    for task in TASKS:
        scoring, summarising, summary = time_task(suite, task, cases[task], args.threads)
        if task == "3":
            totals_of_task3 = scoring + summarising
        total_score += scoring
        total_summary += summarising
        per_item = 1e6 * (scoring + summarising) / max(len(cases[task]), 1)
        print(
            f"{task:>4} {len(cases[task]):>7} {scoring:>9.2f} {summarising:>10.3f} {per_item:>9.1f}"
        )
        headline = {key: round(value, 4) for key, value in list(summary.items())[:4]}
        print(f"     {headline}")
    total = total_score + total_summary
    per_item = 1e6 * total / args.items
    print(f" all {args.items:>7} {total_score:>9.2f} {total_summary:>10.3f} {per_item:>9.1f}")
    print(f"total {total:.2f} s on {args.threads} thread(s)")
    task3 = 1000 * totals_of_task3 / max(len(cases["3"]), 1)
    print(f"task 3: {task3:.2f} ms per item (target on release-shaped items: at most 1.5 ms)")
    if args.breakdown:
        network_breakdown(cases["3"], args.breakdown)


if __name__ == "__main__":
    main()
