"""Prefect deployments (schedules, parameters, work pools) of the flows in `roadeval.flows`.

Empty until scheduled full-panel runs are built; kept so the layout matches DESIGN.md.
"""

if __name__ != "roadeval.deployments":
    # One import path per module: imported as `deployments` (the folder itself on sys.path), a
    # second copy of every module would load beside roadeval.deployments.
    raise ImportError(f"import roadeval.deployments, not {__name__}")
