"""The plan stage: the run's shards (every suite x every model that applies to it, in chunks),
each shard planned (its requests, their stored answers, what a rerun takes from its baseline),
and the plans landed before their first call."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import find_baseline
from roadeval.flows.panel.file import Panel
from roadeval.flows.stages.load import LoadedSuite
from roadeval.flows.stages.orchestration import Stage
from roadeval.storage.landing import Part, land
from roadeval.storage.store import Store
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.render.blind import BLIND
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.results.leaderboard import task_order
from roadeval.tasks.shard.plan import Shard, ShardPlan

if TYPE_CHECKING:
    import pyarrow as pa

    from roadeval.tasks.render.stage import Renders
    from roadeval.tasks.rerun.answers import ShardBaseline

# Item ids of a suite x model x sample x variant whose baseline outcomes a rerun may copy.
CopyCandidates = Callable[[str, str, int, str], frozenset[str]]


class BaselineForShards(Protocol):
    """The plan stage's one question to a rerun's baseline (`flows.rerun.baseline`): what a
    shard of this suite x model may take from it."""

    def for_shard(self, suite: str, model: str) -> ShardBaseline | None: ...


class EmptyRunError(ValueError):
    """A panel in which no model applies to any suite: nothing would run, which is a mistake."""


class NoJudgeError(ValueError):
    """A suite that scores with a judge, in a panel that names none."""


@dataclass(frozen=True)
class Applies:
    """A suite x model of the panel that applies: the items the model is asked (a baseline's:
    those of the tasks it has a rule for)."""

    suite: LoadedSuite
    spec: ModelSpec
    items: list[Item]

    def asked(self) -> list[Item]:
        """`items` less those the suite has dropped since the check (an input that could not be
        drawn, under `on_bad_item: skip`): pairs are checked before drawing, sharded after."""
        kept = {item.item_id for item in self.suite.items}
        return [item for item in self.items if item.item_id in kept]


def applicable(
    panel: Panel, loaded: list[LoadedSuite]
) -> tuple[list[Applies], list[dict[str, Any]]]:
    """The suite x model pairs that apply, and the items a baseline cannot answer (`skipped`);
    checked before anything is drawn: a panel in which nothing applies, or a judged suite
    without a judge, is refused here (EmptyRunError, NoJudgeError)."""
    pairs: list[Applies] = []
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
            pairs.append(Applies(suite, spec, items))
    applying = [pair for pair in pairs if pair.items]
    if not applying:
        raise EmptyRunError(_why_empty(panel, loaded))
    judged = sorted({pair.suite.suite.name for pair in applying if pair.suite.suite.uses_judge})
    if judged and panel.judge is None:
        raise NoJudgeError(
            f"panel {panel.name!r}: {', '.join(judged)} scores answers with a judge model, and "
            "the panel names none: add a `judge:` entry, e.g. `judge: {api_base: URL}` for the "
            "default judge (Qwen/Qwen3-VL-32B-Instruct on an OpenAI-compatible server), any other "
            "model spec, or `judge: {model: roadeval/midpoint-judge}` offline"
        )
    return pairs, skipped


def plan_shards(
    run_id: str,
    panel: Panel,
    pairs: list[Applies],
    clients: dict[str, ModelClient],
    *,
    rescore: bool = False,
    copied: CopyCandidates | None = None,
    shown: Mapping[str, Collection[str]] | None = None,
    counted: bool = False,
) -> list[Shard]:
    """Split each suite x model that applies (`applicable`) into chunks. On a rerun, the items
    whose baseline outcomes may be copied (`copied`) make one shard per suite x model x sample,
    whatever its size: copying costs a few store requests per shard, so a rerun's cost follows
    what changed, not the panel's size. With the panel's `blind` ablation, the items that show
    an image (`shown`, per suite: those with blind renders) are sharded again under variant
    'blind', after the released ones of their suite x model. `counted` (a dry run, which asks
    nothing): a shard stands for every sample of its items (`Shard.samples`), so the shards do
    not multiply with the samples."""
    shards: list[Shard] = []
    for pair in pairs:
        suite, spec, items = pair.suite, pair.spec, pair.asked()
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
    return shards


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


def plan_shard(
    shard: Shard, renders: Renders, store: Store, baseline: BaselineForShards | None = None
) -> ShardPlan:
    """Plan one shard: its requests, their stored answers, and on a rerun what it takes from
    the baseline run (read in bulk, once per suite x model)."""
    from roadeval.tasks.cache.responses import ResponseCache
    from roadeval.tasks.shard.plan import plan_shard as plan

    taken = baseline.for_shard(shard.suite.name, shard.client.spec.label) if baseline else None
    cache = ResponseCache(store, run_id=shard.run_id, counted=shard.counted)
    return plan(shard, renders, cache, taken)


# Prefect's task name and task-run name (a template over the stage's parameters).
PLAN_SHARD = Stage(
    "plan-shard",
    plan_shard,
    "plan/{shard.suite.name}/{shard.client.spec.label}/chunk {shard.index}",
)


def land_plan(store: Store, name: str, plans: list[ShardPlan], judge: ModelClient | None) -> None:
    """Plans as one landing (`name`), before their first call, partitioned by suite x model:
    each shard's own before the shard is asked (a dry run's, in batches: `run.dry_run`)."""
    from roadeval.tasks.shard.plan_table import plan_table

    now = datetime.now(UTC)
    tables: dict[tuple[str, str], list[pa.Table]] = {}
    for plan in plans:
        where = (plan.shard.suite.name, plan.shard.client.spec.label)
        tables.setdefault(where, []).append(plan_table(plan, judge, now))
    land_plan_tables(store, name, tables)


def land_plan_tables(
    store: Store, name: str, tables: dict[tuple[str, str], list[pa.Table]]
) -> None:
    """Plan rows (tables of them by suite x model) as one landing, a part per suite x model."""
    import pyarrow as pa

    land(
        store,
        name,
        [
            Part("plan", suite=suite, model=model, copied=pa.concat_tables(parts))
            for (suite, model), parts in tables.items()
        ],
    )
