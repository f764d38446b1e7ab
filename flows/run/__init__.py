"""A run's life, top-down, each module visited once in this order: `start` (its id, the checks
before it: `preflight`, `engine_checks`; its baseline, its suites loaded), `setup` (its clients,
renders, changes and shards, handed down as a frozen `Run`), `execute` (recorded from its first
moment, then in turn:) `answer` (its stages: every shard planned and answered, waiting on them
with `collect`; a rescore's `rescore`; a dry run's `dry_run`), `metrics` (a whole run's), `end`
(its last record and summary), and `report` (a finished run's HTML report). The same code under
Prefect and inline: nothing here imports Prefect or the CLI."""
