"""The cost of the headline intervals and paired differences (issue 20) at the rerun bench's
size: `--items` TRIP items (the demo's rows repeated under new ids: text, image and point-cloud
items, or with `--text-only` text items as in bench/rerun.py; three difficulties) x `--models`
models whose 0/1 verdicts are drawn at accuracies spread over 0.3-0.7; the suite's own metric
rows (`aggregate`), then `headline_intervals` timed alone (wall and CPU seconds, best of
`--repeat`). Then the same items clustered: each run of `--scene` items shows one image (as
V2X-QA asks 12 questions of each scene), so the intervals and pairs draw whole scenes. Then the
bootstrap's item-by-item draw, which a suite with continuous per-item values takes (ADE, judge
scores), on the same sizes.

    .venv/bin/python bench/intervals.py [--items 10000] [--models 5 20] [--resamples 1000]
        [--repeat 3] [--text-only] [--scene 12]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from roadeval.benchmarks.item import Media, MediaKind
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem
from roadeval.tasks.results.aggregate import aggregate
from roadeval.tasks.results.headlines import headline_intervals
from roadeval.tasks.results.intervals import IntervalSettings
from roadeval.tasks.results.resampling import resampled_sums


def trip_items(n: int, text_only: bool = False) -> list[Any]:
    """`n` demo items under new ids, each copy with media of its own (independent items)."""
    suite = get_suite("trip")
    with tempfile.TemporaryDirectory() as folder:
        items = suite.load(suite.generate_demo(Path(folder))).items
    if text_only:
        items = [item for item in items if item.labels["modality"] == "text"]
    copies = []
    for k in range(n):
        item = items[k % len(items)]
        media = tuple(m.model_copy(update={"sha256": f"{m.sha256}:{k}"}) for m in item.media)
        copies.append(item.model_copy(update={"item_id": f"i{k:06d}", "media": media}))
    return copies


def in_scenes(items: list[Any], size: int) -> list[Any]:
    """The items, each run of `size` showing one image of its own (a scene)."""
    return [
        item.model_copy(
            update={
                "media": (
                    Media(
                        kind=MediaKind.IMAGE, path=f"scene-{k // size}.png", sha256=f"{k // size}"
                    ),
                )
            }
        )
        for k, item in enumerate(items)
    ]


def answers(items: list[Any], models: int, rng: np.random.Generator) -> dict[str, list[Any]]:
    scored = {}
    for m, accuracy in enumerate(np.linspace(0.3, 0.7, models)):
        correct = rng.random(len(items)) < accuracy
        scored[f"model-{m:02d}"] = [
            ScoredItem(item, ParsedAnswer(ParseStatus.OK, "A", "letter"), {"correct": float(c)})
            for item, c in zip(items, correct, strict=True)
        ]
    return scored


def best(repeat: int, work: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall s, CPU s, result) of the fastest of `repeat` runs."""
    runs = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = work()
        runs.append((time.perf_counter() - wall, time.process_time() - cpu, result))
    return min(runs, key=lambda run: run[0])


def draw(matrices: list[Any], strata: Any, resamples: int) -> Any:
    return resampled_sums(matrices, strata, resamples, np.random.default_rng(0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--models", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--text-only", action="store_true", help="text items only, as bench/rerun.py's suite"
    )
    parser.add_argument("--scene", type=int, default=12, help="items per scene when clustered")
    args = parser.parse_args()
    suite = get_suite("trip")
    settings = IntervalSettings(resamples=args.resamples)
    items = trip_items(args.items, args.text_only)
    rng = np.random.default_rng(0)
    for label, shown in (("", items), (f", scenes of {args.scene}", in_scenes(items, args.scene))):
        for models in args.models:
            scored = answers(shown, models, rng)
            rows = [row for m, s in scored.items() for row in aggregate(suite, m, "bench", s)]
            wall, cpu, found = best(
                args.repeat, partial(headline_intervals, suite, scored, rows, settings, "bench")
            )
            pairs = len(found.pairs)
            clusters = {m.clusters for m in found.methods}
            print(
                f"trip {args.items} items{label} x {models} models, {args.resamples} resamples: "
                f"{wall:.3f} s wall, {cpu:.3f} s CPU ({pairs} pair rows; clusters {clusters})"
            )
    for models in args.models:
        strata = np.repeat(np.arange(8), -(-args.items // 8))[: args.items]
        matrices = [np.column_stack([rng.random(args.items), np.ones(args.items)])] * models
        matrices = [m * rng.random() for m in matrices]
        wall, cpu, _ = best(args.repeat, partial(draw, matrices, strata, args.resamples))
        print(
            f"continuous values, {args.items} items x {models} models, item-by-item draw: "
            f"{wall:.3f} s wall, {cpu:.3f} s CPU"
        )


if __name__ == "__main__":
    main()
