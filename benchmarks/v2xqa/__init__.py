"""V2X-QA (multiple-choice driving questions over ego, roadside and cooperative views), as its
public release (github junwei0001/V2X-QA, commit ee2e9fe) evaluates it.

Importing the package registers the suite `v2xqa` and its baselines `random` and `always-a`.
"""

from roadeval.benchmarks.v2xqa import baselines, suite  # noqa: F401
from roadeval.benchmarks.v2xqa.suite import V2XQASuite

__all__ = ["V2XQASuite"]
