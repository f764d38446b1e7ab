"""Who runs a run's stages: Prefect (the `evaluate-panel` flow and its tasks) when a Prefect API
is configured or the user asks for it, else this process's own threads, without importing Prefect.

The run's logic is written once against `Orchestrator`; only who runs each stage differs. Prefect's
temporary server alone costs 9-12 s to start, so it is not started for a run that nobody watches
in a Prefect UI.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

Logger = logging.Logger | logging.LoggerAdapter[Any]


class OrchestratorKind(StrEnum):
    PREFECT = "prefect"
    INLINE = "inline"


@dataclass(frozen=True)
class Stage(Generic[T]):
    """A stage of a run: a plain function, and the names Prefect gives its task runs."""

    name: str
    fn: Callable[..., T]
    # A Prefect task-run name template over the function's parameters, e.g. "plan/{shard.index}".
    run_name: str | None = None
    # Why a result of the stage was cut short by the run's stop (None: it ran whole), for
    # Prefect to end its task run Cancelled rather than Completed; None: never cut short.
    cut_off: Callable[[T], str | None] | None = None


@dataclass(frozen=True)
class FlowRunRef:
    """The Prefect flow run a run is, and the deployment that started it (None: by hand)."""

    id: str
    deployment: str | None = None


@dataclass(frozen=True)
class Announcement:
    """An event for the orchestrator's event stream (Prefect's events, which its automations
    act on): its name, the resource it is about, the resources related to it (each with its
    `prefect.resource.role`) and a payload; labels are strings, as Prefect's are."""

    event: str
    resource: dict[str, str]
    related: list[dict[str, str]]
    payload: dict[str, Any]


class StageFuture(Protocol[T_co]):
    """A submitted stage: a Prefect future or a concurrent.futures one."""

    def result(self) -> T_co: ...


class Orchestrator(Protocol):
    """Runs stages: now (`call`) or in the background (`submit`, then `as_completed`)."""

    kind: OrchestratorKind
    # The flow run the stages belong to (None: inline), recorded in the manifest.
    flow_run: FlowRunRef | None

    def call(self, stage: Stage[T], *args: Any) -> T: ...

    def submit(self, stage: Stage[T], *args: Any) -> StageFuture[T]: ...

    def as_completed(self, submitted: Sequence[StageFuture[T]]) -> Iterator[StageFuture[T]]: ...

    def name_run(self, panel: str, run_id: str) -> None:
        """Name what the orchestrator shows of the run (Prefect: its flow run) after its panel
        and run id, once the run has its id."""
        ...

    def run_logger(self) -> Logger | None:
        """Where the run's own lines go when the orchestrator has a log of them (Prefect's flow
        run logger); None: the run's own logger (`flows.run.log`)."""
        ...

    def announce(self, announcement: Announcement) -> bool:
        """Send `announcement` to the orchestrator's events (raises when that fails); False
        when it has none (inline: nothing is sent, and that is no error)."""
        ...

    def close(self) -> None: ...


# Shards answered at once in an inline run (Prefect's setting, if set, wins): enough to keep
# every model of a large panel busy (shards are submitted round-robin over suite x model), few
# enough that a run of 20 models x 10,000 items does not hold every item's coroutine at once.
STAGE_THREADS = 64


def _max_workers() -> int:
    for name in (
        "PREFECT_TASKS_RUNNER_THREAD_POOL_MAX_WORKERS",
        "PREFECT_TASK_RUNNER_THREAD_POOL_MAX_WORKERS",
    ):
        configured = os.environ.get(name)
        if configured:
            try:
                return max(1, int(configured))
            except ValueError:
                raise ValueError(f"{name}={configured!r} is not a whole number") from None
    return STAGE_THREADS


class InlineOrchestrator:
    """Stages run in this process: `call` in the caller's thread, `submit` on a thread pool."""

    kind = OrchestratorKind.INLINE
    flow_run: FlowRunRef | None = None

    def __init__(self, max_workers: int | None = None) -> None:
        self._pool = futures.ThreadPoolExecutor(
            max_workers or _max_workers(), thread_name_prefix="roadeval-stage"
        )

    def call(self, stage: Stage[T], *args: Any) -> T:
        return stage.fn(*args)

    def submit(self, stage: Stage[T], *args: Any) -> StageFuture[T]:
        return self._pool.submit(stage.fn, *args)

    def as_completed(self, submitted: Sequence[StageFuture[T]]) -> Iterator[StageFuture[T]]:
        pending: list[futures.Future[T]] = []
        for future in submitted:
            if not isinstance(future, futures.Future):
                raise TypeError(f"not a future of this orchestrator: {future!r}")
            pending.append(future)
        yield from futures.as_completed(pending)

    def name_run(self, panel: str, run_id: str) -> None:
        """An inline run shows nowhere but in the store, named by its id already."""

    def run_logger(self) -> Logger | None:
        return None

    def announce(self, announcement: Announcement) -> bool:
        # No Prefect API: there is no event stream to send to.
        return False

    def close(self) -> None:
        # Every stage submitted has been waited for by the run; nothing is left to cancel.
        self._pool.shutdown(wait=True)


def _profile_api_url() -> str | None:
    """PREFECT_API_URL from the active Prefect profile (profiles.toml), read without Prefect."""
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser()
    try:
        profiles = tomllib.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"Prefect profiles file {path} cannot be read: {exc}") from None
    active = os.environ.get("PREFECT_PROFILE") or profiles.get("active") or "ephemeral"
    settings = profiles.get("profiles", {}).get(active, {})
    value = settings.get("PREFECT_API_URL") if isinstance(settings, dict) else None
    return str(value) if value else None


def configured_api_url() -> str | None:
    """The Prefect API the run should report to: PREFECT_API_URL in the environment or in the
    active Prefect profile (a server, or a deployment's worker, which sets it); None: none."""
    return os.environ.get("PREFECT_API_URL") or _profile_api_url()


def prefect_api_configured() -> bool:
    """Whether a Prefect API is configured (`configured_api_url`)."""
    return bool(configured_api_url())


def choose(prefect: bool = False) -> OrchestratorKind:
    """Prefect when asked (`--prefect`) or configured; inline otherwise."""
    if prefect or prefect_api_configured():
        return OrchestratorKind.PREFECT
    return OrchestratorKind.INLINE
