"""Contender (a): a bare `litellm.acompletion` loop, 32 requests at a time, over the bench's
prompts. The floor roadeval's CPU per call is compared with: no store, no cache, no limits.

    python bench/contenders/bare_loop.py PROMPTS_JSONL API_BASE CONCURRENCY [PROCESSES [SLICE]]

With PROCESSES above 1 (the `bare2` contender): that many bare loops at once, each a process of
its own over every PROCESSES-th prompt at CONCURRENCY / PROCESSES, so the requests in flight are
the same: the machine's limit on its cores, which one loop cannot reach. SLICE is a child's share.

Exits 1 naming the first item whose call failed or came back without text.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any


async def ask_all(prompts: list[dict[str, Any]], api_base: str, concurrency: int) -> list[str]:
    import litellm

    gate = asyncio.Semaphore(concurrency)

    async def ask(prompt: dict[str, Any]) -> str:
        async with gate:
            response = await litellm.acompletion(
                model="openai/instant",
                messages=prompt["messages"],
                api_base=api_base,
                api_key="no-key",
                **prompt["params"],
            )
        text = response.choices[0].message.content
        if not text:
            raise RuntimeError(f"item {prompt['id']}: the reply had no text")
        return str(text)

    return await asyncio.gather(*(ask(p) for p in prompts))


def in_processes(processes: int) -> None:
    """Run this loop in `processes` children at once, each over its slice; exit as the worst."""
    share = max(1, int(sys.argv[3]) // processes)
    children = [
        subprocess.Popen(
            [sys.executable, __file__, *sys.argv[1:3], str(share), str(processes), str(k)]
        )
        for k in range(processes)
    ]
    codes = [child.wait() for child in children]
    if any(codes):
        raise SystemExit(max(codes))


def main() -> None:
    path, api_base, concurrency = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    processes = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if processes > 1 and len(sys.argv) == 5:
        in_processes(processes)
        return
    prompts = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if processes > 1:
        prompts = prompts[int(sys.argv[5]) :: processes]
    replies = asyncio.run(ask_all(prompts, api_base, concurrency))
    print(f"{len(replies)} replies")


if __name__ == "__main__":
    main()
