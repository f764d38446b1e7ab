"""What is evaluated: the Item schema, the suite contract and registry, one package per suite."""

if __name__ != "roadeval.benchmarks":
    # One import path per module: imported as `benchmarks` (the folder itself on sys.path), a second
    # copy of every module would load beside roadeval.benchmarks, with registries of its own.
    raise ImportError(f"import roadeval.benchmarks, not {__name__}")
