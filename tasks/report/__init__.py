"""The run's HTML report: one self-contained page (no network needed to open it) built from the
store through DuckDB queries alone, kept in the store at `reports/<run_id>.html`."""
