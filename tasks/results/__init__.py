"""What a run lands beyond its shards: items, metrics, suite tables, estimates, report."""
