"""Prefect as one adapter over the same run: the `evaluate-panel` flow whose stages are Prefect
tasks (`flow`), what a run publishes for the UI (`artifacts`), the temporary API server
(`api`), a panel's deployments (`panel_deployments`), the flows they run (`deployed`) and their
registration on a server (`deployments`). Imported only when Prefect runs the panel."""
