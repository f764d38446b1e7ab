"""Prefect deployments declared as code: the demo panel's three (`demo`), which `prefect.yaml`
at the repository root declares again for `prefect deploy --all`. Any other panel is deployed
with `roadeval deploy --panel P` (see `roadeval.flows.prefect.panel_deployments`)."""

if __name__ != "roadeval.deployments":
    # One import path per module: imported as `deployments` (the folder itself on sys.path), a
    # second copy of every module would load beside roadeval.deployments.
    raise ImportError(f"import roadeval.deployments, not {__name__}")
