"""A run under Prefect: the `evaluate-panel` flow, with the run's stages as Prefect tasks.

Imported only when Prefect orchestrates (a configured API, `--prefect`, a deployment): importing
Prefect alone costs seconds. Deployments serve `evaluate_panel_flow`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from prefect import Task, flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture, as_completed
from prefect.utilities.annotations import quote

from roadeval.flows.orchestration import OrchestratorKind, Stage, StageFuture
from roadeval.flows.panel_file import Panel
from roadeval.flows.run_summary import RunSummary
from roadeval.flows.stages import STAGES

T = TypeVar("T")


def _as_task(stage: Stage[Any]) -> Task[Any, Any]:
    if stage.run_name is None:
        return task(name=stage.name, cache_policy=NO_CACHE)(stage.fn)
    return task(name=stage.name, cache_policy=NO_CACHE, task_run_name=stage.run_name)(stage.fn)


# One Prefect task per stage, made once (at import), as module-level tasks are.
TASKS: dict[str, Task[Any, Any]] = {stage.name: _as_task(stage) for stage in STAGES}


def _unwalked(args: Sequence[Any]) -> list[Any]:
    """Stage arguments that Prefect passes on without walking them: its input resolution visits
    every element of a collection or dataclass, which for a shard's plan is every message of
    every item (milliseconds per shard on the hot path). Stages never take futures."""
    return [quote(arg) for arg in args]


class PrefectOrchestrator:
    """Stages as Prefect task runs of the current flow run, on its thread-pool task runner."""

    kind = OrchestratorKind.PREFECT

    def _task(self, stage: Stage[T]) -> Task[Any, T]:
        try:
            return TASKS[stage.name]
        except KeyError:
            raise KeyError(f"stage {stage.name!r} has no Prefect task") from None

    def call(self, stage: Stage[T], *args: Any) -> T:
        return self._task(stage)(*_unwalked(args))

    def submit(self, stage: Stage[T], *args: Any) -> StageFuture[T]:
        return self._task(stage).submit(*_unwalked(args))

    def as_completed(self, submitted: Sequence[StageFuture[T]]) -> Iterator[StageFuture[T]]:
        pending: list[PrefectFuture[T]] = []
        for future in submitted:
            if not isinstance(future, PrefectFuture):
                raise TypeError(f"not a Prefect future: {future!r}")
            pending.append(future)
        yield from as_completed(pending)

    def close(self) -> None:
        """Prefect's task runner ends with the flow run."""


@flow(name="evaluate-panel", log_prints=False)
def evaluate_panel_flow(
    panel: Panel,
    store_uri: str | None = None,
    dry_run: bool = False,
    against: str | None = None,
    rescore: bool = False,
) -> RunSummary:
    """Load suites, answer every item with every model (cached by request key), score, land;
    a rerun of the panel's last finished run (or `against`) asks only what changed."""
    from roadeval.flows.run_start import run_panel

    return run_panel(
        panel, store_uri, PrefectOrchestrator(), dry_run=dry_run, against=against, rescore=rescore
    )
