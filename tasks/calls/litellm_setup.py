"""LiteLLM, imported at its first use and set up once per process.

Its import takes seconds of one core; a process that sends nothing (a rerun's driver that copies
every answer, or whose few calls go to an answer worker) never pays for it. Its per-call logging
runs only when some LiteLLM callback listens (`completion_task`).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

# LiteLLM's callback lists: while every one is empty, its logging of a call tells nobody.
CALLBACK_LISTS = (
    "callbacks",
    "success_callback",
    "failure_callback",
    "input_callback",
    "service_callback",
    "audit_log_callbacks",
    "_async_success_callback",
    "_async_failure_callback",
    "_async_input_callback",
)


class _Setup:
    lock = threading.Lock()
    done = False
    # LiteLLM's mark of its own internal calls, looked up once (see `completion_task`).
    internal_call: contextvars.ContextVar[bool] | None = None


def ready_litellm() -> Any:
    """The `litellm` module, imported and set up (the built-in baselines' provider registered,
    its debug banner off) the first time any caller in the process needs it."""
    import litellm

    if not _Setup.done:
        with _Setup.lock:
            if not _Setup.done:
                from litellm._internal_context import is_internal_call

                from roadeval.tasks.calls import baseline_provider

                baseline_provider.install()
                _Setup.internal_call = is_internal_call
                litellm.suppress_debug_info = True
                _Setup.done = True
    return litellm


def callbacks_registered(litellm: Any) -> bool:
    """Whether anyone listens to LiteLLM's per-call logging (roadeval itself registers no one)."""
    return any(getattr(litellm, name, None) for name in CALLBACK_LISTS)


def completion_task(litellm: Any, kwargs: dict[str, Any]) -> asyncio.Task[Any]:
    """`litellm.acompletion(**kwargs)` as a task of the running loop. With no callback
    registered it runs as LiteLLM runs its own internal calls, without its success and
    failure logging: that logging queues a handler per call on a worker of the same loop,
    which on a saturated loop falls behind (tens of thousands queued, about 17 KB each, in a
    run of 200,000 baseline calls) and spends CPU on a payload nobody reads. The call's cost
    is priced before that logging (`_hidden_params["response_cost"]`), so costs are kept.
    `litellm` is `ready_litellm()`'s."""
    internal_call = _Setup.internal_call
    assert internal_call is not None, "completion_task before ready_litellm"
    call = litellm.acompletion(**kwargs)
    if callbacks_registered(litellm):
        return asyncio.ensure_future(call)
    context = contextvars.copy_context()
    context.run(internal_call.set, True)
    return asyncio.get_running_loop().create_task(call, context=context)
