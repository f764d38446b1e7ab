"""Planning a run's shards: every suite x every model that applies to it, in chunks."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import find_baseline
from roadeval.flows.panel_file import Panel
from roadeval.flows.suites import LoadedSuite
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.render.blind import BLIND
from roadeval.tasks.results.leaderboard import task_order
from roadeval.tasks.shard.plan import Shard

# Item ids of a suite x model x sample x variant whose baseline outcomes a rerun may copy.
CopyCandidates = Callable[[str, str, int, str], frozenset[str]]


class EmptyRunError(ValueError):
    """A panel in which no model applies to any suite: nothing would run, which is a mistake."""


class NoJudgeError(ValueError):
    """A suite that scores with a judge, in a panel that names none."""


def plan_shards(
    run_id: str,
    panel: Panel,
    loaded: list[LoadedSuite],
    clients: dict[str, ModelClient],
    *,
    rescore: bool = False,
    copied: CopyCandidates | None = None,
    shown: Mapping[str, Collection[str]] | None = None,
    counted: bool = False,
) -> tuple[list[Shard], list[dict[str, Any]]]:
    """Split suite x model into chunks; a baseline gets only the tasks it has an answer for.
    On a rerun, the items whose baseline outcomes may be copied (`copied`) make one shard per
    suite x model x sample, whatever its size: copying costs a few store requests per shard,
    so a rerun's cost follows what changed, not the panel's size. With the panel's `blind`
    ablation, the items that show an image (`shown`, per suite: those with blind renders) are
    sharded again under variant 'blind', after the released ones of their suite x model.
    `counted` (a dry run, which asks nothing): a shard stands for every sample of its items
    (`Shard.samples`), so the shards do not multiply with the samples."""
    shards: list[Shard] = []
    skipped: list[dict[str, Any]] = []
    for suite in loaded:
        for spec in panel.models:
            if spec.suites is not None and suite.suite.name not in spec.suites:
                continue
            items = suite.items
            if spec.is_baseline:
                items = [
                    item
                    for item in items
                    if find_baseline(spec.baseline_name, suite.suite.name, item.task) is not None
                ]
                if len(items) < len(suite.items):
                    asked = {item.task for item in items}
                    skipped.append(
                        {
                            "suite": suite.suite.name,
                            "model": spec.label,
                            "items_not_covered": len(suite.items) - len(items),
                            "why": "the baseline has no rule for those tasks",
                            "tasks": sorted({i.task for i in suite.items} - asked, key=task_order),
                        }
                    )
            variants = [("", items)]
            if shown is not None and BLIND in panel.ablations:
                with_images = shown.get(suite.suite.name, ())
                variants.append((BLIND, [item for item in items if item.item_id in with_images]))
            # A dry run's shard counts every sample (from 1); a run's asks one sample each.
            samples, each = (1, spec.samples) if counted else (spec.samples, 1)
            for variant, chosen in variants:
                for sample in range(1, samples + 1):
                    # Copies get a shard of their own for answering's sake; a dry run answers
                    # nothing (its plan still finds each sample's outcome to copy).
                    taken = (
                        copied(suite.suite.name, spec.label, sample, variant)
                        if copied and not counted
                        else frozenset()
                    )
                    for chunk, copies in _chunks(chosen, taken, panel.chunk_size):
                        shards.append(
                            Shard(
                                run_id=run_id,
                                index=len(shards),
                                suite=suite.suite,
                                client=clients[spec.label],
                                items=chunk,
                                rescore=rescore,
                                sample=sample,
                                copies=copies,
                                variant=variant,
                                samples=each,
                                counted=counted,
                            )
                        )
    if not shards:
        raise EmptyRunError(_why_empty(panel, loaded))
    judged = sorted({shard.suite.name for shard in shards if shard.suite.uses_judge})
    if judged and panel.judge is None:
        raise NoJudgeError(
            f"panel {panel.name!r}: {', '.join(judged)} scores answers with a judge model, and "
            "the panel names none: add a `judge:` entry, e.g. `judge: {api_base: URL}` for the "
            "default judge (Qwen/Qwen3-VL-32B-Instruct on an OpenAI-compatible server), any other "
            "model spec, or `judge: {model: roadeval/midpoint-judge}` offline"
        )
    return shards, skipped


def _chunks(items: list[Item], taken: frozenset[str], size: int) -> list[tuple[list[Item], bool]]:
    """Items in chunks of `size`, each with whether it is the chunk of copies (the items in
    `taken`, one chunk first, whatever its size)."""
    rest = [item for item in items if item.item_id not in taken]
    chunks = [(rest[start : start + size], False) for start in range(0, len(rest), size)]
    if len(rest) < len(items):
        chunks.insert(0, ([item for item in items if item.item_id in taken], True))
    return chunks


def _why_empty(panel: Panel, loaded: list[LoadedSuite]) -> str:
    names = [s.suite.name for s in loaded]
    reasons = []
    for spec in panel.models:
        if spec.suites is not None and not set(spec.suites) & set(names):
            reasons.append(f"{spec.label} is limited to suites {', '.join(spec.suites)}")
        elif spec.is_baseline:
            reasons.append(f"{spec.label} is a baseline with no rule for their tasks")
    return (
        f"panel {panel.name!r}: no model applies to any of its suites ({', '.join(names)}): "
        + "; ".join(reasons)
    )
