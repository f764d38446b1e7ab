"""STRIDE (spatio-temporal reasoning in driving edge cases), as its public release scores it.

Importing the package registers the `stride` suite and its `random` baseline.
"""

from roadeval.benchmarks.stride import baselines, suite  # noqa: F401
from roadeval.benchmarks.stride.suite import StrideSuite

__all__ = ["StrideSuite"]
