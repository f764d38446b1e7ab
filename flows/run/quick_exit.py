"""Leaving the `roadeval` command without freeing a run's objects one by one.

A large run holds about a million objects (items, plans, records); freeing them when the run's
functions return, then again at interpreter teardown, costs seconds after the last line is
printed. The console script (`main`) keeps them alive to the end and leaves with `os._exit`
once stdio is flushed and the atexit handlers (logging, multiprocessing's children, finalizers)
have run. Only when nothing else needs the ordinary exit: no thread but the main one is still
running (a thread pool's workers are joined at teardown) and no library with its own shutdown
(Prefect, Ray, Dask) is loaded; otherwise the process exits as usual.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import ClassVar, NoReturn

# Libraries whose shutdown is more than atexit handlers (servers, non-daemon threads, clients
# told to close when the main thread ends): a process that loaded one exits the ordinary way.
OWN_SHUTDOWN = ("prefect", "ray", "dask", "distributed")


class _Kept:
    """Whether the quick exit is armed (only by the console script), and what it keeps alive."""

    armed: ClassVar[bool] = False
    objects: ClassVar[list[object]] = []


def arm() -> None:
    """Let `keep_until_exit` keep objects: the process will end with `leave`."""
    _Kept.armed = True


def armed() -> bool:
    """Whether this process is the `roadeval` command's own, to be ended by `leave`."""
    return _Kept.armed


def disarm() -> None:
    """Drop what was kept (the process goes on, e.g. the app was called in a test)."""
    _Kept.armed = False
    _Kept.objects.clear()


def keep_until_exit(obj: object) -> None:
    """Keep `obj` alive until the process exits, when the quick exit is armed (else nothing):
    freeing it would only cost time before `leave`."""
    if _Kept.armed:
        _Kept.objects.append(obj)


def can_leave_quickly() -> bool:
    """Whether `os._exit` after the atexit handlers skips nothing that must run: no other
    non-daemon thread alive, no library with its own shutdown loaded."""
    if any(name in sys.modules for name in OWN_SHUTDOWN):
        return False
    main = threading.main_thread()
    return not any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def leave(code: object) -> NoReturn:
    """End the process with exit code `code` (a SystemExit's): quickly when it can be done
    safely, else by raising SystemExit as usual."""
    if _Kept.armed:
        _stop_workers_server()
    if not _Kept.armed or not (code is None or isinstance(code, int)) or not can_leave_quickly():
        raise SystemExit(code)
    _flush()
    atexit._run_exitfuncs()
    _flush()
    os._exit(code or 0)


def _stop_workers_server() -> None:
    """The answer workers' server, if this process started one, is killed rather than left to
    notice this process gone and tear LiteLLM down, a second more, while it holds the command's
    output open (`roadeval run | tee run.log` ends with it)."""
    server = sys.modules.get("roadeval.tasks.shard.worker_server")
    if server is not None:
        server.cool_server()


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        # A closed or broken pipe: what was left to write cannot be written either way.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
