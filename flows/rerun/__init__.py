"""Reruns: a run against its baseline run. What a baseline is and what may be taken from it
(`baseline`), the items that changed since (`changes`; landed before the first call), the run's
questions to its baseline at each stage (`comparison`: changes and copies before the plan, the
metric deltas and paired comparisons with the metrics), and what changed between any two runs
(`diff`, and `compare`: the diff with the paired headlines, for `roadeval changes` and
`compare`). The per-item mechanisms these use, which the shard and the report read too (a
baseline's stored outcomes and what is copied, the changes ledger and its landing, a suite's
scoring key, score and metric deltas), are `tasks.rerun`'s: tasks never import flows, so they
cannot live here, and this package needs the panel, the loaded suites and the run's manifest, so
it cannot live there."""
