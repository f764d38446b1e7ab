"""The suites that ship with roadeval, by name, and the module whose import registers each (its
decorators run then). A suite is imported on first use, so a run pays only for its own suites:
RoadBench's geometry (shapely, scipy) is not loaded by a TRIP run."""

BUILTIN_SUITES: dict[str, str] = {
    "roadbench": "roadeval.benchmarks.roadbench",
    "stride": "roadeval.benchmarks.stride",
    "tbbench": "roadeval.benchmarks.tbbench",
    "trip": "roadeval.benchmarks.trip",
    "v2xqa": "roadeval.benchmarks.v2xqa",
}

# Modules of baselines that answer for any suite (the offline judge).
ANY_SUITE_MODULES: tuple[str, ...] = ("roadeval.benchmarks.judges",)
