"""Judge calls through Ray against a local OpenAI-compatible server that takes 200 ms per reply,
the judge limited to 300 requests a minute: how much of the limit the run sustains for two
minutes, and whether any judgement failed. The scorer is a minimal judged suite defined here;
the path is the run's own (`RemoteScoring`: batches on Ray workers, one judge actor holding the
judge's limits, cache and claims).

Ray probes outside addresses: run it inside the loopback-only namespace.

    ../shared/scripts/loopback-only .venv/bin/python bench/judge_throughput.py [--minutes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import ray

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.judging import Judge, JudgeRequest
from roadeval.benchmarks.loading import LoadReport
from roadeval.benchmarks.messages import ImageRef, Message, user_message
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ItemScore, ParsedAnswer, ParseStatus, Suite
from roadeval.storage.store import LocalStore
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.shard.remote_scoring import RemoteScoring, ScoreInput, ScoringConfig

SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from support.model_server import ModelServer, Reply
server = ModelServer().start()
server.rules["judge"] = lambda body, hit: Reply('{"score": 7}', delay_s=0.2)
print(server.api_base, flush=True)
while True:
    time.sleep(60)
"""
RPM = 300


class JudgedBench(Suite):
    """Every item scored by the judge alone."""

    name: ClassVar[str] = "judged-bench"
    prompt_version: ClassVar[str] = "bench"
    uses_judge: ClassVar[bool] = True

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        raise NotImplementedError

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        return [user_message(item.question)]

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        return ParsedAnswer(ParseStatus.OK, output.text, "bench")

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        return {}

    async def score_item(
        self, item: Item, parsed: ParsedAnswer, output: ModelOutput, judge: Judge | None
    ) -> ItemScore:
        assert judge is not None
        request = JudgeRequest(
            [user_message(f"Rate: {item.question} -> {output.text}")],
            GenerationSettings(temperature=0, max_tokens=192),
            "bench",
        )
        reply = await judge(request)
        if reply.text is None:
            return ItemScore(values={}, unscored={"judge": reply.error or "no reply"})
        return ItemScore(values={"judge": 7.0}, judged=reply)


def entries(count: int) -> list[ScoreInput]:
    items = [
        Item(
            suite="judged-bench",
            suite_version="bench",
            item_id=f"q{n}",
            task="open",
            question=f"question {n}",
            answer_kind=AnswerKind.OPEN_TEXT,
            reference="",
        )
        for n in range(count)
    ]
    return [
        ScoreInput(item, ParsedAnswer(ParseStatus.OK, "a", "bench"), ModelOutput(f"answer {n}"))
        for n, item in enumerate(items)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    count = int(args.minutes * RPM)
    tests = Path(__file__).resolve().parents[1] / "tests"
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tests)], stdout=subprocess.PIPE, text=True
    )
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=256 * 2**20,
        log_to_driver=False,
        logging_level=logging.ERROR,
        _node_ip_address="127.0.0.1",
    )
    try:
        assert server.stdout is not None
        api_base = server.stdout.readline().strip()
        spec = ModelSpec(model="openai/judge", api_base=api_base, rpm=RPM, max_concurrency=8)
        with tempfile.TemporaryDirectory() as folder:
            remote: Any = RemoteScoring(
                ScoringConfig(batch_size=args.batch),
                LocalStore(Path(folder)),
                "bench",
                StopSignal(),
                judge=ModelClient(spec),
            )
            suite = JudgedBench()
            asyncio.run(remote.score(suite, entries(4), judged=True))  # warm up workers, actor
            work = entries(count + 4)[4:]
            started = time.perf_counter()
            outputs = asyncio.run(remote.score(suite, work, judged=True))
            elapsed = time.perf_counter() - started
        failed = sum(1 for output in outputs if output.score.unscored)
        # `count` requests spaced 60/RPM apart take (count - 1) intervals plus one reply.
        rate = count / elapsed * 60
        print(f"{count} judgements through Ray, judge limited to {RPM} rpm, 200 ms per reply")
        print(f"{elapsed:.1f} s: {rate:.1f} per minute = {100 * rate / RPM:.1f}% of the limit")
        print(f"failed judgements: {failed}")
    finally:
        ray.shutdown()
        server.kill()


if __name__ == "__main__":
    main()
