"""The run's one authority over each model's limits and over the budget, for callers in other
processes (the judge's Ray actor, answer workers): a small JSON-lines server on the driver's
gateway loop that admits and settles their requests through the driver's own gates. So a model's
limits, the run's budget and the count of a model's refused keys hold exactly however many
processes call it, and a stop reaches every one of them: a stop requested in any of them (its
store failed) is told to the authority at once, which then admits no request from anyone.

Only processes holding the run's token may speak to it; it binds 127.0.0.1 unless told to bind
an address other machines of a cluster can reach.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from roadeval.tasks.calls.admission import (
    Cost,
    Gate,
    Pass,
)
from roadeval.tasks.calls.limits import OverLimit
from roadeval.tasks.calls.reachability import AuthFailed, Unreachable
from roadeval.tasks.calls.stats import CallStats
from roadeval.tasks.calls.stopping import StopReason, StopSignal

_log = logging.getLogger(__name__)

_LIMIT = 2**24  # one line may carry a 429's headers; never a prompt


@dataclass(frozen=True)
class AuthorityAddress:
    """Where the run's authority listens, and the token that admits a caller (picklable)."""

    host: str
    port: int
    token: str


def stop_reason_of(message: dict[str, Any]) -> StopReason:
    """The run's stop as a message of the authority's protocol carries it."""
    return StopReason(
        str(message["message"]),
        int(message["exit_code"]),
        str(message["status"]),
        bool(message.get("drain", False)),
    )


def _stop_message(reason: StopReason) -> dict[str, Any]:
    return {
        "op": "stop",
        "message": reason.message,
        "exit_code": reason.exit_code,
        "status": reason.status,
        "drain": reason.drain,
    }


