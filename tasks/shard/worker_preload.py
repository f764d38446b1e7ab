"""What the answer workers' server imports before it forks any (`worker_server.PRELOAD`): LiteLLM
(seconds), then the shard code, with the collector paused and then frozen (`collector_paused`).

LiteLLM's import is the longest step to a run's first model request, and the collector took a
quarter of it; frozen, its objects are never rescanned in a worker, nor their pages written there.
The import leaves about two thousand objects of cyclic garbage, kept rather than spend a third of
a second collecting them on that same path.
"""

from __future__ import annotations

from roadeval.environment import collector_paused

with collector_paused(freeze=True):
    import litellm  # noqa: F401

    import roadeval.tasks.shard.answer_workers  # noqa: F401
