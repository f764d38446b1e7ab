"""Imports the suites that ship with roadeval so that their decorators register them."""

from roadeval.benchmarks import judges, roadbench, stride, tbbench, trip, v2xqa  # noqa: F401
