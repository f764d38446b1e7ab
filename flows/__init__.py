"""The Prefect flows, the panel file and the command line that starts them."""

if __name__ != "roadeval.flows":
    # One import path per module: imported as `flows` (the folder itself on sys.path), a second
    # copy of every module would load beside roadeval.flows, with registries of its own.
    raise ImportError(f"import roadeval.flows, not {__name__}")
