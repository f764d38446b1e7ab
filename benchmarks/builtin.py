"""Imports the suites that ship with roadeval so that their decorators register them."""

from roadeval.benchmarks import judges, roadbench, tbbench, trip  # noqa: F401
