"""Heavy imports started early, in a background thread, while the command reads its panel and
loads its suites: LiteLLM alone takes seconds to import, and a run needs it only at its first
model call."""

from __future__ import annotations

import threading
import warnings
from importlib import import_module
from typing import Literal

# The gateway's import brings LiteLLM; the shard code brings the rest of the call path.
RUN_MODULES = ("roadeval.tasks.calls.gateway", "roadeval.tasks.shard.stages")


# Filters the background imports set on import. The filter list is process-wide, and a
# `catch_warnings` in the main thread (subprocess, scipy) that ends while the thread imports
# throws away what the thread added: requests' own silencing of urllib3's PySocks notice was lost
# that way, and the notice reached the terminal. Set before the thread starts, they survive.
IMPORT_TIME_FILTERS: tuple[tuple[Literal["ignore"], str], ...] = (
    # requests/__init__: warnings.simplefilter("ignore", urllib3.exceptions.DependencyWarning)
    ("ignore", "urllib3.contrib.socks"),
)


def _import_all(modules: tuple[str, ...]) -> None:
    for module in modules:
        try:
            import_module(module)
        except Exception:
            # Not swallowed: the run imports the same module where it uses it, and that
            # import raises the same error in the main thread, where it is reported.
            return


def import_in_background(modules: tuple[str, ...] = RUN_MODULES) -> threading.Thread:
    """Start importing `modules` in a daemon thread; the main thread's own imports of them
    wait for this one (Python's per-module import locks) instead of starting over."""
    for action, module in IMPORT_TIME_FILTERS:
        warnings.filterwarnings(action, module=module)
    thread = threading.Thread(
        target=_import_all, args=(modules,), name="roadeval-warmup", daemon=True
    )
    thread.start()
    return thread
