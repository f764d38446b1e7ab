"""The render stage of a run: every suite's renders (drawn on Dask where a suite draws), and what
a drawing that failed means for the run, by the suite's bad-item policy."""

from __future__ import annotations

from dataclasses import replace

from roadeval.benchmarks.errors import BadItemPolicy, ItemError
from roadeval.flows.stages.load import LoadedSuite
from roadeval.flows.stages.orchestration import Orchestrator, Stage
from roadeval.storage.store import Store
from roadeval.tasks.render.blind import BLIND, BlindImages
from roadeval.tasks.render.cluster import RenderConfig
from roadeval.tasks.render.stage import RenderReport, Renders, render_items


def render_suite(loaded: LoadedSuite, store: Store, config: RenderConfig) -> RenderReport:
    return render_items(loaded.suite, loaded.items, store, config)


# Prefect's task name and task-run name (a template over the stage's parameters).
RENDER_SUITE = Stage("render-suite", render_suite, "render/{loaded.suite.name}")


def render_suites(
    loaded: list[LoadedSuite], store: Store, config: RenderConfig, orchestrator: Orchestrator
) -> dict[str, Renders]:
    """Renders per suite. An item whose input cannot be drawn stops the run (`on_bad_item:
    error`, after every other drawing is done and kept) or leaves it, listed (`skip`)."""
    futures = {s.suite.name: orchestrator.submit(RENDER_SUITE, s, store, config) for s in loaded}
    reports: dict[str, RenderReport] = {name: future.result() for name, future in futures.items()}
    for suite in loaded:
        report = reports[suite.suite.name]
        suite.drawings = {
            "drawn": report.drawn,
            "from_cache": report.from_cache,
            "from_store": report.from_store,
            "failed": len(report.failed),
            # Of those drawn now, the ones drawn on Dask (the manifest's `engines.render`).
            "on_cluster": report.on_cluster,
        }
        if not report.failed:
            continue
        if suite.entry.on_bad_item is BadItemPolicy.ERROR:
            first = report.failed[0]
            more = len(report.failed) - 1
            if more:
                first = replace(
                    first,
                    message=f"{first.message} (and {more} more items that could not be drawn; "
                    "every other render was drawn and kept)",
                )
            raise ItemError(first)
        failed = {problem.item_id for problem in report.failed}
        suite.items = [item for item in suite.items if item.item_id not in failed]
        suite.skipped.extend(report.failed)
    return {name: report.renders for name, report in reports.items()}


def blind_suites(ablations: list[str], renders: dict[str, Renders]) -> dict[str, Renders]:
    """Per suite, the blind renders of the items that show an image (none without the `blind`
    ablation): made here, once per distinct image, in the media cache where the run's other
    renders are, from which the processes that send requests read them."""
    if BLIND not in ablations:
        return {}
    twins = BlindImages()
    return {name: twins.renders(suite_renders) for name, suite_renders in renders.items()}
