"""The `roadeval` command's standard output, guarded for every command at once (`cli.main`).

Output that cannot be written, whatever the command was printing, ends it without a traceback
and with a non-zero exit: stdout closed (`roadeval show >&-`: Python then has no sys.stdout, and
rich would print into nothing, exit 0), a reader gone (`roadeval show | head -0`: EPIPE), a full
device (`> /dev/full`). As Python's note on SIGPIPE advises, the lost stream is then pointed at
/dev/null, so that the interpreter's last flush does not fail once more. A standard stream closed
at start keeps its number taken by /dev/null, so that no file the command opens (a store's part)
becomes its stdout or stderr, nor a child process's."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Any, TextIO

# The exit code of a command whose output was lost, when it would otherwise have exited 0.
OUTPUT_LOST_EXIT = 1


class OutputLost(Exception):
    """Standard output could not be written; the command stops here."""


class GuardedOutput:
    """sys.stdout for the command: writes go to the real stream, and a failure to write is an
    `OutputLost`, remembered; once lost, what is written is dropped."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self.reason: str | None = None
        # A reader that went away (EPIPE) is a pipe's ordinary end: nothing to say about it.
        self.quiet = False

    @property
    def lost(self) -> bool:
        return self.reason is not None

    def write(self, text: str) -> int:
        if self.lost:
            return len(text)
        if self._stream is None:
            raise self._lose("standard output is closed")
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._lose(exc.strerror or str(exc), exc.errno == errno.EPIPE) from exc

    def flush(self) -> None:
        if self.lost or self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._lose(exc.strerror or str(exc), exc.errno == errno.EPIPE) from exc

    def __getattr__(self, name: str) -> Any:
        # isatty, fileno, encoding...: the real stream's (none for a closed stdout).
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)

    def _lose(self, reason: str, quiet: bool = False) -> OutputLost:
        self.reason, self.quiet = reason, quiet
        if self._stream is not None:
            _to_null(self._stream)
        return OutputLost(reason)

    def exit_code(self, code: object) -> object:
        """The command's exit code, `code`, told that its output was lost (one line on
        stderr, unless its reader just went away) and made non-zero if it was 0."""
        if not self.lost:
            return code
        if not self.quiet and sys.stderr is not None:
            with contextlib.suppress(OSError):
                sys.stderr.write(f"error: the output could not be written: {self.reason}\n")
                sys.stderr.flush()
        return OUTPUT_LOST_EXIT if code in (None, 0) else code


def _to_null(stream: TextIO) -> None:
    """Point `stream`'s descriptor at /dev/null: what is still buffered flushes into nothing."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):
        return
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def guard_stdout() -> GuardedOutput:
    """Install the guard as sys.stdout (after taking the numbers of closed standard streams),
    and return it for the command's end (`GuardedOutput.exit_code`)."""
    for fd in (0, 1, 2):
        _hold_if_closed(fd)
    guarded = GuardedOutput(sys.stdout)
    sys.stdout = guarded
    return guarded


def _hold_if_closed(fd: int) -> None:
    try:
        os.fstat(fd)
    except OSError:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
