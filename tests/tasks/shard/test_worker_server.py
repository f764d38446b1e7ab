"""The answer workers' server started ahead of a run, and stopped when its panel will not use it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# In a process of its own: the server is one per process, and this one's tests may use it.
SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from multiprocessing import forkserver
    from roadeval.tasks.shard.worker_server import cool_server, server_warmed, warm_server

    assert "roadeval.tasks.shard.stages" not in sys.modules
    assert warm_server() and server_warmed()
    # Light: starting it imported none of the shard code in this process.
    assert "roadeval.tasks.shard.stages" not in sys.modules
    pid = forkserver._forkserver._forkserver_pid
    time.sleep(0.2)  # in the middle of importing LiteLLM
    began = time.perf_counter()
    cool_server()
    took = time.perf_counter() - began
    print(pid, not server_warmed(), took)
    """
)


# The server is started on 2 cores or more.
needs_two_cores = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores")


def _printed(script: str) -> list[str]:
    """What `script` prints, run in a Python process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.split()


@needs_two_cores
def test_a_server_stopped_in_the_middle_of_its_imports_is_gone_at_once() -> None:
    pid, cooled, took = _printed(SCRIPT)
    assert cooled == "True"
    # Not waited for to finish importing LiteLLM (seconds): killed, then reaped.
    assert float(took) < 1.0
    assert not os.path.exists(f"/proc/{pid}")


FROZEN = textwrap.dedent(
    """
    import gc, multiprocessing
    from roadeval.tasks.shard.worker_server import warm_server

    assert warm_server()
    with multiprocessing.get_context("forkserver").Pool(1) as pool:
        print(pool.apply(gc.isenabled), pool.apply(gc.get_freeze_count), gc.get_freeze_count())
    """
)


@needs_two_cores
def test_a_worker_starts_with_the_servers_imports_frozen_and_its_collector_on() -> None:
    enabled, frozen_in_worker, frozen_here = _printed(FROZEN)
    assert enabled == "True"
    # LiteLLM and the shard code (hundreds of thousands of objects) are out of the collector's
    # reach in a worker; the command's own process froze nothing.
    assert int(frozen_in_worker) > 100_000
    assert frozen_here == "0"


SHADOWED = textwrap.dedent(
    """
    import multiprocessing
    from roadeval.tasks.shard.worker_server import warm_server

    if __name__ == "__main__":
        assert warm_server()
        with multiprocessing.get_context("forkserver").Pool(1) as pool:
            print(pool.apply(eval, ("__import__('sys').modules['litellm'].__file__",)))
    """
)


@needs_two_cores
def test_the_server_imports_what_the_command_would_not_the_current_directorys(
    tmp_path: Path,
) -> None:
    # As `roadeval` runs: a script whose folder is not the current one, which holds a module
    # of the same name as one the server imports (a checkout of roadeval, a stray litellm.py).
    here = tmp_path / "here"
    here.mkdir()
    (here / "litellm.py").write_text("raise SystemExit('the current directory was imported')\n")
    script = tmp_path / "bin" / "command.py"
    script.parent.mkdir()
    script.write_text(SHADOWED)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=here, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import litellm

    assert done.stdout.split() == [litellm.__file__]
