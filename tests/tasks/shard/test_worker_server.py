"""The answer workers' server started ahead of a run, and stopped when its panel will not use it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from support.model_server import ModelServer, Reply

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


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the server is started on 2 cores or more")
def test_a_server_stopped_in_the_middle_of_its_imports_is_gone_at_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    pid, cooled, took = done.stdout.split()
    assert cooled == "True"
    # Not waited for to finish importing LiteLLM (seconds): killed, then reaped.
    assert float(took) < 1.0
    assert not os.path.exists(f"/proc/{pid}")


# As an answer worker forked from the server: its preload imported, then a first call.
FIRST_CALL = textwrap.dedent(
    """
    import importlib, sys
    from roadeval.tasks.shard.worker_server import PRELOAD

    for name in PRELOAD:
        importlib.import_module(name)  # every one: a name LiteLLM dropped fails here
    from roadeval.benchmarks.messages import user_message
    from roadeval.tasks.calls.gateway import ModelClient, run_on_gateway
    from roadeval.tasks.requests.model_spec import ModelSpec

    client = ModelClient(ModelSpec(model="openai/first", api_base=sys.argv[1]))
    request = client.request([user_message("Which lane? A or B")])
    before = set(sys.modules)
    outcome = run_on_gateway(client.complete(request))
    assert outcome.final is not None and outcome.final.error_kind is None, outcome.final
    print(" ".join(sorted(m for m in set(sys.modules) - before if m.startswith("litellm"))))
    """
)


def test_the_servers_preload_covers_what_a_first_call_imports(server: ModelServer) -> None:
    """Each worker would otherwise import them on its first call (about 0.3 s)."""
    server.rules["first"] = lambda body, hit: Reply("A")
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL, server.api_base],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], "imported by the first call, not by the preload"
    assert len(server.hits_for("first")) == 1
