"""Process defaults that keep roadeval offline (no price-map fetch, no telemetry) and its memory
in check.

Imported first by the package so the settings are in place before LiteLLM, Prefect, Ray or Arrow
load.
Users can still override any of them in their own environment.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

OFFLINE_DEFAULTS: dict[str, str] = {
    # LiteLLM fetches its price map from the internet at import unless told otherwise.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_TELEMETRY": "False",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    # A fresh PREFECT_HOME runs migrations (~30 s) on its first ephemeral start; 20 s is too short.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    # ...but a flow run's and a task run's own lines at INFO: they are what the Prefect UI's
    # Logs tab shows (the CLI keeps them off its terminal, `flows.run.log`).
    "PREFECT_LOGGING_LOGGERS_PREFECT_FLOW_RUNS_LEVEL": "INFO",
    "PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL": "INFO",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
}


def number_from_env(name: str, default: float, unit: str) -> float:
    """A numeric setting: the variable `name` if set (in `unit`s), else `default`."""
    configured = os.environ.get(name)
    if not configured:
        return default
    try:
        return float(configured)
    except ValueError:
        raise ValueError(f"{name}={configured!r} is not a number of {unit}") from None


def seconds_from_env(name: str, default: float) -> float:
    """A duration setting: the variable `name` if set (seconds), else `default`."""
    return number_from_env(name, default, "seconds")


# Arrow's buffers from the C library's allocator, not Arrow's default (mimalloc), which keeps
# what is freed: a run lands its rows a shard at a time, and mimalloc held on to some 200 MiB of
# those long-freed tables in a run of 20,000 items, and more the longer the run (malloc returns
# large blocks at once). An environment variable, not `pyarrow.set_memory_pool`: that one is
# pyarrow's own default, and Parquet's reader and writer allocate from Arrow's.
MEMORY_DEFAULTS: dict[str, str] = {"ARROW_DEFAULT_MEMORY_POOL": "system"}


def apply_process_defaults() -> None:
    """Set each default (offline, memory) unless the user already chose a value. Called on the
    package's import, before Arrow's first allocation: Arrow reads its allocator's name once."""
    for key, value in {**OFFLINE_DEFAULTS, **MEMORY_DEFAULTS}.items():
        os.environ.setdefault(key, value)


# A run holds hundreds of thousands of long-lived objects (items, plans, records); at CPython's
# default thresholds (a young collection every 700 allocations, older ones in proportion) the
# collector rescans them over and over: a fifth of a 10,000-item x 5-model rerun's time.
RUN_GC_THRESHOLDS = (100_000, 50, 100)


def tune_collector_for_run() -> None:
    """Collect garbage less often in a process that runs a panel (its driver, its answer
    workers): young collections every 100,000 allocations instead of 700."""
    gc.set_threshold(*RUN_GC_THRESHOLDS)


@contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside: a large import (LiteLLM, matplotlib) builds hundreds of
    thousands of objects, which the collector would rescan again and again (a quarter of
    LiteLLM's import time). With `freeze`, what exists on leaving is kept out of its reach for
    good (`gc.freeze`): for a process that forks (Python's recipe: its children then neither
    rescan those objects nor write to their pages) or that lives on what it imported."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()
