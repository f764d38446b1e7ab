"""Waiting for a run's submitted stages: each result as it comes, and the first failure, which
stops the run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from roadeval.flows.stages.orchestration import Orchestrator, StageFuture
from roadeval.storage.records import RunStatus
from roadeval.storage.store import StoreError
from roadeval.tasks.calls.stopping import StopReason, StopSignal

T = TypeVar("T")


def collect(
    orchestrator: Orchestrator,
    futures: list[StageFuture[T]],
    stop: StopSignal,
    on_done: Callable[[T], None],
) -> tuple[list[T], BaseException | None]:
    """Wait for every shard. A failed shard stops the run (the others end quickly and land what
    they have); its error is returned."""
    failure: BaseException | None = None
    done: dict[int, T] = {}
    order = {id(future): n for n, future in enumerate(futures)}
    for future in orchestrator.as_completed(futures):
        try:
            result = future.result()
        except Exception as exc:
            if failure is None:
                failure = exc
                stop.request(failed(exc))
            continue
        done[order[id(future)]] = result
        on_done(result)
    # Results in plan order, so reports and manifests do not depend on timing.
    return [done[n] for n in sorted(done)], failure


def failed(exc: BaseException) -> StopReason:
    """The stop a failed shard asks for: a store that failed is named as the store's failure."""
    message = str(exc) if isinstance(exc, StoreError) else f"a shard failed: {exc}"
    return StopReason(message, 1, RunStatus.FAILED)
