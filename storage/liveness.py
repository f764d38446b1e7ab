"""Whether the process that wrote a record (a claim, a heartbeat) still lives, when that can be
told: only for a process on this machine; elsewhere only time (expiry, missed beats) can tell."""

from __future__ import annotations

import os
import socket


def writer_alive(host: object, pid: object) -> bool | None:
    """False if the writer ran on this machine and is gone; True if it runs; None if unknown."""
    if host != socket.gethostname() or not isinstance(pid, int):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process, alive
    return True
