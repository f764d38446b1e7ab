"""LiteLLM, imported at its first use and set up once per process.

Its import takes seconds of one core; a process that sends nothing (a rerun's driver that copies
every answer, or whose few calls go to an answer worker) never pays for it. Its per-call logging
runs only when some LiteLLM callback listens, and it prices a call only when the price is
needed from it (`completion_task`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
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


# Set in a call's own context when its caller prices it from its usage (see `completion_task`).
_PRICED_BY_CALLER: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "roadeval_priced_by_caller", default=False
)


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
                _skip_pricing_for_priced_calls()
                _Setup.internal_call = is_internal_call
                litellm.suppress_debug_info = True
                _Setup.done = True
    return litellm


def callbacks_registered(litellm: Any) -> bool:
    """Whether anyone listens to LiteLLM's per-call logging (roadeval itself registers no one)."""
    return any(getattr(litellm, name, None) for name in CALLBACK_LISTS)


def _skip_pricing_for_priced_calls() -> None:
    """LiteLLM prices every response as it builds it (`_hidden_params["response_cost"]`): for a
    model its map does not hold, a search of the whole map that comes to nothing, a quarter of
    a call's CPU on a fast local server. A call its caller prices itself skips it."""
    from litellm.litellm_core_utils.litellm_logging import Logging

    priced_by_litellm = Logging.response_cost_calculator

    @functools.wraps(priced_by_litellm)
    def response_cost_calculator(self: Any, *args: Any, **kwargs: Any) -> float | None:
        if _PRICED_BY_CALLER.get():
            return None
        return priced_by_litellm(self, *args, **kwargs)

    Logging.response_cost_calculator = response_cost_calculator  # type: ignore[method-assign]


def completion_task(
    litellm: Any, kwargs: dict[str, Any], *, priced_by_caller: bool = False
) -> asyncio.Task[Any]:
    """`litellm.acompletion(**kwargs)` as a task of the running loop. With no callback
    registered it runs as LiteLLM runs its own internal calls, without its success and
    failure logging: that logging queues a handler per call on a worker of the same loop,
    which on a saturated loop falls behind (tens of thousands queued, about 17 KB each, in a
    run of 200,000 baseline calls) and spends CPU on a payload nobody reads. Then, with
    `priced_by_caller` (the caller prices the call from its usage), LiteLLM does not price it
    either; otherwise its price is in `_hidden_params["response_cost"]`. A listener always gets
    LiteLLM's whole logging, price included. `litellm` is `ready_litellm()`'s."""
    internal_call = _Setup.internal_call
    assert internal_call is not None, "completion_task before ready_litellm"
    call = litellm.acompletion(**kwargs)
    if callbacks_registered(litellm):
        return asyncio.ensure_future(call)
    context = contextvars.copy_context()
    context.run(internal_call.set, True)
    context.run(_PRICED_BY_CALLER.set, priced_by_caller)
    return asyncio.get_running_loop().create_task(call, context=context)
