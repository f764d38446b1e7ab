"""LiteLLM, imported at its first use and set up once per process.

Its import takes seconds of one core; a process that sends nothing (a rerun's driver that copies
every answer, or whose few calls go to an answer worker) never pays for it.
"""

from __future__ import annotations

import threading
from typing import Any


class _Setup:
    lock = threading.Lock()
    done = False


def ready_litellm() -> Any:
    """The `litellm` module, imported and set up (the built-in baselines' provider registered,
    its debug banner off) the first time any caller in the process needs it."""
    import litellm

    if not _Setup.done:
        with _Setup.lock:
            if not _Setup.done:
                from roadeval.tasks.calls import baseline_provider

                baseline_provider.install()
                litellm.suppress_debug_info = True
                _Setup.done = True
    return litellm
