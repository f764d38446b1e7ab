"""Units of pipeline work, one subpackage per concept; dependencies point one way:
requests <- calls <- cache <- batch <- shard <- results <- report, and render on its own."""

if __name__ != "roadeval.tasks":
    # One import path per module: imported as `tasks` (the folder itself on sys.path), a second
    # copy of every module would load beside roadeval.tasks, with registries of its own.
    raise ImportError(f"import roadeval.tasks, not {__name__}")
