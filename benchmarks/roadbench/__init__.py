"""RoadBench (tsinghua-fib-lab/RoadBench): six BEV and FPV road-understanding tasks, with the
release's prompts, YAML answers, re-asks and metric scripts' semantics."""

from roadeval.benchmarks.roadbench import baselines  # noqa: F401 - registers the baselines
from roadeval.benchmarks.roadbench.suite import SUITE_VERSION, RoadBenchSuite

__all__ = ["SUITE_VERSION", "RoadBenchSuite"]
