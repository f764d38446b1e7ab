"""TB-Bench (traffic behaviour from dashcam images and clips), as its public release runs it.

Importing the package registers the `tbbench` suite and its `random` baseline.
"""

from roadeval.benchmarks.tbbench import baselines, suite  # noqa: F401
from roadeval.benchmarks.tbbench.suite import TBBenchSuite

__all__ = ["TBBenchSuite"]
