"""The object store, its Parquet tables and landings, and the DuckDB catalogue over them."""

if __name__ != "roadeval.storage":
    # One import path per module: imported as `storage` (the folder itself on sys.path), a second
    # copy of every module would load beside roadeval.storage, with registries of its own.
    raise ImportError(f"import roadeval.storage, not {__name__}")
