"""Store operations made from the gateway loop, where every model call of the process runs.

A remote store's operations wait on the network, so they run in a thread (the store's own, as
many as it has connections: `Store.executor`); a local folder's run on the loop itself
(`Store.runs_inline`). Either way a store that fails stops the whole run at
once: answers that cannot be kept must not be bought.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from roadeval.storage.store import Store, StoreError, describe_store_error
from roadeval.tasks.calls.stopping import StopReason, StopSignal

T = TypeVar("T")


async def call_store(store: Store, stop: StopSignal, fn: Callable[..., T], *args: object) -> T:
    """`fn(*args)`, an operation on `store`; a failure requests the run's stop and is raised
    as a StoreError naming the store."""
    try:
        if store.runs_inline:
            return fn(*args)
        executor = store.executor()
        if executor is None:
            return await asyncio.to_thread(fn, *args)
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)
    except Exception as exc:
        raise store_failed(store, stop, exc) from exc


def store_failed(store: Store, stop: StopSignal, exc: Exception) -> StoreError:
    """The StoreError naming `store` for `exc`, once the run's stop is requested: at the
    failure, so that no request starts after it (the caller raises it)."""
    error = exc if isinstance(exc, StoreError) else None
    error = error or StoreError(describe_store_error(store.uri, exc))
    stop.request(StopReason(str(error), 1, "failed"))
    return error
