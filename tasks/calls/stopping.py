"""Stopping a run: once asked (Ctrl-C, SIGTERM, a store that can no longer keep answers), no new
model request starts, and requests in flight get a short grace before they are cancelled.

One StopSignal per run and process, shared by its model clients; the run's other processes
learn of a stop from its listeners (`on_request`: the run's authority passes it on). The signal
handlers only set a flag and schedule the cancellation on the gateway loop, so they are safe
whatever the main thread is doing.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from roadeval.environment import seconds_from_env

_log = logging.getLogger(__name__)

DEFAULT_GRACE_S = 3.0


def grace_s() -> float:
    """How long requests in flight may finish after a stop: ROADEVAL_STOP_GRACE_S, else 3 s."""
    return seconds_from_env("ROADEVAL_STOP_GRACE_S", DEFAULT_GRACE_S)


@dataclass(frozen=True)
class StopReason:
    """Why the run stops, and the exit code the command ends with."""

    message: str
    exit_code: int
    # "interrupted" for a signal, "failed" for a fault that makes going on pointless,
    # "out_of_budget" when the next request could cross the run's budget.
    status: str
    # Let the requests in flight finish rather than cancel them after the grace: a budget stop
    # has already reserved what they can cost, and cancelling would lose answers being paid for.
    drain: bool = False


class StopSignal:
    """Set once; `requested` is what every caller checks before it starts a request."""

    def __init__(self, grace: float | None = None) -> None:
        self.grace_s = grace_s() if grace is None else grace
        self._requested = threading.Event()
        self._lock = threading.Lock()
        self.reason: StopReason | None = None
        self.aborted = False
        self._abort_scheduled = False
        self._in_flight: set[asyncio.Future[object]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listeners: list[Callable[[StopReason], None]] = []

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def request(self, reason: StopReason) -> None:
        """Stop starting requests; cancel those in flight after the grace. The first request
        is told to the listeners; a later one changes nothing (the same fault seen again, by
        another request or another process: those in flight keep their grace)."""
        self._request(reason, insist=False)

    def insist(self, reason: StopReason) -> None:
        """`request`, and if the run is stopping already, cancel the requests in flight at
        once (a second Ctrl-C, the run's own abort)."""
        self._request(reason, insist=True)

    def _request(self, reason: StopReason, *, insist: bool) -> None:
        with self._lock:
            again = self.reason is not None
            if not again:
                self.reason = reason
            self._requested.set()
            loop = self._loop
            listeners = [] if again else list(self._listeners)
        if loop is not None and not loop.is_closed():
            if not again:
                loop.call_soon_threadsafe(self._schedule_abort)
            elif insist:
                loop.call_soon_threadsafe(self._abort)
        for listener in listeners:
            try:
                listener(reason)
            except Exception:  # the stop holds here whatever a listener does
                _log.exception("a listener of the run's stop failed")

    def on_request(self, listener: Callable[[StopReason], None]) -> Callable[[], None]:
        """Call `listener(reason)` once, when the stop is first requested, in the thread that
        requests it (at once if it was already). Returns what removes it."""
        with self._lock:
            reason = self.reason
            if reason is None:
                self._listeners.append(listener)
        if reason is not None:
            listener(reason)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    @property
    def draining(self) -> bool:
        return self.reason is not None and self.reason.drain

    def track(self, call: asyncio.Future[object]) -> None:
        """Register a request in flight (on the gateway loop) so that an abort can cancel it."""
        with self._lock:
            self._loop = asyncio.get_running_loop()
        if self.aborted:
            call.cancel()
            return
        self._in_flight.add(call)
        call.add_done_callback(self._in_flight.discard)
        if self.requested:
            # The stop came before any request was tracked, so no abort was scheduled yet.
            self._schedule_abort()

    def _schedule_abort(self) -> None:
        if self.draining:
            return
        if not self._abort_scheduled:
            self._abort_scheduled = True
            asyncio.get_running_loop().call_later(self.grace_s, self._abort)

    def _abort(self) -> None:
        self.aborted = True
        for call in list(self._in_flight):
            call.cancel()

    @contextmanager
    def on_signals(self) -> Iterator[None]:
        """While inside, SIGINT and SIGTERM request a stop instead of killing the process.

        Signal handlers can only be set from the main thread; elsewhere (a worker running the
        flow) the process's own handling stays as it is.
        """
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        signals = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.getsignal(sig) for sig in signals}

        def handle(signum: int, _frame: object) -> None:
            name = signal.Signals(signum).name
            self.insist(StopReason(f"stopped by {name}", 128 + signum, "interrupted"))

        for sig in signals:
            signal.signal(sig, handle)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class InFlightAtStop:
    """How many requests were in flight when the stop was first requested (`at_stop`; None
    until then), as `count` tells at that moment."""

    def __init__(self, stop: StopSignal, count: Callable[[], int]) -> None:
        self.at_stop: int | None = None
        self._count = count
        stop.on_request(self._seen)

    def _seen(self, _reason: StopReason) -> None:
        self.at_stop = self._count()