class AuthorityServer:
    """Serves the driver's gates to other processes; runs on the driver's gateway loop."""

    def __init__(
        self,
        gates: Mapping[str, Gate],
        stop: StopSignal,
        host: str = "127.0.0.1",
        stats: Mapping[str, CallStats] | None = None,
    ):
        self.gates = dict(gates)
        # The driver's live counters, which the progress display reads: remote calls count too.
        self.stats = dict(stats or {})
        # Calls ended per node that named itself in its hello (answering on a cluster).
        self.node_calls: dict[str, int] = {}
        self.stop = stop
        self.host = host
        self.token = secrets.token_hex(16)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._watch: asyncio.Task[None] | None = None
        self._unlisten: Callable[[], None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> AuthorityAddress:
        self.loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._serve, self.host, 0, limit=_LIMIT)
        port = self._server.sockets[0].getsockname()[1]
        self._watch = asyncio.create_task(self._pass_on_abort())
        self._unlisten = self.stop.on_request(self._stop_requested)
        return AuthorityAddress(self.host, port, self.token)

    def close_from_any_thread(self) -> None:
        """Close on the loop it serves on, if that loop still runs (else it went with it)."""
        loop = self.loop
        if loop is not None and loop.is_running() and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self.close(), loop).result(timeout=10)

    async def close(self) -> None:
        if self._unlisten is not None:
            self._unlisten()
        if self._watch is not None:
            self._watch.cancel()
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.close()
            await self._server.wait_closed()

    def _stop_requested(self, reason: StopReason) -> None:
        """(Any thread.) Every caller is told at once (and none is admitted from now on)."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._broadcast, _stop_message(reason))

    async def _pass_on_abort(self) -> None:
        while not self.stop.aborted:
            await asyncio.sleep(0.1)
        self._broadcast({"op": "abort"})

    def _broadcast(self, message: dict[str, Any]) -> None:
        line = json.dumps(message).encode() + b"\n"
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                writer.write(line)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        passes: dict[int, tuple[Gate, Pass]] = {}
        tasks: set[asyncio.Task[None]] = set()
        try:
            hello = json.loads(await reader.readline() or b"{}")
            if not secrets.compare_digest(str(hello.get("token", "")), self.token):
                return
            node = hello.get("node")
            self._writers.add(writer)
            if isinstance(node, str):
                self.node_calls.setdefault(node, 0)
            if self.stop.reason is not None:
                writer.write(json.dumps(_stop_message(self.stop.reason)).encode() + b"\n")
            while line := await reader.readline():
                message = json.loads(line)
                op = message["op"]
                if op == "enter":
                    task = asyncio.create_task(self._enter(message, passes, writer))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                elif op == "leave":
                    entry = passes.pop(int(message["pass"]), None)
                    if entry is not None:
                        gate, ticket = entry
                        gate.leave(
                            ticket,
                            message.get("cost_usd"),
                            prompt_tokens=message.get("prompt_tokens"),
                            headers=message.get("headers"),
                            retry_after_s=message.get("retry_after_s"),
                            key_accepted=message.get("key_accepted"),
                        )
                elif op == "stop":
                    self.stop.request(stop_reason_of(message))
                elif op == "ping":
                    writer.write(json.dumps({"op": "pong", "id": message["id"]}).encode() + b"\n")
                elif op == "unreachable":
                    self.gates[message["model"]].declare_unreachable(str(message["verdict"]))
                elif op == "done" and message["model"] in self.stats:
                    if isinstance(node, str):
                        self.node_calls[node] += int(message["n"])
                    self.stats[message["model"]].record_many(
                        int(message["n"]),
                        failed=int(message["failed"]),
                        cost_usd=float(message["cost_usd"]),
                        rate_limited=int(message["rate_limited"]),
                    )
        except (ConnectionError, json.JSONDecodeError, KeyError, ValueError):
            pass
        finally:
            self._writers.discard(writer)
            for task in tasks:
                task.cancel()
            # A caller gone with requests out may have been billed for them: worst cases stay.
            for gate, ticket in passes.values():
                gate.leave(ticket, None)
            with contextlib.suppress(Exception):
                writer.close()

    async def _enter(
        self, message: dict[str, Any], passes: dict[int, tuple[Gate, Pass]], writer: Any
    ) -> None:
        gate = self.gates[message["model"]]
        cost = Cost(int(message["tokens"]), message.get("usd"), message.get("prompt_tokens"))
        reply: dict[str, Any] = {"op": "entered", "id": message["id"]}
        try:
            ticket = await gate.admit(cost)
        except OverLimit as exc:
            reply["over_limit"] = str(exc)
        except AuthFailed as exc:
            reply["auth_failed"] = str(exc)
        except Unreachable as exc:
            reply["unreachable"] = str(exc)
        else:
            if ticket is not None:
                number = id(ticket)
                passes[number] = (gate, ticket)
                reply["pass"] = number
            elif self.stop.reason is not None:
                # Refused for the run's stop: the caller learns why at once, not at the next push.
                reply["stop"] = _stop_message(self.stop.reason)
        writer.write(json.dumps(reply).encode() + b"\n")


class AuthorityLink:
    """A process's one connection to the run's authority, shared by its remote gates."""

    def __init__(
        self, address: AuthorityAddress, stop: StopSignal, node: str | None = None
    ) -> None:
        self.address = address
        self.stop = stop
        # The node this process answers on (a cluster's): the authority counts its calls.
        self.node = node
        self._writer: asyncio.StreamWriter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # The stop this process last heard from the authority (or of its loss): never told back.
        self._heard: StopReason | None = None
        self._telling: asyncio.Future[None] | None = None
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._opening: asyncio.Lock | None = None
        self._listening: asyncio.Task[None] | None = None
        self._closing = False
        self._outbox: list[bytes] = []
        self._flushing = False
        # Per model, calls ended since the last write: [done, failed, USD, 429s].
        self._tallies: dict[str, list[float]] = {}
        self._unlisten = stop.on_request(self._relay)

    async def _open(self) -> asyncio.StreamWriter:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._writer is None:
                self._loop = asyncio.get_running_loop()
                reader, writer = await asyncio.open_connection(
                    self.address.host, self.address.port, limit=_LIMIT
                )
                hello = {"token": self.address.token, "node": self.node}
                writer.write(json.dumps(hello).encode() + b"\n")
                self._writer = writer
                self._listening = asyncio.create_task(self._listen(reader))
        return self._writer

    async def _listen(self, reader: asyncio.StreamReader) -> None:
        try:
            while line := await reader.readline():
                message = json.loads(line)
                if message["op"] in ("entered", "pong"):
                    future = self._waiting.pop(int(message["id"]), None)
                    if future is not None and not future.done():
                        future.set_result(message)
                elif message["op"] == "stop":
                    self.hear(stop_reason_of(message))
                elif message["op"] == "abort":
                    # The run's stop again: requests in flight are cancelled at once.
                    self._heard = StopReason("stopped by the run", 130, "interrupted")
                    self.stop.insist(self._heard)
        except asyncio.CancelledError:
            return  # hung up by this side: nothing is lost
        finally:
            lost = StopReason("the run's authority is gone", 1, "failed")
            for future in self._waiting.values():
                if not future.done():
                    future.set_result({"op": "entered"})
            self._waiting.clear()
            if not self._closing:
                self._heard = lost
                self.stop.request(lost)

    def hear(self, reason: StopReason) -> None:
        """The run's stop, from the authority: this process stops too (not told back)."""
        self._heard = reason
        self.stop.request(reason)

    def _relay(self, reason: StopReason) -> None:
        """(Any thread.) A stop first requested in this process (its store failed, ...) goes to
        the authority at once: from then on it admits no request of any process."""
        if self._closing or reason is self._heard:
            return
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self._loop or running
        if loop is None or loop.is_closed():
            # Nothing asked from this process yet, and no loop here to ask from: the run learns
            # of it from what failed (a shard's error reaches the driver).
            return
        if loop is running:
            self._tell(reason)
        else:
            loop.call_soon_threadsafe(self._tell, reason)

    def _tell(self, reason: StopReason) -> None:
        self._outbox.append(json.dumps(_stop_message(reason)).encode() + b"\n")
        if self._writer is not None:
            # Now, in the same write as the leave of the answer that could not be kept: the
            # authority frees that slot and stops in one step, so nobody is admitted to it.
            self._flush()
        elif self._telling is None:
            self._telling = asyncio.ensure_future(self._open_and_flush())

    async def _open_and_flush(self) -> None:
        try:
            await self._open()
        except OSError as exc:  # the authority is gone: the run is ending anyway
            _log.warning("the run's authority could not be told of this process's stop: %s", exc)
            return
        self._flush()

    async def enter(self, model: str, cost: Cost) -> dict[str, Any]:
        await self._open()
        number = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        message = {
            "op": "enter",
            "id": number,
            "model": model,
            "tokens": cost.tokens,
            "usd": cost.usd,
            "prompt_tokens": cost.prompt_tokens,
        }
        self._outbox.append(json.dumps(message).encode() + b"\n")
        self._flush()  # in order: the leaves queued before it go first
        return await future

    async def ping(self, timeout_s: float) -> None:
        """Reach the authority and hear it answer (the token accepted); raises OSError or
        TimeoutError otherwise."""
        await asyncio.wait_for(self._open(), timeout_s)
        number = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        self._outbox.append(json.dumps({"op": "ping", "id": number}).encode() + b"\n")
        self._flush()
        reply = await asyncio.wait_for(future, timeout_s)
        if reply.get("op") != "pong":
            raise ConnectionError("it hung up: the run's token was refused, or the run ended")

    def send(self, message: dict[str, Any]) -> None:
        """Send a message that wants no reply; those sent in one turn of the loop (a call's
        leave and its counts, other calls' ones) go in one write."""
        if self._writer is None:
            return
        self._outbox.append(json.dumps(message).encode() + b"\n")
        self._flush_soon()

    def tally(self, model: str, *, ok: bool, cost_usd: float | None, rate_limited: int) -> None:
        """Count an ended call for the driver's live counters: the calls ended in one turn of
        the loop go as one message per model (they feed only the progress display)."""
        if self._writer is None:
            return
        counts = self._tallies.setdefault(model, [0, 0, 0.0, 0])
        counts[0] += 1
        counts[1] += int(not ok)
        counts[2] += cost_usd or 0.0
        counts[3] += rate_limited
        self._flush_soon()

    def _flush_soon(self) -> None:
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flushing = False
        for model, (done, failed, usd, limited) in self._tallies.items():
            message = {
                "op": "done",
                "model": model,
                "n": int(done),
                "failed": int(failed),
                "cost_usd": usd,
                "rate_limited": int(limited),
            }
            self._outbox.append(json.dumps(message).encode() + b"\n")
        self._tallies.clear()
        if self._outbox and self._writer is not None:
            self._writer.write(b"".join(self._outbox))
        self._outbox.clear()

    async def close(self) -> None:
        """Hang up (after the last leave was sent): the authority settles nothing more."""
        self._closing = True
        self._unlisten()
        self._flush()
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()
                await writer.wait_closed()
        if self._listening is not None:
            self._listening.cancel()
