"""The contenders of `bench/gateway_contenders.py`, each a script run in a process of its own."""
