"""Which engine scores a run's heavy items, and why: a local Ray starts only when the work pays
for its start.

`scoring: {engine: ray}` and a cluster by address (`scoring.address`, `--ray-address`) are
obeyed, `engine: local` too. By default (`auto`) the run estimates the CPU seconds of its heavy
scoring (each heavy item's `Suite.heavy_scoring_seconds`, over the shards that will score: a
rerun's copies are not counted) and starts a local Ray only when spreading them over its CPUs
would save more wall time than a local Ray costs to start and stop (`RAY_START_S`); otherwise
the heavy items are scored in the run's own process, in threads, like the rest.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from roadeval.tasks.shard.plan import Shard
from roadeval.tasks.shard.remote_scoring import ScoringConfig, ScoringEngine

# A local Ray's cost in wall seconds on this project's 2-core machines: `ray.init` (about 4.5 s),
# its first workers (about 1 s) and its shutdown (about 1.5 s) (docs/engines.md).
RAY_START_S = 7.0


@dataclass(frozen=True)
class HeavyWork:
    """The heavy items a run will score, and their estimated CPU seconds."""

    items: int
    cpu_s: float

    @classmethod
    def of(cls, shards: Sequence[Shard]) -> HeavyWork:
        items, seconds = 0, 0.0
        for shard in shards:
            if shard.copies:
                continue  # a rerun's copies: their outcomes are copied, not scored
            suite = shard.suite
            for item in shard.items:
                if suite.heavy_scoring(item):
                    items += 1
                    seconds += suite.heavy_scoring_seconds(item)
        return cls(items, seconds)


@dataclass(frozen=True)
class ScoringChoice:
    """The engine that scores the run's heavy items (`ray` or `local`, never `auto`), the
    cluster's address when one was given, and why (the manifest's `engines.scoring`)."""

    engine: ScoringEngine
    reason: str
    address: str | None = None


def choose_scoring(
    config: ScoringConfig, work: HeavyWork, cpus: int | None = None
) -> ScoringChoice:
    """The engine for `work` under `config` (`cpus`: the machine's, unless `num_cpus` says)."""
    if config.engine is ScoringEngine.LOCAL:
        return ScoringChoice(ScoringEngine.LOCAL, "scoring.engine is local")
    if config.address is not None:
        return ScoringChoice(
            ScoringEngine.RAY,
            "a Ray cluster was given (scoring.address, --ray-address)",
            config.address,
        )
    if config.engine is ScoringEngine.RAY:
        return ScoringChoice(ScoringEngine.RAY, "scoring.engine is ray")
    if work.items == 0:
        return ScoringChoice(ScoringEngine.LOCAL, "no heavy items to score")
    cores = config.num_cpus or cpus or os.cpu_count() or 1
    # Against one thread, `cores` Ray workers save at most this much wall time.
    saved = work.cpu_s * (1 - 1 / cores)
    items = f"{work.items} heavy item{'s' if work.items != 1 else ''}"
    estimate = f"{items}, about {work.cpu_s:.1f} CPU s to score"
    if saved <= RAY_START_S:
        return ScoringChoice(
            ScoringEngine.LOCAL,
            f"{estimate}: a local Ray on {cores} CPUs would save at most {saved:.1f} s, "
            f"not the {RAY_START_S:g} s it takes to start and stop",
        )
    return ScoringChoice(
        ScoringEngine.RAY,
        f"{estimate}: a local Ray on {cores} CPUs saves up to {saved:.1f} s, more than the "
        f"{RAY_START_S:g} s it takes to start and stop",
    )
