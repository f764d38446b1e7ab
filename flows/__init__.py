"""A run of a panel and the command line that starts it, in layers, each depending only on those
before it: `panel` (the panel file and the names that point to one) <- `stages` (the work of each
stage and who runs it) <- `rerun` (a run against its baseline run) <- `run` (a run's life from its
start to its summary, the same under Prefect and inline) <- `prefect` (the Prefect adapter over
that run: the flow, its artifacts, deployments) <- `evaluate` (`evaluate_panel`: Prefect or
inline, the one place they meet) <- `cli` (a module per command). tests/test_import_graph.py
holds the order."""

if __name__ != "roadeval.flows":
    # One import path per module: imported as `flows` (the folder itself on sys.path), a second
    # copy of every module would load beside roadeval.flows, with registries of its own.
    raise ImportError(f"import roadeval.flows, not {__name__}")
