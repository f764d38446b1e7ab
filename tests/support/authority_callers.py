"""Model callers in processes of their own, admitted by a run's authority over its socket.

Each caller is forked from the answer workers' server, as a run's answer workers are
(`tasks.shard.answer_workers`): LiteLLM is imported there once for the test session, so a caller
starts in a moment instead of paying LiteLLM's import (seconds of CPU) in a fresh interpreter.
It shares nothing with the driver but the authority's address.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from roadeval.tasks.calls.authority import AuthorityAddress, AuthorityServer
from roadeval.tasks.calls.gateway import run_on_gateway
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.worker_server import PRELOAD, start_server


def _ask(spec: ModelSpec, address: AuthorityAddress, n: int, tag: str, conn: Connection) -> None:
    """(In the caller's process.) Ask `n` requests through the authority; send what came back."""
    from roadeval.benchmarks.messages import user_message
    from roadeval.tasks.calls.authority import AuthorityLink
    from roadeval.tasks.calls.gateway import ModelClient
    from roadeval.tasks.calls.remote_gate import RemoteGate
    from roadeval.tasks.calls.stopping import StopSignal

    stop = StopSignal(grace=0.5)
    gate = RemoteGate(spec, AuthorityLink(address, stop), budgeted=True)
    client = ModelClient(spec, stop=stop, gate=gate)

    async def every() -> list[Any]:
        requests = [
            client.request([user_message(f"{tag}{k}?")], 1, tokens_in_est=10) for k in range(n)
        ]
        return await asyncio.gather(*(client.complete(r) for r in requests))

    outcomes = run_on_gateway(every())
    conn.send(
        {
            "answered": sum(o.final is not None and o.final.ok for o in outcomes),
            "stopped": sum(o.stopped for o in outcomes),
            "cost": sum(t.cost_usd or 0.0 for o in outcomes for t in o.tries),
            "reason": stop.reason.status if stop.reason else None,
            "kinds": [o.final.error_kind for o in outcomes if o.final is not None],
        }
    )
    conn.close()


def callers(
    spec: ModelSpec, server: AuthorityServer, n: int, count: int, timeout: float = 120.0
) -> list[dict[str, Any]]:
    """`count` caller processes, each asking `n` requests of `spec` through `server` (started
    here, closed once they are done): what each got."""
    address = run_on_gateway(server.start())
    ctx = multiprocessing.get_context("forkserver")
    start_server(PRELOAD)
    started: list[tuple[Any, Connection]] = []
    try:
        for k in range(count):
            mine, theirs = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_ask, args=(spec, address, n, f"p{k}-", theirs))
            process.start()
            theirs.close()
            started.append((process, mine))
        results = []
        for process, conn in started:
            if not conn.poll(timeout):
                raise AssertionError(f"caller {process.pid} sent nothing in {timeout:.0f} s")
            results.append(conn.recv())
        return results
    finally:
        for process, conn in started:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
            conn.close()
        run_on_gateway(server.close())
