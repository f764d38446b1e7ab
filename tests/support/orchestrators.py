"""Which orchestrator a test's runs use, named by the test rather than left to test order.

A run is orchestrated by Prefect when PREFECT_API_URL is set (or a Prefect profile sets it, or
`--prefect` asks), else inline (`roadeval.flows.stages.orchestration.choose`). A test that runs a
panel names one: the `under_prefect` fixture (the session's Prefect server, for that test only) or
the `inline` fixture (no Prefect API, whatever the developer's shell or profile says), or a
fixture of wider scope wraps its own run in `prefect_api(...)` or `no_prefect_api(...)`.

`watch_choices` makes every in-process choice of an orchestrator check that one was named and
that the run chose it; `check_cli_run` does the same for a `roadeval` command started as a
process. What they find is also kept, so that a failure a CLI runner swallowed (into an exit code)
still fails the test, with this message, when it ends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from roadeval.flows.stages import orchestration
from roadeval.flows.stages.orchestration import OrchestratorKind

_ORIGINAL_CHOOSE: Callable[..., OrchestratorKind] = orchestration.choose

# The `roadeval` commands that run a panel.
RUN_COMMANDS = frozenset({"run", "campaign", "demo"})

HOW_TO_NAME = (
    "request the `under_prefect` or the `inline` fixture (or, in a fixture of wider scope, wrap "
    "the run in support.orchestrators.prefect_api(...) or no_prefect_api(...))"
)

# The orchestrators named by the fixtures and blocks now open, innermost last.
_named: list[OrchestratorKind] = []
# What went wrong since the last `take_problems()`.
_problems: list[str] = []


def named() -> OrchestratorKind | None:
    return _named[-1] if _named else None


def take_problems() -> list[str]:
    found = list(_problems)
    _problems.clear()
    return found


def _fail(message: str) -> None:
    _problems.append(message)
    raise AssertionError(message)


def _check(chosen: OrchestratorKind, what: str) -> None:
    expected = named()
    if expected is None:
        _fail(f"{what} ran on {chosen} without the test naming its orchestrator: {HOW_TO_NAME}")
    elif chosen is not expected:
        _fail(f"{what} ran on {chosen}, but the test named {expected}")


@contextmanager
def _env(updates: Mapping[str, str | None]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in updates}
    for key, value in updates.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextmanager
def prefect_api(api_url: str) -> Iterator[None]:
    """Runs in this block report to the Prefect API at `api_url`: in this process (Prefect's
    settings, its root ones too, which the threads Prefect starts read) and in the CLI processes
    started meanwhile (PREFECT_API_URL). Everything is as before once the block ends."""
    import prefect.context
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import PREFECT_API_URL, temporary_settings

    _named.append(OrchestratorKind.PREFECT)
    try:
        with _env({"PREFECT_API_URL": api_url}):
            prefect.context.refresh_global_settings_context()
            with temporary_settings(updates={PREFECT_API_URL: api_url}):
                try:
                    yield
                finally:
                    # The block's flow-run log lines are sent while its API is there (the
                    # session's server stops before the interpreter's exit would send them).
                    APILogWorker.drain_all(timeout=5)
    finally:
        _named.pop()
        # The environment is restored by now: so are Prefect's root settings.
        prefect.context.refresh_global_settings_context()


@contextmanager
def prefect_settings(updates: Mapping[str, str]) -> Iterator[None]:
    """Prefect settings (by their environment names) in this block: for this process, in its
    current settings and its root ones (which Prefect's own threads read), and for the CLI
    processes started meanwhile."""
    import prefect.context
    import prefect.settings
    from prefect.settings import temporary_settings

    try:
        with _env(updates):
            prefect.context.refresh_global_settings_context()
            settings = {getattr(prefect.settings, name): value for name, value in updates.items()}
            with temporary_settings(updates=settings):
                yield
    finally:
        prefect.context.refresh_global_settings_context()


@contextmanager
def no_prefect_api(missing_profiles: Path) -> Iterator[None]:
    """Runs in this block are inline: no PREFECT_API_URL, and a Prefect profiles file that does
    not exist (`missing_profiles`), so that no profile of the developer's configures an API."""
    assert not missing_profiles.exists(), missing_profiles
    with _env({"PREFECT_API_URL": None, "PREFECT_PROFILES_PATH": str(missing_profiles)}):
        chosen = _ORIGINAL_CHOOSE()
        assert chosen is OrchestratorKind.INLINE, f"inline named, but a run would be on {chosen}"
        _named.append(OrchestratorKind.INLINE)
        try:
            yield
        finally:
            _named.pop()


def _watching_choose(prefect: bool = False) -> OrchestratorKind:
    chosen = _ORIGINAL_CHOOSE(prefect)
    _check(chosen, "a run in this process")
    return chosen


@contextmanager
def watch_choices() -> Iterator[None]:
    """While open, `choose` (in `roadeval.flows.stages.orchestration` and wherever roadeval
    imported it by name, e.g. `roadeval.flows.evaluate`) checks that the test named the
    orchestrator chosen.
    Modules imported later take the checking `choose` by themselves."""
    patched: list[Any] = []
    for name, module in list(sys.modules.items()):
        if name.startswith("roadeval.") and getattr(module, "choose", None) is _ORIGINAL_CHOOSE:
            module.choose = _watching_choose
            patched.append(module)
    try:
        yield
    finally:
        for module in patched:
            module.choose = _ORIGINAL_CHOOSE


def check_cli_run(args: Sequence[str], env: Mapping[str, str]) -> None:
    """A `roadeval ARGS` process about to start with `env`: a run must be on the orchestrator
    its test named (Prefect: `--prefect`, or PREFECT_API_URL in its environment)."""
    if not args or args[0] not in RUN_COMMANDS:
        return
    prefect = "--prefect" in args or bool(env.get("PREFECT_API_URL"))
    chosen = OrchestratorKind.PREFECT if prefect else OrchestratorKind.INLINE
    _check(chosen, f"`roadeval {args[0]}` started as a process")
