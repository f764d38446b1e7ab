"""The process defaults the package sets on import (`roadeval.environment`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Parquet written and read back as a run's landings do: from Arrow's default allocator.
_PROBE = """
import io, json, os
import roadeval
import pyarrow as pa, pyarrow.parquet as pq
buffer = io.BytesIO()
pq.write_table(pa.table({"x": list(range(1000))}), buffer)
pq.read_table(io.BytesIO(buffer.getvalue()))
print(json.dumps({"pool": pa.default_memory_pool().backend_name}), flush=True)
# As the `roadeval` command leaves: pyarrow 26 aborts in about half of its interpreter teardowns
# here ("terminate called without an active exception"), whatever its allocator.
os._exit(0)
"""


def _pool(**env: str) -> object:
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, env={**clean, **env}
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["pool"]


def test_arrows_buffers_come_from_the_c_allocator() -> None:
    # Arrow's default (mimalloc) kept the freed tables of every landed shard: 200 MiB more at
    # 20,000 items. Set before Arrow's first allocation, it holds for Parquet's too.
    assert _pool() == "system"


def test_a_users_own_arrow_allocator_is_kept() -> None:
    assert _pool(ARROW_DEFAULT_MEMORY_POOL="mimalloc") == "mimalloc"


def test_the_collector_is_paused_inside_and_back_after() -> None:
    import gc

    from roadeval.environment import collector_paused

    assert gc.isenabled()
    before = gc.get_freeze_count()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == before
    try:
        with collector_paused(freeze=True):
            made = [[] for _ in range(1000)]
        assert gc.isenabled() and gc.get_freeze_count() >= before + len(made)
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()
