"""The render stage: every item's images, drawn where the protocol draws them, before the plan.

Rendering is the CPU-heavy stage (RoadBench's PNG encoder, TRIP's point-cloud views next); it
runs on a pool of threads here, and renders are content-addressed files, so a later run (or a
later stage) reads them rather than drawing them again.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.suite import Suite


def render_items(suite: Suite, items: list[Item]) -> dict[str, tuple[ImageRef, ...]]:
    """{item id: the images its prompt shows}, in the suite's order."""
    workers = min(len(items), os.cpu_count() or 1) or 1
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="render") as pool:
        rendered = list(pool.map(suite.render, items))
    return {item.item_id: images for item, images in zip(items, rendered, strict=True)}
