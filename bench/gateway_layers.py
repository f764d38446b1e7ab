"""Where roadeval's CPU per call goes over a bare LiteLLM loop, layer by layer, unprofiled: the
same N distinct TRIP text requests against the instant server (a process of its own), asked by
each layer in turn in this one process, rounds alternating, CPU of every thread counted.

    .venv/bin/python bench/gateway_layers.py [--items 2000] [--rounds 3] [--layers a,b,...]

Layers, each adding one part of the call path to the one before:
  bare       `litellm.acompletion(model, messages, api_base, api_key, **params)`, Semaphore(32)
  kwargs     the same, with the exact keyword arguments roadeval sends (`litellm_kwargs`)
  client     `ModelClient.complete`: the gate, the deadline, the record, the cost
  asker      `Asker.ask_unanswered` without claims: the answer kept in the store
  claimed    the same with claims: requests claimed in batches, taken and ended
  staged     the real stages: plan_shard (keys, look-ups) + run_shard (ask, parse, score, land)

All run on the gateway's loop (`run_on_gateway`), 32 at a time. Printed: CPU ms per call per
layer (median over rounds), and each layer's cost over the one before it.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from gateway_contenders import start_server, write_suite  # noqa: E402

LAYERS = ("bare", "kwargs", "client", "asker", "claimed", "staged")
CONCURRENCY = 32


def _bounded(concurrency: int) -> Callable[[Any], Any]:
    gate = asyncio.Semaphore(concurrency)

    async def run(coro: Any) -> Any:
        async with gate:
            return await coro

    return run


def build(api_base: str, items: int, work: Path) -> dict[str, Callable[[str], None]]:
    """One function per layer that asks every item once (into a fresh store named by its
    argument)."""
    import litellm

    from roadeval.benchmarks.registry import get_suite
    from roadeval.storage.store import LocalStore
    from roadeval.tasks.cache.claims import claim_book
    from roadeval.tasks.cache.responses import ResponseCache
    from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
    from roadeval.tasks.render.stage import render_items
    from roadeval.tasks.requests.model_spec import ModelSpec
    from roadeval.tasks.shard.asking import Asker
    from roadeval.tasks.shard.plan import Shard, plan_shard
    from roadeval.tasks.shard.stages import run_shard

    source, _ = write_suite(items, work)
    suite = get_suite("trip")
    all_items = suite.load(source).items
    spec = ModelSpec(model="openai/instant", api_base=api_base, max_concurrency=CONCURRENCY)

    def requests(client: ModelClient, tag: str) -> list[Any]:
        # Distinct per layer and round: nothing is answered from a cache.
        return [
            client.request(
                [*suite.prompt(item, ()), {"role": "user", "content": tag}],
                item=item,
                settings=suite.generation_for(item),
            )
            for item in all_items
        ]

    def looped(with_our_kwargs: bool) -> Callable[[str], None]:
        """A bare loop of `litellm.acompletion`: the minimal arguments, or roadeval's own."""

        def layer(tag: str) -> None:
            client = ModelClient(spec)
            reqs = requests(client, tag)

            def kwargs(r: Any) -> dict[str, Any]:
                if with_our_kwargs:
                    return client.litellm_kwargs(r, r.messages)
                return dict(
                    model=spec.model,
                    messages=r.messages,
                    api_base=api_base,
                    api_key="no-key",
                    **r.params,
                )

            async def go() -> None:
                bounded = _bounded(CONCURRENCY)
                await asyncio.gather(*(bounded(litellm.acompletion(**kwargs(r))) for r in reqs))

            run_on_gateway(go())

        return layer

    def with_client(tag: str) -> None:
        client = ModelClient(spec)
        reqs = requests(client, tag)

        async def go() -> None:
            outcomes = await asyncio.gather(*(client.complete(r) for r in reqs))
            assert all(o.final is not None and o.final.ok for o in outcomes)

        run_on_gateway(go())

    def asked(claimed: bool) -> Callable[[str], None]:
        def layer(tag: str) -> None:
            client = ModelClient(spec)
            reqs = requests(client, tag)
            store = LocalStore(work / tag)
            claims = None
            if claimed:
                cache = ResponseCache(store)
                run_id = f"20260101T000000Z-{tag}"
                claims = claim_book(store, cache, spec.model, client.api_base, run_id, client.stop)
            asker = Asker(client, ResponseCache(store), claims)

            async def go() -> None:
                outcomes = await asyncio.gather(*(asker.ask_unanswered(r) for r in reqs))
                assert all(o.final is not None and o.final.ok for o in outcomes)

            try:
                run_on_gateway(go())
            finally:
                shutil.rmtree(work / tag, ignore_errors=True)

        return layer

    def staged(tag: str) -> None:
        client = ModelClient(spec)
        store = LocalStore(work / tag)
        # The tag goes into every item's question (through a changed source), so that no run
        # is answered from another's cache: a fresh store per pass is enough.
        try:
            for index, start in enumerate(range(0, len(all_items), 500)):
                shard = Shard(tag, index, suite, client, all_items[start : start + 500])
                renders = render_items(suite, shard.items).renders
                run_shard(plan_shard(shard, renders, ResponseCache(store)), store)
        finally:
            shutil.rmtree(work / tag, ignore_errors=True)

    return {
        "bare": looped(False),
        "kwargs": looped(True),
        "client": with_client,
        "asker": asked(False),
        "claimed": asked(True),
        "staged": staged,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layers", default=",".join(LAYERS))
    args = parser.parse_args()
    layers = [name for name in args.layers.split(",") if name]
    unknown = set(layers) - set(LAYERS)
    if unknown:
        parser.error(f"unknown layers: {', '.join(sorted(unknown))}")

    import roadeval

    tree = Path(roadeval.__file__).resolve().parents[1]
    server = start_server(sys.executable, tree / "tests")
    work = Path(tempfile.mkdtemp(prefix="gateway-layers-"))
    try:
        passes = build(server.api_base, args.items, work)
        for name in layers:  # warm-up: clients, imports, the loop
            passes[name](f"warm-{name}")
        figures: dict[str, list[float]] = {name: [] for name in layers}
        for round_no in range(args.rounds):
            order = layers if round_no % 2 == 0 else list(reversed(layers))
            for name in order:
                started = time.process_time()
                passes[name](f"r{round_no}-{name}")
                figures[name].append(1000 * (time.process_time() - started) / args.items)
            line = "  ".join(f"{n} {figures[n][-1]:.3f}" for n in layers)
            print(f"round {round_no + 1}: CPU ms/call  {line}", flush=True)
        print(f"\n{args.items} calls per layer, median CPU ms per call over {args.rounds} rounds")
        print(f"{'layer':<10} {'ms/call':>8} {'over prev':>10} {'÷ bare':>7}")
        previous: float | None = None
        base = statistics.median(figures[layers[0]])
        for name in layers:
            value = statistics.median(figures[name])
            step = "" if previous is None else f"{value - previous:+.3f}"
            print(f"{name:<10} {value:8.3f} {step:>10} {value / base:7.2f}")
            previous = value
    finally:
        server.process.kill()
        server.process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
