"""The render stage: items' images drawn by their protocol, in process or on Dask."""
