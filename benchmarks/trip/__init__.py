"""TRIP-Evaluate: the suite adapter, its quality checks, demo generator and offline baselines.

Importing the package registers the suite `trip` and the baselines `random` and `always-a`.
"""

from roadeval.benchmarks.trip import baselines
from roadeval.benchmarks.trip.answers import AbnormalRule, parse_reply
from roadeval.benchmarks.trip.demo import generate_demo
from roadeval.benchmarks.trip.prompt import PROMPT_VERSION
from roadeval.benchmarks.trip.quality import QualityFinding, Severity, check_quality
from roadeval.benchmarks.trip.suite import TripSuite

__all__ = [
    "PROMPT_VERSION",
    "AbnormalRule",
    "QualityFinding",
    "Severity",
    "TripSuite",
    "baselines",
    "check_quality",
    "generate_demo",
    "parse_reply",
]
