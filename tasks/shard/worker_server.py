"""The answer workers' server: the process they are forked from, which imports LiteLLM once.

The `roadeval` command starts it first of all, so LiteLLM imports on a spare core while the
command reads its panel, loads, compares and copies. Light on purpose (the standard library
alone): importing the shard code to start it would delay it by the half second that import takes.
Every start of it goes through `start_server`, so that it imports what this process would.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from typing import ClassVar

# What the workers' server imports before it forks any: LiteLLM (seconds), then the shard code,
# with the collector paused (see the module).
PRELOAD = ["roadeval.tasks.shard.worker_preload"]


class _Server:
    """Whether this process started the workers' server ahead of its run (`warm_server`)."""

    warmed: ClassVar[bool] = False


def warm_server() -> bool:
    """Start the answer workers' server now, when the machine has a core to spare: it imports
    LiteLLM there while this process goes on. Returns whether it was started."""
    if (os.cpu_count() or 1) < 2:
        return False
    start_server(PRELOAD)
    _Server.warmed = True
    return True


def start_server(preload: Sequence[str] | None = None) -> None:
    """Start this process's forkserver, unless it runs, importing `preload` first (None: as
    last set). Its imports find what this process's would, not the current directory's."""
    from multiprocessing import forkserver

    if preload is not None:
        multiprocessing.get_context("forkserver").set_forkserver_preload(list(preload))
    with _current_directory_off_path():
        forkserver.ensure_running()


@contextlib.contextmanager
def _current_directory_off_path() -> Iterator[None]:
    # Python 3.11 starts the forkserver as `python -c`, which puts the current directory first
    # on its sys.path, and ignores the sys.path it is handed (CPython gh-117378, fixed in 3.12.8
    # and 3.13.1): its preload then imported a `roadeval/` checkout or a `litellm.py` found
    # there, not what this process runs. PYTHONSAFEPATH keeps that directory off its path.
    if os.environ.get("PYTHONSAFEPATH"):
        yield
        return
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        os.environ.pop("PYTHONSAFEPATH", None)


def cool_server() -> None:
    """Stop the server `warm_server` started (else do nothing): one the run will not use (a bad
    panel, or one answered in this process alone), or once the command is done. Killed, as it
    may be seconds into its imports, then reaped by `ForkServer._stop`, the standard library's
    own unpublished way; where that is missing, the server is left to end with this process, as
    it would anyway. A server started later (a report's figure helpers) imports nothing ahead."""
    if not _Server.warmed:
        return
    from multiprocessing import forkserver

    server = forkserver._forkserver
    pid = getattr(server, "_forkserver_pid", None)
    stop = getattr(server, "_stop", None)
    if pid is not None and stop is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        stop()
    multiprocessing.get_context("forkserver").set_forkserver_preload([])
    _Server.warmed = False


def server_warmed() -> bool:
    """Whether calls are cheaper in a worker than here: its server was started ahead (LiteLLM
    imported, or importing, on another core) and this process has not imported LiteLLM."""
    return _Server.warmed and "litellm" not in sys.modules
