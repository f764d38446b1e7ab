"""A run's life, top-down: `start` (its id, the checks before it, its baseline, its suites
loaded), `execute` (its stages, recorded in the store from its first moment; waiting for them:
`collect`; a dry run's plan and estimate: `dry_run`), and its end
(`summary`, `report`); what it is made of (`parts`), what it records (`record`, `manifest`, `log`)
and shows (`progress`), what is checked before it (`preflight`, `engine_checks`), a rescore's
refusal (`rescore`), and the command process's own speed-ups (`warmup`, `quick_exit`). The same
code under Prefect and inline: nothing here imports Prefect or the CLI."""
