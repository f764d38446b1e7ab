"""The render stage: every item's images, drawn where the protocol draws them, before the plan.

Drawing from other media (point clouds) is the CPU-heavy part: those jobs are looked up first (the
local media cache, then the store's `renders/`), and only the missing ones are drawn, on Dask, then
kept in both. An input that cannot be drawn fails its own item; every other job still draws. Then
each item's images are read, in threads, from what is now cached.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from roadeval.benchmarks.drawing import DrawError, DrawJob, cached_views, keep_views
from roadeval.benchmarks.errors import ItemProblem
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.suite import Suite
from roadeval.storage.store import Store, StoreError, describe_store_error
from roadeval.tasks.render.cluster import RenderConfig, draw_all

Renders = dict[str, tuple[ImageRef, ...]]


@dataclass
class RenderReport:
    """What the stage did: images per item, items whose input could not be drawn, and where
    the drawn views came from."""

    renders: Renders = field(default_factory=dict)
    failed: list[ItemProblem] = field(default_factory=list)
    drawn: int = 0
    from_cache: int = 0
    from_store: int = 0
    # Of the drawings made now, those sent to a Dask cluster (the rest were drawn here).
    on_cluster: int = 0


def _from_store(job: DrawJob, store: Store) -> tuple[ImageRef, ...] | None:
    keys = [job.store_key(view) for view in job.views]
    if not all(store.exists(key) for key in keys):
        return None
    return keep_views(job, tuple(store.get(key) for key in keys))


def fill_drawings(
    jobs: dict[str, DrawJob], store: Store | None, config: RenderConfig, report: RenderReport
) -> set[str]:
    """Make every job's views present in the media cache (and the store); returns the ids of
    items whose input could not be drawn, recorded in `report.failed`."""
    missing: dict[str, DrawJob] = {}
    for item_id, job in jobs.items():
        if cached_views(job) is not None:
            report.from_cache += 1
            if store is not None and not store.exists(job.store_key(job.views[-1])):
                _share(job, store)
        elif store is not None and _from_store(job, store) is not None:
            report.from_store += 1
        else:
            missing[item_id] = job
    # Several items may show one scan: draw it once.
    unique = {job.key: job for job in missing.values()}
    outcomes = dict(zip(unique, draw_all(list(unique.values()), config), strict=True))
    if config.on_cluster(len(unique)):
        report.on_cluster = sum(not isinstance(o, DrawError) for o in outcomes.values())
    failed: set[str] = set()
    for item_id, job in missing.items():
        outcome = outcomes[job.key]
        if isinstance(outcome, DrawError):
            report.failed.append(ItemProblem(job.source, None, job.field, str(outcome), item_id))
            failed.add(item_id)
            continue
        keep_views(job, outcome)
        if store is not None:
            for view, data in zip(job.views, outcome, strict=True):
                _put(store, job.store_key(view), data)
    report.drawn = len({job.key for i, job in missing.items() if i not in failed})
    return failed


def _share(job: DrawJob, store: Store) -> None:
    """Views drawn here before (e.g. by `roadeval render` without a store) go to the store too."""
    for view in job.views:
        _put(store, job.store_key(view), job.cached_path(view).read_bytes())


def _put(store: Store, key: str, data: bytes) -> None:
    # A store that cannot keep renders cannot keep answers either: the run stops here, named.
    try:
        store.put(key, data)
    except OSError as exc:
        raise StoreError(describe_store_error(store.uri, exc)) from exc


def render_items(
    suite: Suite,
    items: list[Item],
    store: Store | None = None,
    config: RenderConfig | None = None,
) -> RenderReport:
    """Images per item id, in the suite's order; the items whose drawing failed are left out
    (and listed), so the caller decides whether that stops the run."""
    report = RenderReport()
    jobs = {item.item_id: job for item in items if (job := suite.draw_job(item)) is not None}
    failed = fill_drawings(jobs, store, config or RenderConfig(), report) if jobs else set()
    kept = [item for item in items if item.item_id not in failed]
    workers = min(len(kept), os.cpu_count() or 1) or 1
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="render") as pool:
        rendered = list(pool.map(suite.render, kept))
    report.renders = {item.item_id: images for item, images in zip(kept, rendered, strict=True)}
    return report
