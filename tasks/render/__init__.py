"""The render stage: every item's images drawn where its protocol draws them, in process or on a Dask cluster."""
