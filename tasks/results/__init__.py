"""What a run lands and shows beyond its shards: the items, corpus metrics, the suites' own tables, the dry run's estimates, the terminal report."""
