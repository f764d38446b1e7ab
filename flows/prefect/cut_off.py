"""A stage the run's stop cut short ends its Prefect task run Cancelled, not Completed, while
the run still gets the stage's result (what it landed, what it left): a cancelled flow run's
cut-off shards read as such in the UI, and the run counts them as it does inline.

The stage's function returns its result; the task returns a Cancelled state carrying that
result when the stage's `cut_off` says why it was cut short. The run waits on `StageResult`s,
which give that result back where Prefect's own `result()` would raise `CancelledRun`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, cast

from prefect.client.schemas.objects import State
from prefect.futures import PrefectFuture, as_completed
from prefect.states import Cancelled

from roadeval.flows.stages.orchestration import Stage, StageFuture

T = TypeVar("T")


def cancelled_when_cut_off(stage: Stage[T]) -> Callable[..., Any]:
    """The stage's function as a task's: its result, or a Cancelled state holding the result
    when `stage.cut_off` says the run's stop cut it short. The signature is the stage's, so
    that Prefect names its runs from the same parameters."""
    why_cut = stage.cut_off
    if why_cut is None:
        return stage.fn

    @functools.wraps(stage.fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        result = stage.fn(*args, **kwargs)
        why = why_cut(result)
        return result if why is None else Cancelled(message=why, data=result)

    return run


class StageResult(Generic[T]):
    """A submitted stage as the run waits on it: the stage's result whether its task run
    Completed or was Cancelled by `cancelled_when_cut_off`; a failure raises as Prefect's
    future raises it."""

    def __init__(self, future: PrefectFuture[T]) -> None:
        self.future = future

    def result(self) -> T:
        self.future.wait()
        return stage_value(self.future.state)


def stage_value(state: State[T]) -> T:
    """A stage's result from its task run's final state: a Cancelled one made by
    `cancelled_when_cut_off` holds it; a Failed one raises the stage's error."""
    if state.is_cancelled() and state.data is not None:
        # The stage ran and returned: its result is in the state, not an error.
        return cast(T, state.result(raise_on_failure=False))
    return state.result()


def completed(submitted: Sequence[StageFuture[T]]) -> Iterator[StageResult[T]]:
    """`submitted` (StageResults) in the order their task runs end."""
    by_future: dict[int, StageResult[T]] = {}
    for stage in submitted:
        if not isinstance(stage, StageResult):
            raise TypeError(f"not a stage submitted to Prefect: {stage!r}")
        by_future[id(stage.future)] = stage
    for future in as_completed([stage.future for stage in by_future.values()]):
        yield by_future[id(future)]
