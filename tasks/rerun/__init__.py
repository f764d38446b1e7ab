"""Reruns against a baseline run: its answers and scores read in bulk, the items that changed,
the scores and metrics that moved."""
