"""What the call path costs per request: shards of TRIP text items against an instant local
OpenAI-compatible server (in a process of its own, so that its CPU is not counted), through the
real stages (plan, ask, score, land) with the gateway and the store. Prints items per second and
the CPU seconds this process spent per request; run it on two versions of the code side by side
(PYTHONPATH at a tree of each) to compare ratios.

    .venv/bin/python bench/gateway_throughput.py [--items 2000] [--concurrency 32] [--repeat 3]

Each repeat uses a fresh store, so every request is really sent.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import get_suite
from roadeval.storage.store import LocalStore
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.stages import run_shard

try:  # the staged run: plan, then ask and score
    from roadeval.tasks.cache.responses import ResponseCache
    from roadeval.tasks.render.stage import render_items
    from roadeval.tasks.shard.plan import Shard, plan_shard
except ImportError:  # code from before the plan stage: shards ask straight away
    from roadeval.tasks.shard.stages import Shard  # type: ignore[attr-defined,no-redef]

    plan_shard = None  # type: ignore[assignment]

SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from support.model_server import ModelServer, Reply
server = ModelServer().start()
server.rules["instant"] = lambda body, hit: Reply("A")
print(server.api_base, flush=True)
while True:
    time.sleep(60)
"""


def text_items(n: int, root: Path) -> list[Item]:
    """`n` distinct text items made from the TRIP demo's text questions."""
    suite = get_suite("trip")
    demo = [i for i in suite.load(suite.generate_demo(root)).items if not i.media]
    return [
        demo[k % len(demo)].model_copy(
            update={"item_id": f"bench-{k}", "question": f"{demo[k % len(demo)].question} #{k}"}
        )
        for k in range(n)
    ]


def one_pass(api_base: str, items: list[Item], concurrency: int, chunk: int) -> tuple[float, float]:
    suite = get_suite("trip")
    spec = ModelSpec(model="openai/instant", api_base=api_base, max_concurrency=concurrency)
    client = ModelClient(spec)
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        wall, cpu = time.perf_counter(), time.process_time()
        # Shards one after another in this thread: the gateway loop still runs each shard's
        # requests concurrently, up to the model's limit.
        for index, start in enumerate(range(0, len(items), chunk)):
            shard = Shard("bench", index, suite, client, items[start : start + chunk])
            if plan_shard is None:
                run_shard(shard, store)
                continue
            renders = render_items(suite, shard.items).renders
            run_shard(plan_shard(shard, renders, ResponseCache(store)), store)
        return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tests = Path(__file__).resolve().parents[1] / "tests"
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tests)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        api_base = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as folder:
            items = text_items(args.items, Path(folder))
        one_pass(api_base, items[:50], args.concurrency, args.chunk)  # warm up imports, pools
        print(f"{args.items} items, concurrency {args.concurrency}, instant local server")
        for run in range(1, args.repeat + 1):
            wall, cpu = one_pass(api_base, items, args.concurrency, args.chunk)
            print(
                f"run {run}: {args.items / wall:7.1f} items/s   "
                f"{1000 * cpu / args.items:6.2f} ms CPU per request   ({wall:.1f} s wall)"
            )
    finally:
        server.kill()


if __name__ == "__main__":
    main()
