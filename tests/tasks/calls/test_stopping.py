"""A run's stop: its first request is what counts (told to its listeners once); the same stop
requested again (a fault seen twice) leaves requests in flight their grace; a person insisting
cancels them at once."""

from __future__ import annotations

import asyncio

from roadeval.tasks.calls.stopping import InFlightAtStop, StopReason, StopSignal

FULL = StopReason("store x: No space left on device", 1, "failed")
AGAIN = StopReason("a shard failed: store x: No space left on device", 1, "failed")
CTRL_C = StopReason("stopped by SIGINT", 130, "interrupted")


async def _in_flight_after(stop: StopSignal, *then: tuple[str, StopReason]) -> bool:
    """Whether a request in flight is still so after `then` (each: 'request' or 'insist')."""
    call: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    stop.track(call)
    for how, reason in then:
        getattr(stop, how)(reason)
    for _ in range(3):  # the abort, when there is one, is scheduled on this loop
        await asyncio.sleep(0)
    cancelled = call.cancelled()
    call.cancel()
    return not cancelled


def test_the_same_fault_reported_again_leaves_requests_in_flight_their_grace() -> None:
    stop = StopSignal(grace=30)
    assert asyncio.run(_in_flight_after(stop, ("request", FULL), ("request", AGAIN)))
    assert stop.reason == FULL and not stop.aborted


def test_insisting_cancels_requests_in_flight_at_once() -> None:
    stop = StopSignal(grace=30)
    assert not asyncio.run(_in_flight_after(stop, ("request", FULL), ("insist", CTRL_C)))
    assert stop.reason == FULL and stop.aborted


def test_listeners_hear_the_first_stop_once() -> None:
    stop = StopSignal()
    heard: list[StopReason] = []
    removed: list[StopReason] = []
    stop.on_request(heard.append)
    stop.on_request(removed.append)()
    counted = InFlightAtStop(stop, lambda: 3)
    assert counted.at_stop is None
    stop.request(FULL)
    stop.request(AGAIN)
    assert heard == [FULL] and removed == [] and counted.at_stop == 3
    late: list[StopReason] = []
    stop.on_request(late.append)  # a listener added once stopped hears it at once
    assert late == [FULL]
