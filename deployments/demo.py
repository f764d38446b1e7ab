"""The demo panel's deployments: `evaluate-panel/demo` every Monday at 03:00 UTC, then
`evaluate-panel/demo-rerun` and `campaign/demo-campaign` on demand (the campaign asks for its budget
when started). Runs land in the store the worker's environment names (ROADEVAL_STORE, else
./roadeval-data in its working directory). `prefect.yaml` declares the same three; serve them
from this process with `python -m roadeval.deployments.demo`.
"""

from __future__ import annotations

from roadeval.flows.prefect.panel_deployments import PanelDeployment, panel_deployments

PANEL = "bundled:demo"
NAME = "demo"
# The process work pool `prefect.yaml` deploys them to.
WORK_POOL = "roadeval"


def deployments() -> list[PanelDeployment]:
    return panel_deployments(PANEL, NAME)


def main() -> int:
    """Serve the demo's deployments from this process until stopped."""
    import sys

    from roadeval.flows.prefect.deployments import DeployError, require_server, serve

    try:
        require_server()
    except DeployError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    serve(deployments())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
