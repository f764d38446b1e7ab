"""Prefect deployments (schedules, parameters, work pools) of the flows in `roadeval.flows`.

Empty until scheduled full-panel runs are built; kept so the layout matches DESIGN.md.
"""
