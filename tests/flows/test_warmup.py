"""The background import keeps the warning filters its libraries set on import, even when a
`catch_warnings` in the main thread ends while it imports (the filter list is process-wide)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# The race made certain: the thread starts importing requests once the main thread is inside
# `catch_warnings`, and the main thread leaves it (restoring the list it saved) just before
# requests.adapters, which imports urllib3.contrib.socks and its PySocks notice, after requests
# set its filter.
RACE = textwrap.dedent(
    """
    import importlib.abc, sys, threading, warnings
    from roadeval.flows.run.warmup import import_in_background

    inside, arrived, left = threading.Event(), threading.Event(), threading.Event()

    class Gate(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "requests":
                inside.wait(10)
            if name == "requests.adapters":
                arrived.set()
                left.wait(10)
            return None

    sys.meta_path.insert(0, Gate())
    thread = import_in_background(("requests",))
    with warnings.catch_warnings():
        inside.set()
        arrived.wait(10)
    left.set()
    thread.join()
    assert "requests.adapters" in sys.modules
    """
)


def test_a_filter_set_on_a_background_import_survives_the_main_threads_catch_warnings() -> None:
    pytest.importorskip("requests")
    try:
        import socks  # noqa: F401

        pytest.skip("PySocks is installed: urllib3 has no notice to give")
    except ImportError:
        pass
    done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "SOCKS" not in done.stderr, done.stderr
