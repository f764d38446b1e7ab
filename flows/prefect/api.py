"""Prefect's temporary API server, started so that a terminal's Ctrl-C does not kill it.

With no PREFECT_API_URL, Prefect starts a temporary server as a child process in the command's
process group. Ctrl-C in a terminal signals the whole group, so the server died mid-run while the
run was stopping cleanly, and every state update after that hung in Prefect's client retries.
Started here instead, it runs in a process group of its own (out of reach of the terminal's
Ctrl-C) and is told to exit when the command dies, however it dies; Prefect's own exit hook
stops it when the command ends normally.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any
from unittest.mock import patch

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: the kernel sends SIGTERM when the parent dies.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _own_group_popen(popen: Callable[..., Any]) -> Callable[..., Any]:
    def start(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("process_group", 0)
        if sys.platform.startswith("linux"):
            kwargs.setdefault("preexec_fn", _die_with_parent)
        return popen(*args, **kwargs)

    return start


def start_temporary_prefect_api() -> None:
    """Start Prefect's temporary server now, in its own process group, unless the command uses
    a configured server (PREFECT_API_URL) or Prefect may not start one."""
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return
    # The instance Prefect's own client will find and reuse (one per port; None is "any").
    server = SubprocessASGIServer()
    if server.running:
        return
    # Prefect's server module starts the server with subprocess.Popen; only for this start does
    # that Popen put its child in a group of its own.
    with patch.object(subprocess, "Popen", _own_group_popen(subprocess.Popen)):
        server.start()
